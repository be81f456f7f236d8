/* test_cli_opt: the option table's rules, walked over every option of every
 * command as `geodes help --markdown` lists them (the tables themselves):
 * an option given twice is a usage error naming it, unless the table marks
 * it repeatable; an option and its former name (an alias) given together
 * are one option given twice, either way round; an empty value is a usage
 * error naming the option (issue 35, cause 11). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

TestSuite(cli_opt, .init = support_dir_make, .fini = support_dir_remove);

/* One option row of the reference: its command ("trace check"), the name
 * it is given by ("--sockets", "-o"), whether it takes a value, a value it
 * accepts, and what it is a former name of ("" when none). */
typedef struct row {
  char cmd[32], name[48], value[256], alias_of[48];
  bool arg, repeatable;
} row;

/* The text between the first '`' at or after p and the next "` |": the
 * label, "\|" unescaped. */
static void cell_code(const char *p, char *out, size_t size) {
  const char *a = strchr(p, '`');
  cr_assert_not_null(a);
  size_t k = 0;
  for (a++; *a && strncmp(a, "` |", 3) && k + 1 < size; a++) {
    if (a[0] == '\\' && a[1] == '|') a++;
    out[k++] = *a;
  }
  out[k] = '\0';
}

/* A value the accepts column allows: the first name, the middle of a
 * range, or a file in the test's folder (a file, a list: anything but
 * empty; were a refusal missing, nothing is written outside the folder). */
static void value_of(const char *accepts, char *out, size_t size) {
  double lo, hi;
  const char *tick = strchr(accepts, '`');
  if (tick && tick < strstr(accepts, " |")) {
    const char *end = strchr(tick + 1, '`');
    snprintf(out, size, "%.*s", (int)(end - tick - 1), tick + 1);
  } else if (sscanf(accepts, "%lf to %lf", &lo, &hi) == 2) {
    double mid = hi > 1e300 ? lo + 1 : lo + (hi - lo) / 2;
    if (lo == (long)lo && hi == (long)hi) mid = (double)(long)mid;
    snprintf(out, size, "%.17g", mid);
  } else {
    snprintf(out, size, "%s", support_path("x"));
  }
}

/* Every option row of `geodes help --markdown` into rows (*n of them). */
static row *read_rows(int *n) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "help --markdown"), 0, "%s", r.err);
  row *rows = calloc(1000, sizeof *rows);
  char cmd[32] = "";
  *n = 0;
  for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
    if (!strncmp(line, "## geodes ", 10) || !strncmp(line, "### geodes ", 11)) {
      snprintf(cmd, sizeof cmd, "%s", strstr(line, "geodes ") + 7);
      continue;
    }
    if (strncmp(line, "| `", 3)) continue;
    row *w = &rows[(*n)++];
    cr_assert_lt(*n, 1000);
    char label[160];
    cell_code(line, label, sizeof label);
    const char *name = label[1] != '-' && strstr(label, ", --")
                           ? strstr(label, ", --") + 2 : label;
    size_t len = strcspn(name, " ");
    snprintf(w->cmd, sizeof w->cmd, "%s", cmd);
    snprintf(w->name, sizeof w->name, "%.*s", (int)len, name);
    w->arg = name[len] == ' ';
    const char *accepts = strstr(line, "` | ") + 4;
    w->repeatable = !strncmp(accepts, "repeatable |", 12);
    value_of(accepts, w->value, sizeof w->value);
    const char *former = strstr(line, "'s former name |");
    if (former && strstr(accepts, " | `--") &&
        strstr(accepts, " | `--") + 3 < former)
      snprintf(w->alias_of, sizeof w->alias_of, "%.*s",
               (int)(former - strstr(accepts, " | `--") - 5),
               strstr(accepts, " | `--") + 4);
  }
  support_run_clear(&r);
  return rows;
}

/* The row of cmd named name. */
static const row *find(const row *rows, int n, const char *cmd,
                       const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(rows[i].cmd, cmd) && !strcmp(rows[i].name, name))
      return &rows[i];
  cr_assert_fail("%s has no option %s", cmd, name);
  return NULL;
}

/* "OPT VALUE" (or "OPT" for a flag) of w, as a shell word or two. */
static void use(const row *w, const row *as, char *out, size_t size) {
  snprintf(out, size, "%s%s%s%s", as->name, w->arg ? " '" : "",
           w->arg ? w->value : "", w->arg ? "'" : "");
}

