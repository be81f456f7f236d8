/* cli_opt: the one getopt loop of the front end, the checks of every
 * option's value and the option lines of every --help, all read from the
 * subcommand's table (see cli_opt.h).
 * Invariant: an entry's getopt_long code is CODE_BASE + its index in the
 * table, or its short name; every message names the option as typed
 * (argv), and names the command as the user does ("geodes CMD: ..."). */
#include "sim/cli/cli_opt.h"

#include <assert.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/names.h"
#include "sim/cli/cli_parse.h"

#define CODE_BASE 1000 /* above every character getopt_long returns */
#define NAMES_MAX 16   /* names of one NAME or ENUM entry, "also" included */

static bool is_option(const cli_opt *o) {
  return o->kind != CLI_OPT_END_ && o->kind != CLI_OPT_GROUP_;
}

/* The entry an alias stands for (o itself when o is not an alias). */
static const cli_opt *target(const cli_opt *opts, const cli_opt *o) {
  if (o->kind != CLI_OPT_ALIAS_) return o;
  for (const cli_opt *t = opts; t->kind != CLI_OPT_END_; t++)
    if (t->kind != CLI_OPT_ALIAS_ && t->kind != CLI_OPT_GROUP_ &&
        strcmp(t->long_name, o->arg) == 0)
      return t;
  assert(!"an alias names an option of its table");
  return o;
}

static bool takes_argument(const cli_opt *o) {
  return o->kind >= CLI_OPT_STRING_;
}

static int count(const cli_opt *opts) {
  int n = 0;
  while (opts[n].kind != CLI_OPT_END_) n++;
  return n;
}

/* getopt_long's view of opts: the long options (NULL-terminated, for
 * free()) and the short ones into shorts (":h..." — a leading ':' reports a
 * missing argument as ':'). */
static struct option *getopt_tables(const cli_opt *opts, int n, char *shorts,
                                    size_t size) {
  struct option *lo = mem_calloc((size_t)n + 1, sizeof *lo);
  size_t at = 0;
  int k = 0;
  (void)size; /* checked by the assert below */
  shorts[at++] = ':';
  for (int i = 0; i < n; i++) {
    const cli_opt *o = &opts[i];
    if (!is_option(o)) continue;
    lo[k++] = (struct option){.name = o->long_name,
                              .has_arg = takes_argument(target(opts, o))
                                             ? required_argument
                                             : no_argument,
                              .val = CODE_BASE + i};
    assert(at + 3 < size && "too many short options");
    if (o->short_name) shorts[at++] = (char)o->short_name;
    if (o->short_name && takes_argument(o)) shorts[at++] = ':';
  }
  shorts[at] = '\0';
  return lo;
}

/* The index of the entry getopt_long's code c stands for, or -1. */
static int entry_of(const cli_opt *opts, int n, int c) {
  if (c >= CODE_BASE && c < CODE_BASE + n) return c - CODE_BASE;
  for (int i = 0; i < n; i++)
    if (is_option(&opts[i]) && opts[i].short_name == c) return i;
  return -1;
}

/* o's names and its extra name, NULL-terminated, into all[NAMES_MAX + 1]. */
static void all_names(const cli_opt *o, const char **all) {
  int n = names_count(o->names);
  assert(n + 1 <= NAMES_MAX);
  memcpy(all, o->names, (size_t)n * sizeof *all);
  all[n] = o->also;
  all[n + 1] = NULL;
}

/* A NAME or ENUM argument: one of o's names, or "--opt is a, b or c". */
static bool set_name(const char *cmd, const char *opt, const cli_opt *o,
                     const char *arg) {
  const char *all[NAMES_MAX + 1];
  all_names(o, all);
  int i = names_find(all, arg);
  if (i < 0) {
    char known[256];
    names_join(all, ", ", " or ", known, sizeof known);
    cli_usage_error(cmd, "%s is %s, not '%s'", opt, known, arg);
    return false;
  }
  if (o->kind == CLI_OPT_NAME_) *(const char **)o->value = arg;
  else *(int *)o->value = i;
  return true;
}

/* An INT with names (widths: "16", "8") or a BOOL: one of the names, as
 * the integer it spells, or 1 for "true" and 0 for "false". */
static bool set_named_number(const char *cmd, const char *opt,
                             const cli_opt *o, const char *arg) {
  static const char *const truth[] = {"true", "false", NULL};
  bool boolean = o->kind == CLI_OPT_BOOL_;
  int i = -1;
  cli_opt name = *o;
  name.kind = CLI_OPT_ENUM_, name.value = &i;
  if (boolean) name.names = truth;
  if (!set_name(cmd, opt, &name, arg)) return false;
  *(long *)o->value = boolean ? i == 0 : strtol(name.names[i], NULL, 10);
  return true;
}

/* Checks arg against o and sets o's variable: true, or false with the
 * usage message printed (the variable untouched). opt is the option as
 * the user named it (an alias's own name). */
