/* test_simulate: `geodes simulate` and `geodes transfer` as a user runs them:
 * JSON fields and their bounds, determinism of the whole command, exit
 * status 2 for usage errors and 1 with a FILE:LINE message for bad input. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs a shell command; returns its exit status, stdout in out (malloc'd)
 * and stderr in errtext (malloc'd). */
static int sh(const char *args, char **out, char **errtext) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s >/tmp/geodes_sim_out.%d 2>/tmp/geodes_sim_err.%d",
           GEODES_BIN, args, (int)getpid(), (int)getpid());
  int st = system(cmd);
  char path[64];
  char **dst[2] = {out, errtext};
  const char *kind[2] = {"out", "err"};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "/tmp/geodes_sim_%s.%d", kind[i], (int)getpid());
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    unlink(path);
    *dst[i] = buf;
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(simulate, json_fields_and_determinism) {
  char *o1, *o2, *e1, *e2;
  cr_assert_eq(sh("simulate worldwide --method dtfm-identity --json", &o1, &e1), 0,
               "%s", e1);
  cr_assert_eq(sh("simulate worldwide --method dtfm-identity --json", &o2, &e2), 0);
  cr_assert_str_eq(o1, o2);
  json_error_t je;
  json_t *j = json_loads(o1, 0, &je);
  cr_assert_not_null(j, "%s", je.text);
  double it = json_number_value(json_object_get(j, "iteration_s"));
  cr_assert_gt(it, 1);
  const char *f[] = {"compute_s", "bubble_s", "comm_s", "dp_sync_s"};
  for (int i = 0; i < 4; i++) {
    json_t *v = json_object_get(j, f[i]);
    cr_assert(json_is_number(v), "%s", f[i]);
    cr_assert(json_number_value(v) >= 0 && json_number_value(v) <= it, "%s", f[i]);
  }
  cr_assert_gt(json_integer_value(json_object_get(j, "events")), 1000);
  cr_assert_str_eq(json_string_value(json_object_get(j, "network_model")), "netem");
  json_decref(j);
  free(o1), free(o2), free(e1), free(e2);
}

Test(simulate, usage_errors_exit_2) {
  const char *bad[] = {"simulate", "simulate worldwide",
                       "simulate worldwide --method random --network ns3",
                       "simulate worldwide --method random --alloc x.json",
                       "simulate worldwide --method random --bogus",
                       "transfer --latency-ms 1 --bytes 5",
                       "transfer --latency-ms x --bandwidth-gbps 1 --bytes 5"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *o, *e;
    cr_assert_eq(sh(bad[i], &o, &e), 2, "%s", bad[i]);
    cr_assert(strstr(e, "--help") != NULL, "%s: %s", bad[i], e);
    free(o), free(e);
  }
  char *o, *e;
  cr_assert_eq(sh("simulate --help", &o, &e), 0);
  cr_assert(strstr(o, "--timeline") != NULL);
  free(o), free(e);
}

Test(simulate, bad_input_exits_1_naming_file_and_line) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/geodes_sim_alloc.%d.json", (int)getpid());
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("{\"pipelines\": [\n  [0, 1],\n  [1, 3]\n]}\n", f);
  fclose(f);
  char args[256], *o, *e;
  snprintf(args, sizeof args, "simulate worldwide --alloc %s", path);
  cr_assert_eq(sh(args, &o, &e), 1);
  char want[80];
  snprintf(want, sizeof want, "%s:4:", path);
  cr_assert(strstr(e, want) != NULL, "%s", e);
  free(o), free(e);
  unlink(path);
  cr_assert_eq(sh("simulate worldwide --method nope", &o, &e), 2);
  cr_assert(strstr(e, "'nope'") != NULL && strstr(e, "gcma") != NULL, "%s", e);
  free(o), free(e);
  cr_assert_eq(sh("simulate worldwide --method random --timeline /nonexistent/t.json",
                  &o, &e), 1);
  cr_assert(strstr(e, "/nonexistent/t.json:") != NULL, "%s", e);
  free(o), free(e);
}

Test(simulate, transfer_json_is_alpha_plus_s_over_beta) {
  char *o, *e;
  cr_assert_eq(sh("transfer --latency-ms 10 --bandwidth-gbps 1 --bytes 67108864 "
                  "--network ideal --json", &o, &e), 0, "%s", e);
  json_t *j = json_loads(o, 0, NULL);
  cr_assert_not_null(j);
  double t = json_number_value(json_object_get(j, "time_s"));
  cr_assert(fabs(t - (0.010 + 67108864 * 8 / 1e9)) < 1e-9, "%.9f", t);
  double tcp = json_number_value(json_object_get(json_object_get(j, "by_network"), "tcp"));
  cr_assert_geq(tcp, t);
  json_decref(j);
  free(o), free(e);
}

static double json_number_of(const char *text, const char *key) {
  json_error_t je;
  json_t *j = json_loads(text, 0, &je);
  cr_assert_not_null(j, "%s", je.text);
  double v = json_number_value(json_object_get(j, key));
  json_decref(j);
  return v;
}

/* A method name means the same placement everywhere (sim/place.c): the
 * greedy allocation that `schedule` prints is the one `predict` scores and
 * `simulate` runs. */
Test(simulate, searched_methods_agree_across_commands) {
  char *o1, *o2, *o3, *e1, *e2, *e3;
  cr_assert_eq(sh("schedule multi-dc --method greedy --json", &o1, &e1), 0, "%s", e1);
  cr_assert_eq(sh("predict multi-dc --method greedy --json", &o2, &e2), 0, "%s", e2);
  cr_assert_eq(sh("simulate multi-dc --method greedy --json", &o3, &e3), 0, "%s", e3);
  double sched = json_number_of(o1, "score_s");
  cr_assert_float_eq(sched, 12.266, 5e-4, "greedy groups each data centre");
  cr_assert_float_eq(json_number_of(o2, "score_s"), sched, 1e-9);
  cr_assert_float_eq(json_number_of(o1, "iteration_s"),
                     json_number_of(o3, "iteration_s"), 1e-9);
  free(o1), free(o2), free(o3), free(e1), free(e2), free(e3);
}