/* The usage error: exit 2, "geodes CMD: " and each word of want. */
static void refused(support_run *r, const char *cmd, const char *line,
                    const char *a, const char *b) {
  cr_expect_eq(r->status, 2, "%s: %s", line, r->err);
  char head[64];
  snprintf(head, sizeof head, "geodes %s: ", cmd);
  cr_expect(strstr(r->err, head), "%s: %s", line, r->err);
  cr_expect(strstr(r->err, a) && (!b || strstr(r->err, b)),
            "%s: '%s' in %s", line, a, r->err);
}

Test(cli_opt, every_option_once_with_its_aliases_and_never_empty) {
  int n, walked = 0, aliases = 0, lists = 0;
  row *rows = read_rows(&n);
  cr_assert_gt(n, 200, "the reference lists the options (%d)", n);
  support_run r = {0};
  for (int i = 0; i < n; i++) {
    const row *w = &rows[i];
    if (!strcmp(w->name, "--help")) continue; /* it ends the parse */
    const row *t = w->alias_of[0] ? find(rows, n, w->cmd, w->alias_of) : w;
    char once[320], line[1024];
    row typed = *t;
    use(&typed, w, once, sizeof once);
    snprintf(line, sizeof line, "%s %s %s", w->cmd, once, once);
    support_geodes(&r, "%s", line);
    if (t->repeatable) {
      cr_expect(!strstr(r.err, "given twice"), "%s: %s", line, r.err);
      lists++;
    } else {
      refused(&r, w->cmd, line, "given twice", w->name);
    }
    if (w->alias_of[0] && !t->repeatable) {
      char other[320];
      use(&typed, t, other, sizeof other);
      snprintf(line, sizeof line, "%s %s %s", w->cmd, other, once);
      support_geodes(&r, "%s", line);
      refused(&r, w->cmd, line, "are one option (given twice)", w->name);
      snprintf(line, sizeof line, "%s %s %s", w->cmd, once, other);
      support_geodes(&r, "%s", line);
      refused(&r, w->cmd, line, "are one option (given twice)", t->name);
      aliases++;
    }
    if (t->arg) {
      snprintf(line, sizeof line, "%s %s ''", w->cmd, w->name);
      support_geodes(&r, "%s", line);
      refused(&r, w->cmd, line, ": an empty value", w->name);
    }
    walked++;
  }
  cr_expect_gt(aliases, 5, "former names walked: %d", aliases);
  cr_expect_gt(lists, 1, "repeatable options walked: %d", lists);
  cr_log_info("%d options, %d former names, %d repeatable", walked, aliases,
              lists);
  support_run_clear(&r);
  free(rows);
}

/* The cases of the issue, with their messages whole. */
Test(cli_opt, the_issues_cases) {
  static const struct { const char *args, *msg; } cases[] = {
      {"simulate worldwide --network-model tcp --network netem",
       "geodes simulate: --network-model and --network are one option "
       "(given twice)\n"},
      {"simulate worldwide --network netem --network-model tcp",
       "geodes simulate: --network and --network-model are one option "
       "(given twice)\n"},
      {"simulate worldwide --sockets 2 --sockets 3",
       "geodes simulate: --sockets given twice\n"},
      {"simulate worldwide --sockets=2 --sockets 2",
       "geodes simulate: --sockets given twice\n"},
      {"simulate worldwide --alloc ''",
       "geodes simulate: --alloc: an empty value\n"},
      {"simulate worldwide --alloc=", "geodes simulate: --alloc: an empty "
       "value\n"},
      {"calibrate -o - -o -",
       "geodes calibrate: -o/--output given twice\n"},
      {"schedule worldwide --dp-algo auto --dp-algo ring",
       "geodes schedule: --dp-algo given twice\n"},
      {"schedule worldwide --dp-algo=auto --dp-algo auto",
       "geodes schedule: --dp-algo given twice\n"},
      {"explain worldwide --what-if ''",
       "geodes explain: --what-if: an empty value\n"}};
  support_run r = {0};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cr_expect_eq(support_geodes(&r, "%s", cases[i].args), 2, "%s: %s",
                 cases[i].args, r.err);
    cr_expect(!strncmp(r.err, cases[i].msg, strlen(cases[i].msg)),
              "%s: %s", cases[i].args, r.err);
  }
  support_run_clear(&r);
}