static bool set_value(const char *cmd, const char *opt, const cli_opt *o,
                      const char *arg) {
  bool ok = true;
  switch (o->kind) {
    case CLI_OPT_FLAG_: *(bool *)o->value = true; break;
    case CLI_OPT_STRING_: *(const char **)o->value = arg; break;
    case CLI_OPT_INT_:
      ok = o->names ? set_named_number(cmd, opt, o, arg)
                    : cli_parse_int(cmd, opt, arg, (long)o->lo, (long)o->hi,
                                    o->value);
      break;
    case CLI_OPT_REAL_:
      ok = cli_parse_real(cmd, opt, arg, o->lo, o->hi, o->open, o->value);
      break;
    case CLI_OPT_NAME_:
    case CLI_OPT_ENUM_: ok = set_name(cmd, opt, o, arg); break;
    case CLI_OPT_LIST_: {
      cli_opt_list *l = o->value;
      mem_grow((void **)&l->items, &l->cap, l->n + 1, sizeof *l->items);
      l->items[l->n++] = arg;
      break;
    }
    case CLI_OPT_BOOL_: ok = set_named_number(cmd, opt, o, arg); break;
    case CLI_OPT_END_:
    case CLI_OPT_GROUP_:
    case CLI_OPT_HELP_:
    case CLI_OPT_ALIAS_: assert(!"not a value option"); break;
  }
  if (ok && o->text) *o->text = arg;
  return ok;
}

/* Entry o as messages name it: "--name", "-o/--output" with a short name. */
static void name_of(const cli_opt *o, char *buf, size_t size) {
  if (o->short_name) snprintf(buf, size, "-%c/--%s", o->short_name,
                              o->long_name);
  else snprintf(buf, size, "--%s", o->long_name);
}

/* One code of getopt_long: CLI_OK, CLI_USAGE or CLI_OPT_HELPED. given[t]
 * is 1 + the entry (typed) that set option t, 0 while it is unset: an
 * option is set once, under its name or an alias's, unless it is a LIST
 * (repeatable); a value is never empty. */
static int handle(const cli_opt_command *c, const cli_opt *opts, int n,
                  int code, char **argv, int *given) {
  if (code == ':')
    return cli_usage_error(c->name, "%s needs an argument", argv[optind - 1]);
  int i = entry_of(opts, n, code);
  if (i < 0)
    return cli_usage_error(c->name, "unknown option '%s'", argv[optind - 1]);
  const cli_opt *o = target(opts, &opts[i]);
  if (o->kind == CLI_OPT_HELP_) return CLI_OPT_HELPED;
  char opt[64], first[64];
  name_of(&opts[i], opt, sizeof opt);
  int t = (int)(o - opts);
  if (given[t] && o->kind != CLI_OPT_LIST_) {
    name_of(&opts[given[t] - 1], first, sizeof first);
    if (given[t] - 1 == i)
      return cli_usage_error(c->name, "%s given twice", opt);
    return cli_usage_error(c->name, "%s and %s are one option (given twice)",
                           first, opt);
  }
  given[t] = i + 1;
  if (takes_argument(o) && optarg && !*optarg)
    return cli_usage_error(c->name, "%s: an empty value", opt);
  return set_value(c->name, opt, o, optarg) ? CLI_OK : CLI_USAGE;
}

/* The positional arguments: between args_min and args_max of them. */
static int positional(const cli_opt_command *c, int argc, char **argv,
                      char ***args, int *nargs) {
  int k = argc - optind;
  if (k < c->args_min) return cli_usage_error(c->name, "%s", c->missing);
  if (k > c->args_max && c->extra)
    return cli_usage_error(c->name, "%s", c->extra);
  if (k > c->args_max)
    return cli_usage_error(c->name, "unexpected argument '%s'",
                           argv[optind + c->args_max]);
  *args = argv + optind;
  *nargs = k;
  return CLI_OK;
}

int cli_opt_parse(const cli_opt_command *c, const cli_opt *opts, int argc,
                  char **argv, char ***args, int *nargs) {
  int n = count(opts), rc = CLI_OK, code;
  char shorts[64];
  struct option *lo = getopt_tables(opts, n, shorts, sizeof shorts);
  int *given = mem_calloc((size_t)n + 1, sizeof *given);
  optind = 1;
  opterr = 0;
  while (rc == CLI_OK &&
         (code = getopt_long(argc, argv, shorts, lo, NULL)) != -1)
    rc = handle(c, opts, n, code, argv, given);
  free(given);
  free(lo);
  if (rc == CLI_OPT_HELPED) cli_opt_help(c, opts);
  return rc == CLI_OK ? positional(c, argc, argv, args, nargs) : rc;
}

/* The left column of o's help line: "--layers N", "--schedule a|b". */
static void label_of(const cli_opt *o, char *buf, size_t size) {
  if (o->arg && o->arg[0] == '-') {
    snprintf(buf, size, "%s", o->arg);
    return;
  }
  char names[128] = "";
  if (!o->arg && o->names) names_join(o->names, "|", "|", names, sizeof names);
  if (!o->arg && o->kind == CLI_OPT_BOOL_)
    snprintf(names, sizeof names, "true|false");
  const char *arg = o->arg ? o->arg : names;
  int k = snprintf(buf, size, "--%s%s%s", o->long_name, *arg ? " " : "", arg);
  assert(k >= 0 && (size_t)k < size && "a label fits its column");
  (void)k;
}

