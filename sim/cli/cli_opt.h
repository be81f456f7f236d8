/* cli_opt: every subcommand's options as data (git's parse_options): a
 * table of entries — name, argument kind, range or names, help line and
 * the variable it sets — from which cli_opt_parse runs the one getopt loop
 * of the front end, checks every value, and prints the --help text's
 * option lines and the usage errors.
 *
 *   cli_opt opts[] = {
 *       CLI_OPT_STRING(0, "alloc", "FILE", &a.alloc, "the allocation"),
 *       CLI_OPT_INT(0, "samples", "N", &a.samples, 2, 100000, "sample size"),
 *       CLI_OPT_HELP(), CLI_OPT_END()};
 *
 * Invariant: a value reaches its variable only after its check passed; the
 * first bad option ends the parse with its message, and --help ends it
 * with the help text (nothing after either is read). An option is given
 * once (under its name or a former name, CLI_OPT_ALIAS: both count) unless
 * it is a LIST, and never with an empty value: either is a usage error
 * naming the option(s). */
#ifndef SIM_CLI_CLI_OPT_H
#define SIM_CLI_CLI_OPT_H

#include <stdbool.h>
#include <stddef.h>

typedef enum cli_opt_kind {
  CLI_OPT_END_,    /* ends a table */
  CLI_OPT_GROUP_,  /* a heading in the help; the entries after it use its
                      label column */
  CLI_OPT_HELP_,   /* --help, -h: prints the help */
  CLI_OPT_ALIAS_,  /* a former name (long_name) of the option named arg:
                      sets that option's variable, as typed */
  CLI_OPT_FLAG_,   /* no argument: *(bool *)value = true */
  CLI_OPT_STRING_, /* *(const char **)value = the argument */
  CLI_OPT_INT_,    /* *(long *)value: an integer in [lo, hi], or with
                      names one of them (names that spell integers) */
  CLI_OPT_REAL_,   /* *(double *)value: a finite number in [lo, hi] (in
                      (lo, hi] when open) */
  CLI_OPT_NAME_,   /* *(const char **)value: one of names */
  CLI_OPT_ENUM_,   /* *(int *)value: the index of one of names, or of also
                      (the index after the last name) */
  CLI_OPT_LIST_,   /* *(cli_opt_list *)value: every use appends its
                      argument (a repeatable option) */
  CLI_OPT_BOOL_    /* *(long *)value: 1 for "true", 0 for "false" */
} cli_opt_kind;

/* What a LIST entry collects: its arguments in the order given (borrowed
 * from argv); items is malloc'ed, the caller frees it. Zero-initialise. */
typedef struct cli_opt_list {
  const char **items;
  size_t n, cap;
} cli_opt_list;

typedef struct cli_opt {
  cli_opt_kind kind;
  int short_name;          /* 'o', or 0 */
  const char *long_name;   /* "layers"; GROUP: its heading */
  /* The argument's name in the help ("N": "--layers N"); a label starting
   * with '-' is the whole left column ("-o FILE"). NULL for a NAME or ENUM:
   * its names joined by '|'. */
  const char *arg;
  const char *help;        /* lines split by '\n'; a leading '\n' puts the
                              first below the label */
  void *value;
  double lo, hi;           /* INT, REAL: the inclusive range */
  bool open;               /* REAL: lo itself excluded */
  const char *const *names;  /* NAME, ENUM: NULL-terminated */
  const char *also;        /* ENUM: one more accepted name, or NULL */
  const char **text;       /* the argument as typed goes here too, if set */
  int width;               /* GROUP: the label column of its entries */
} cli_opt;

/* The entries, type-checked: value must point to the kind's type. */
#define CLI_OPT_PTR_(type, v) ((void *)(1 ? (v) : (type *)0))
#define CLI_OPT_END() {.kind = CLI_OPT_END_}
#define CLI_OPT_GROUP(title, w) \
  {.kind = CLI_OPT_GROUP_, .long_name = (title), .width = (w)}
#define CLI_OPT_HELP()                                            \
  {.kind = CLI_OPT_HELP_, .short_name = 'h', .long_name = "help", \
   .help = "this text"}
/* --old as a former name of the option --now of the same table (given
 * before it in the table or after: the option is looked up by name). */
#define CLI_OPT_ALIAS(old, now) \
  {.kind = CLI_OPT_ALIAS_, .long_name = (old), .arg = (now), .help = ""}
