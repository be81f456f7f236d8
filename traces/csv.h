/* csv: the text layer every CSV file of geodes shares (network traces,
 * fault traces, measurements, link statistics): records in file order,
 * "# key: value" provenance comments, comma-separated fields quoted as RFC
 * 4180 says and exact decimal numbers, each failure worded "NAME:LINE:
 * message" once, here; and the one writer of a field and of a comment.
 * Invariant: a reader hands out each record once, in order, with the number
 * of its first line, already checked (no NUL byte, valid UTF-8, quotes
 * closed, a UTF-8 BOM dropped on line 1) and trimmed of blanks. A record is
 * one line unless a quoted field holds a line break; a line whose first
 * character is '#' is a comment, quotes in it plain text. */
#ifndef TRACES_CSV_H
#define TRACES_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"

/* Bytes of a bad field echoed in a message; CSV_SHOW(s, n) expands to the
 * three printf arguments of "%.*s%s" (cut at a character boundary, "..."
 * when cut). */
#define CSV_SHOW_MAX 40
int csv_show_len(const char *s, size_t n);
#define CSV_SHOW(s, n) csv_show_len(s, n), (s), ((n) > CSV_SHOW_MAX ? "..." : "")

typedef struct csv_reader {
  const char *name;  /* the file as messages name it; borrowed */
  const char *p, *end;
  int line;          /* the first line of the record last handed out (0
                        before the first) */
  int lines;         /* lines read so far */
  bool any_text;     /* some line so far held more than blanks */
  char *buf;         /* csv_split's unquoted fields (owned) */
  size_t cap;
} csv_reader;

/* A reader over text[0 .. len) (need not be NUL-terminated), naming name;
 * csv_reader_free releases what it holds. */
void csv_reader_init(csv_reader *r, const char *text, size_t len,
                     const char *name);
void csv_reader_free(csv_reader *r);

/* The next record, trimmed, into *s and *n (it may be empty). Returns 1, 0
 * at the end of the text, or ERR_PARSE with e filled ("NAME:LINE: NUL byte",
 * "invalid UTF-8 (byte 0x.. at column N)", a quote not closed or text after
 * a closing quote). */
int csv_next(csv_reader *r, const char **s, size_t *n, err *e);

/* The line of a comment. A line beginning with '#' is a comment; it is a
 * provenance comment "# key: value" when a key of letters, digits, '_',
 * '-' or '.' is followed by ':'. Returns true and sets the key and the
 * trimmed value (spans into s); false for free text. */
bool csv_comment_split(const char *s, size_t n, const char **key, size_t *keyn,
                 const char **value, size_t *valuen);

/* One "# key: value" kept with what it read (both owned). */
typedef struct csv_comment {
  char *key, *value;
} csv_comment;

/* Appends a copy of the comment to *v (*n of *cap), growing it. */
void csv_comment_add(csv_comment **v, size_t *n, size_t *cap, const char *key,
                     size_t keyn, const char *value, size_t valuen);

/* Frees n comments and the array; NULL is fine. */
void csv_comments_free(csv_comment *v, size_t n);

/* Splits the record s[0 .. n) (as csv_next gave it) at the commas outside
 * quotes into at most max fields (f[k], fn[k]): blanks around a field are
 * trimmed, a quoted field is its text between the quotes with each "" read
 * as one quote (kept in r, valid until r's next csv_split). Returns how
 * many fields the record has, which may exceed max. */
int csv_split(csv_reader *r, const char *s, size_t n, const char **f,
              size_t *fn, int max);

/* A table of fixed columns: after '#' comments and blank records, the
 * first record must be header exactly ("NAME:LINE: expected the header
 * 'HEADER'"), and each later one goes to row (its reader, whose line is
 * the record's, and the record); at least one must ("NAME:LINE: no
 * rows"). ERR_OK, or the first error (row's, or the reader's). */
typedef int (*csv_row_fn)(void *ctx, csv_reader *rd, const char *s, size_t n,
                          err *e);
int csv_table(const char *text, size_t len, const char *name,
              const char *header, csv_row_fn row, void *ctx, err *e);

/* ---- writing ---- */

/* s as one field to f: as it is, or in double quotes with each quote
 * doubled (RFC 4180) when it holds a comma, a quote or a line break, or
 * when csv_next would read it otherwise (blanks at either end, a '#' or
 * a byte order mark first). 0, or EOF when a write failed. */
int csv_write_field(FILE *f, const char *s);

/* "# key: value" and a line break to f, each line break inside value
 * written as a blank (a comment is one line). 0, or EOF. */
int csv_write_comment(FILE *f, const char *key, const char *value);

/* Number parsing: OK or why not, worded by csv_num_what. */
enum { CSV_NUM_OK, CSV_NUM_SYNTAX, CSV_NUM_NONFINITE, CSV_NUM_NEGATIVE,
       CSV_NUM_OVERFLOW };

/* "is not a number", "is not a finite number", "is negative", "is out of
 * range" (for a message "FIELD: 'TEXT' WHAT"); "" for CSV_NUM_OK. */
const char *csv_num_what(int rc);

/* ERR_PARSE for a syntax error, ERR_RANGE for any other failure. */
int csv_num_err(int rc);

/* Seconds s[0 .. n) as integer nanoseconds, exactly, rounded to nearest:
 * [+-]digits[.digits][e[+-]digits]. NEGATIVE for a value below zero,
 * NONFINITE for nan/inf/infinity (any case), OVERFLOW beyond INT64_MAX. */
int csv_parse_ns(const char *s, size_t n, int64_t *out);

/* A row's t_s field s[0 .. n) at file:line as integer nanoseconds in *t:
 * a number, within int64 nanoseconds, and not before *prev (the previous
 * row's; NULL for the first row): rows are sorted by time. ERR_OK, or e
 * filled with "FILE:LINE: t_s: ..." as every CSV file of geodes words it. */
int csv_time_field(const char *file, int line, const char *s, size_t n,
                   const int64_t *prev, int64_t *t, err *e);

/* A finite double from s[0 .. n) in the same syntax (strtod's rounding);
 * NONFINITE for nan/inf, OVERFLOW when it exceeds the double range. The
 * sign is kept: the caller decides whether a negative value is allowed. */
int csv_parse_double(const char *s, size_t n, double *out);

/* True when s[0 .. n) is "inf" or "infinity" (any case, no sign). */
bool csv_is_inf(const char *s, size_t n);

#endif