/* "  LABEL  help", the help's lines below each other at column width + 2
 * (a label as wide as the column is followed by two spaces). */
static void print_line(const cli_opt *o, int width) {
  if (o->kind == CLI_OPT_ALIAS_) {
    char label[64];
    snprintf(label, sizeof label, "--%s", o->long_name);
    int n = (int)strlen(label);
    printf("  %s%*s--%s's former name\n", label, n < width ? width - n : 2, "",
           o->arg);
    return;
  }
  char label[128];
  label_of(o, label, sizeof label);
  int n = (int)strlen(label);
  const char *h = o->help;
  printf("  %s", label);
  if (*h == '\n') printf("\n%*s", width + 2, ""), h++;
  else printf("%*s", n < width ? width - n : 2, "");
  for (; *h; h++) {
    putchar(*h);
    if (*h == '\n') printf("%*s", width + 2, "");
  }
  putchar('\n');
}

/* cli_opt_help writes Markdown (geodes help --markdown) while set. */
static bool markdown;

void cli_opt_help_markdown(bool on) { markdown = on; }

/* s as one cell of a Markdown table: its lines joined by spaces, every '|'
 * escaped (also inside a code span, where GitHub reads "\|" as '|'), and
 * in prose '*' and '<' too, which would start emphasis or a tag. */
static void md_cell(const char *s, bool prose) {
  for (const char *p = s; *p; p++) {
    if (*p == '\n') {
      if (p != s) putchar(' ');
      continue;
    }
    if (*p == '|' || (prose && (*p == '*' || *p == '<'))) putchar('\\');
    putchar(*p);
  }
}

/* The values o accepts: an integer or a number in its range, or its names. */
static void md_accepts(const cli_opt *o) {
  switch (o->kind) {
    case CLI_OPT_INT_:
      if (!o->names) {
        printf("%.0f to %.0f", o->lo, o->hi);
        break;
      }
      for (int i = 0; o->names[i]; i++)
        printf("%s`%s`", i == 0 ? "" : o->names[i + 1] ? ", " : " or ",
               o->names[i]);
      break;
    case CLI_OPT_REAL_: printf("%g to %g", o->lo, o->hi); break;
    case CLI_OPT_NAME_:
    case CLI_OPT_ENUM_: {
      const char *all[NAMES_MAX + 1];
      all_names(o, all);
      for (int i = 0; all[i]; i++)
        printf("%s`%s`", i == 0 ? "" : all[i + 1] ? ", " : " or ", all[i]);
      break;
    }
    case CLI_OPT_BOOL_: printf("`true` or `false`"); break;
    case CLI_OPT_LIST_: printf("repeatable"); break;
    case CLI_OPT_END_:
    case CLI_OPT_GROUP_:
    case CLI_OPT_HELP_:
    case CLI_OPT_ALIAS_:
    case CLI_OPT_FLAG_:
    case CLI_OPT_STRING_: break;
  }
}

/* One row of the option table: | `label` | accepts | help |. */
static void md_row(const cli_opt *opts, const cli_opt *o) {
  char label[128];
  if (o->kind == CLI_OPT_ALIAS_)
    snprintf(label, sizeof label, "--%s", o->long_name);
  else
    label_of(o, label, sizeof label);
  fputs("| `", stdout);
  md_cell(label, false);
  fputs("` | ", stdout);
  md_accepts(target(opts, o));
  fputs(" | ", stdout);
  if (o->kind == CLI_OPT_ALIAS_) printf("`--%s`'s former name", o->arg);
  else md_cell(o->help, true);
  fputs(" |\n", stdout);
}

/* The help of c as Markdown: its usage text in a fenced block, each group
 * of options a table under its heading, the text after them fenced. */
static void help_markdown(const cli_opt_command *c, const cli_opt *opts) {
  size_t n = strlen(c->usage);
  while (n > 0 && c->usage[n - 1] == '\n') n--;
  printf("```text\n%.*s\n```\n", (int)n, c->usage);
  bool table = false;
  for (const cli_opt *o = opts; o->kind != CLI_OPT_END_; o++) {
    if (o->kind == CLI_OPT_GROUP_) {
      printf("\n%s\n", o->long_name);
      table = false;
      continue;
    }
    if (!table) fputs("\n| option | accepts | what it does |\n|---|---|---|\n",
                      stdout);
    table = true;
    md_row(opts, o);
  }
  if (!c->more) return;
  fputs("\n```text", stdout);
  c->more();
  fputs("```\n", stdout);
}

void cli_opt_help(const cli_opt_command *c, const cli_opt *opts) {
  if (markdown) {
    help_markdown(c, opts);
    return;
  }
  fputs(c->usage, stdout);
  int width = c->width;
  for (const cli_opt *o = opts; o->kind != CLI_OPT_END_; o++) {
    if (o->kind == CLI_OPT_GROUP_) {
      printf("\n%s\n", o->long_name);
      width = o->width;
    } else {
      print_line(o, width);
    }
  }
  if (c->more) c->more();
}