#define CLI_OPT_FLAG(s, l, v, h)                                    \
  {.kind = CLI_OPT_FLAG_, .short_name = (s), .long_name = (l),      \
   .value = CLI_OPT_PTR_(bool, v), .help = (h)}
#define CLI_OPT_STRING(s, l, a, v, h)                                   \
  {.kind = CLI_OPT_STRING_, .short_name = (s), .long_name = (l),        \
   .arg = (a), .value = CLI_OPT_PTR_(const char *, v), .help = (h)}
#define CLI_OPT_INT(s, l, a, v, min, max, h)                            \
  {.kind = CLI_OPT_INT_, .short_name = (s), .long_name = (l), .arg = (a), \
   .value = CLI_OPT_PTR_(long, v), .lo = (double)(min),                 \
   .hi = (double)(max), .help = (h)}
#define CLI_OPT_REAL(s, l, a, v, min, max, h)                             \
  {.kind = CLI_OPT_REAL_, .short_name = (s), .long_name = (l), .arg = (a), \
   .value = CLI_OPT_PTR_(double, v), .lo = (min), .hi = (max),          \
   .help = (h)}
#define CLI_OPT_NAME(s, l, a, v, list, h)                                 \
  {.kind = CLI_OPT_NAME_, .short_name = (s), .long_name = (l), .arg = (a), \
   .value = CLI_OPT_PTR_(const char *, v), .names = (list), .help = (h)}
#define CLI_OPT_ENUM(s, l, a, v, list, extra, h)                          \
  {.kind = CLI_OPT_ENUM_, .short_name = (s), .long_name = (l), .arg = (a), \
   .value = CLI_OPT_PTR_(int, v), .names = (list), .also = (extra),     \
   .help = (h)}

#define CLI_OPT_LIST(s, l, a, v, h)                                   \
  {.kind = CLI_OPT_LIST_, .short_name = (s), .long_name = (l),        \
   .arg = (a), .value = CLI_OPT_PTR_(cli_opt_list, v), .help = (h)}

/* INT and REAL entries that also keep the argument as typed in *t. */
#define CLI_OPT_INT_KEEP(s, l, a, v, min, max, t, h)                      \
  {.kind = CLI_OPT_INT_, .short_name = (s), .long_name = (l), .arg = (a), \
   .value = CLI_OPT_PTR_(long, v), .lo = (double)(min),                 \
   .hi = (double)(max), .text = (t), .help = (h)}
#define CLI_OPT_REAL_KEEP(s, l, a, v, min, max, t, h)                      \
  {.kind = CLI_OPT_REAL_, .short_name = (s), .long_name = (l), .arg = (a), \
   .value = CLI_OPT_PTR_(double, v), .lo = (min), .hi = (max),          \
   .text = (t), .help = (h)}

/* A subcommand as the parser sees it. */
typedef struct cli_opt_command {
  const char *name;    /* in messages: "simulate", "trace check" */
  const char *usage;   /* the help before the option lines */
  int width;           /* the label column of its own option lines */
  int args_min, args_max;  /* positional arguments it takes */
  const char *missing; /* the message when there are fewer */
  const char *extra;   /* ... when more (NULL: "unexpected argument 'X'") */
  void (*more)(void);  /* prints the help after the option lines, from a
                          '\n' (the blank line after them); NULL */
} cli_opt_command;

/* What cli_opt_parse returns besides CLI_OK and CLI_USAGE: --help was
 * given and the help is printed (the command exits 0). */
#define CLI_OPT_HELPED (-1)

/* Parses argv (argv[0] is the subcommand) against opts: sets the variables,
 * checks the positional arguments' count and points *args at them (*nargs
 * of them). Returns CLI_OK, CLI_USAGE (the message is printed) or
 * CLI_OPT_HELPED (the help is printed on stdout). */
int cli_opt_parse(const cli_opt_command *c, const cli_opt *opts, int argc,
                  char **argv, char ***args, int *nargs);

/* The help text of c with opts, on stdout (what --help prints). */
void cli_opt_help(const cli_opt_command *c, const cli_opt *opts);

/* While on, cli_opt_help writes the help as Markdown instead (geodes help
 * --markdown): the usage text fenced, each group of options a table of
 * option, accepted values (range or names) and help, the text after the
 * options (more) fenced. */
void cli_opt_help_markdown(bool on);

#endif
