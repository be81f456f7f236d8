/* test_scenario_bounds: the scenario loader's limits against the command
 * line's (seed, layers), a valid scenario at a path long enough to have
 * overflowed the synthetic uniform trace, and the lines that checks made
 * after loading cite. test_scenario.c holds the format itself. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/spec.h"
#include "models/spec_workload.h"
#include "tests/support.h"
#include "traces/scenario.h"

TestSuite(scenario_bounds, .init = support_dir_make,
          .fini = support_dir_remove);

static const char uniform[] =
    "{\"name\": \"u\",\n"
    " \"sites\": [{\"name\": \"a\", \"devices\": 4}],\n"
    " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1},\n"
    " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 8,\n"
    "              \"micro_batch\": 1, \"stages\": 2, \"replicas\": 2}}\n";

/* A folder path of about n characters under the test folder. */
static const char *long_folder(size_t n) {
  char name[64];
  const char *dir = support_dir();
  size_t len = strlen(dir);
  char *path = malloc(len + n + 64);
  strcpy(path, dir);
  for (int i = 0; strlen(path) < len + n; i++) {
    snprintf(name, sizeof name, "/%040d", i);
    strcat(path, name);
    mkdir(path, 0700);
  }
  const char *out = support_path("%s", path + len + 1);
  free(path);
  return out;
}

/* Before the fix a path of ~177 characters or more overflowed the 256-byte
 * buffer of the synthetic "*,*" trace: ASan's stack-buffer-overflow, or in
 * Release a valid file rejected as binary. */
Test(scenario_bounds, a_long_path_loads) {
  for (size_t n = 150; n <= 900; n += 250) {
    char file[2048];
    snprintf(file, sizeof file, "%s/scenario.json", long_folder(n));
    support_write_file(file, uniform);
    err e = {0};
    scenario *s = scenario_load(file, &e);
    cr_assert_not_null(s, "%zu characters: %s", strlen(file), e.msg);
    const char *src = trace_comment(s->network, "source");
    cr_expect(src && strstr(src, file), "source '%s'", src ? src : "");
    trace_value v = scenario_link(s, 0, 3, 0);
    cr_expect_eq(v.latency_ms, 10);
    cr_expect_eq(v.bandwidth_gbps, 1);
    scenario_free(s);
  }
}

/* uniform with the first from replaced by to, written to NAME. */
static const char *write_edit(const char *name, const char *from,
                              const char *to) {
  const char *p = strstr(uniform, from);
  cr_assert_not_null(p, "'%s' not in the text", from);
  char text[2048];
  snprintf(text, sizeof text, "%.*s%s%s", (int)(p - uniform), uniform, to,
           p + strlen(from));
  return support_write_file(support_path("%s", name), text);
}

/* The error of loading path: code and a message starting "PATH:LINE: "
 * and naming field. */
static void expect_refused(const char *path, int code, int line,
                           const char *field) {
  err e = {0};
  scenario *s = scenario_load(path, &e);
  cr_assert_null(s, "accepted (want %s refused)", field);
  char prefix[600];
  snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
  cr_expect_eq(e.code, code, "%s", e.msg);
  cr_expect(strncmp(e.msg, prefix, strlen(prefix)) == 0 &&
                strstr(e.msg, field),
            "'%s' wants '%s' and %s", e.msg, prefix, field);
}

/* Before the fix a seed of 2^32 + 1 loaded and placed devices exactly as
 * seed 1 (mt19937 keeps 32 bits); now the file takes what --seed takes. */
Test(scenario_bounds, seed_is_capped_as_the_command_line_caps_it) {
  expect_refused(write_edit("s1.json", "\"name\": \"u\",",
                            "\"name\": \"u\", \"seed\": 4294967297,"),
                 ERR_RANGE, 1, "seed");
  const char *ok = write_edit("s2.json", "\"name\": \"u\",",
                              "\"name\": \"u\", \"seed\": 2147483647,");
  scenario *s = support_scenario(ok);
  cr_expect_eq(s->seed, SCENARIO_MAX_SEED);
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.seed = SCENARIO_MAX_SEED + 1L;
  err e = {0};
  cr_expect_eq(scenario_apply(s, &k, &e), ERR_RANGE, "%s", e.msg);
  cr_expect_eq(s->seed, SCENARIO_MAX_SEED, "changed by a refused knob");
  scenario_free(s);
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "simulate '%s' --method random --seed "
                              "2147483648", ok), 2, "%s", r.err);
  support_run_clear(&r);
}

/* The scenario's layers took up to 2^31 - 1 where --layers and a sweep's
 * layers stop at 100,000; all three now take exactly the same range. */
Test(scenario_bounds, layers_bound_equals_the_cli_and_the_sweep) {
  expect_refused(write_edit("l1.json", "\"layers\": 4", "\"layers\": 100001"),
                 ERR_RANGE, 4, "workload.layers");
  scenario_free(support_scenario(
      write_edit("l2.json", "\"layers\": 4", "\"layers\": 100000")));
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "predict worldwide --method dtfm-identity "
                              "--layers 100001"), 2, "%s", r.err);
  cr_expect(strstr(r.err, "[1, 100000]"), "%s", r.err);
  const char *sw = support_write_file(support_path("l.json"),
                                      "{\"layers\": [100001]}");
  cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw,
                              support_path("l.db")), 1, "%s", r.err);
  cr_expect(strstr(r.err, "100001 is outside [1, 100000]"), "%s", r.err);
  support_run_clear(&r);
}

/* scenario_hash: equal for two loads of one content, whatever the file's
 * name, comments of its trace or spelling of a number; different after any
 * edit a result depends on (a link, a GPU, a knob, a trace value). */
Test(scenario_bounds, content_hash_follows_the_content) {
  const char *a = write_edit("h1.json", "\"name\": \"u\"", "\"name\": \"u\"");
  const char *b = write_edit("h2.json", "\"latency_ms\": 10",
                             "\"latency_ms\": 10.0");
  scenario *sa = support_scenario(a), *sb = support_scenario(b);
  cr_expect_eq(scenario_hash(sa), scenario_hash(sb));
  scenario *again = support_scenario(a);
  cr_expect_eq(scenario_hash(sa), scenario_hash(again));
  const char *const edits[][2] = {
      {"\"bandwidth_gbps\": 1", "\"bandwidth_gbps\": 0.1"},
      {"\"devices\": 4}", "\"devices\": 4, \"gpu\": \"A100\"}"},
      {"\"layers\": 4", "\"layers\": 6"},
      {"\"name\": \"u\",", "\"name\": \"u\", \"seed\": 2,"}};
  for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
    scenario *x = support_scenario(write_edit("hx.json", edits[i][0],
                                              edits[i][1]));
    cr_expect_neq(scenario_hash(x), scenario_hash(sa), "%s", edits[i][1]);
    scenario_free(x);
  }
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.bandwidth_scale = 2;
  err e = {0};
  cr_assert_eq(scenario_apply(again, &k, &e), ERR_OK, "%s", e.msg);
  cr_expect_neq(scenario_hash(again), scenario_hash(sa), "scaled links");
  scenario_free(again);
  scenario_free(sa);
  scenario_free(sb);
  /* the trace a scenario names: a comment is no change, a value is */
  static const char trace_text[] =
      "t_s,src,dst,latency_ms,bandwidth_gbps\n0,*,*,10,1\n";
  support_write_file(support_path("t.csv"), trace_text);
  const char *t = write_edit("ht.json",
                             "\"latency_ms\": 10, \"bandwidth_gbps\": 1",
                             "\"trace\": \"t.csv\"");
  scenario *s1 = support_scenario(t);
  support_write_file(support_path("t.csv"),
                     "# a comment\nt_s,src,dst,latency_ms,bandwidth_gbps\n"
                     "0,*,*,10,1\n");
  scenario *s2 = support_scenario(t);
  support_write_file(support_path("t.csv"),
                     "t_s,src,dst,latency_ms,bandwidth_gbps\n0,*,*,10,2\n");
  scenario *s3 = support_scenario(t);
  cr_expect_eq(scenario_hash(s1), scenario_hash(s2));
  cr_expect_neq(scenario_hash(s1), scenario_hash(s3));
  scenario_free(s1), scenario_free(s2), scenario_free(s3);
}

/* Checks made after loading (models/ knows model and GPU names, sim/ the
 * task graph's size) named the scenario's "name" instead of the place:
 * now FILE:LINE: field, as the loader's own checks do. */
Test(scenario_bounds, later_checks_cite_file_and_line) {
  struct {
    const char *from, *to, *cmd, *want;
    int line;
  } cases[] = {
      {"\"gpt3-xl\"", "\"gpt-9\"", "predict",
       "workload.model: 'gpt-9' is unknown (known: gpt3-small", 4},
      {"\"devices\": 4}", "\"devices\": 4, \"gpu\": \"K80\"}", "simulate",
       "sites[0].gpu: 'K80' is unknown (site 'a'; known: V100", 2},
      {"\"layers\": 4", "\"layers\": 1", "simulate",
       "workload.layers: 1 layers for 2 stages", 4},
      {"\"batch\": 8", "\"batch\": 16777216", "simulate",
       "workload.batch: 16777216 sequences over 2 x 2 devices", 4},
  };
  support_run r = {0};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *path = write_edit("later.json", cases[i].from, cases[i].to);
    cr_expect_eq(support_geodes(&r, "%s '%s' --method dtfm-identity",
                                cases[i].cmd, path), 1, "%s", cases[i].to);
    char want[700];
    snprintf(want, sizeof want, "geodes: %s:%d: %s", path, cases[i].line,
             cases[i].want);
    cr_expect(strncmp(r.err, want, strlen(want)) == 0, "'%s', want '%s'",
              r.err, want);
  }
  /* a value a knob set is named with the knob's scenario, not a line */
  cr_expect_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--gpu K80", write_edit("k.json", "u", "u")), 1);
  cr_expect(strstr(r.err, "geodes: u: sites[0].gpu: 'K80' is unknown"), "%s",
            r.err);
  support_run_clear(&r);
}

/* Issue 24, 10: a sweep kept a stale row after nccl_sockets,
 * compute_efficiency, flow_gbps or workload.runtime was edited, because
 * scenario_hash listed keys by hand and left those out. Every key of the
 * parser's list (scenario_site_keys) and of WORKLOAD_MAP's rows has an edit
 * here, checked to move the hash; a key added to a list without one fails
 * the coverage check, and one the hash leaves out fails the edit's. */
typedef struct hash_edit {
  const char *key;
  const char *site_a, *site_b; /* NULL: the base's */
  const char *base, *edited;   /* workloads; NULL: the base's */
} hash_edit;

#define HASH_W0 "\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 8, " \
                "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 2"

static scenario *two_sites(const char *a, const char *b, const char *w) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"name\": \"h\", \"sites\": [{%s}, {%s}],\n"
           " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1},\n"
           " \"workload\": {%s}}\n",
           a ? a : "\"name\": \"a\", \"devices\": 2",
           b ? b : "\"name\": \"b\", \"devices\": 2", w ? w : HASH_W0);
  return support_scenario(support_write_file(support_path("h.json"), text));
}

Test(scenario_bounds, every_key_moves_the_hash) {
#define A_(x) "\"name\": \"a\", \"devices\": 2, " x
#define W_(x) HASH_W0 ", " x
#define SD_ "\"dp_algo\": \"streaming-diloco\", \"inner_steps\": 100"
#define HM_ "\"dp_algo\": \"hivemind\""
  static const hash_edit edits[] = {
      {"name", "\"name\": \"c\", \"devices\": 2", NULL, NULL, NULL},
      {"devices", "\"name\": \"a\", \"devices\": 3",
       "\"name\": \"b\", \"devices\": 1", NULL, NULL},
      {"gpu", A_("\"gpu\": \"A100\""), NULL, NULL, NULL},
      {"nic_gbps", A_("\"nic_gbps\": 5"), NULL, NULL, NULL},
      {"nic_shared", A_("\"nic_shared\": true"), NULL, NULL, NULL},
      {"nccl_sockets", A_("\"nccl_sockets\": 4"), NULL, NULL, NULL},
      {"compute_efficiency", A_("\"compute_efficiency\": 0.5"), NULL, NULL,
       NULL},
      {"flow_gbps", A_("\"flow_gbps\": 5"), NULL, NULL, NULL},
      {"nic", A_("\"nic\": \"aws-ena\""), NULL, NULL, NULL},
      {"tcp_window_bytes", A_("\"tcp_window_bytes\": 1e6"), NULL, NULL,
       NULL},
      {"gpu_memory_gb", A_("\"gpu_memory_gb\": 40"), NULL, NULL, NULL},
      {"model", NULL, NULL, NULL,
       "\"model\": \"gpt3-large\", \"layers\": 4, \"batch\": 8, "
       "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 2"},
      {"layers", NULL, NULL, NULL,
       "\"model\": \"gpt3-xl\", \"layers\": 6, \"batch\": 8, "
       "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 2"},
      {"batch", NULL, NULL, NULL,
       "\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 16, "
       "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 2"},
      {"micro_batch", NULL, NULL, NULL,
       "\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 8, "
       "\"micro_batch\": 2, \"stages\": 2, \"replicas\": 2"},
      {"stages", NULL, NULL, NULL,
       "\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 8, "
       "\"micro_batch\": 1, \"stages\": 4, \"replicas\": 1"},
      {"replicas", NULL, NULL, NULL,
       "\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 8, "
       "\"micro_batch\": 1, \"stages\": 1, \"replicas\": 4"},
      {"micro_batches_per_pass", NULL, NULL, NULL,
       W_("\"micro_batches_per_pass\": 2")},
      {"schedule", NULL, NULL, NULL, W_("\"schedule\": \"1f1b\"")},
      {"dp_algo", NULL, NULL, NULL, W_("\"dp_algo\": \"ring\"")},
      {"recompute", NULL, NULL, NULL, W_("\"recompute\": false")},
      {"runtime", NULL, NULL, NULL, W_("\"runtime\": \"megatron\"")},
      {"inner_steps", NULL, NULL, W_(SD_),
       W_("\"dp_algo\": \"streaming-diloco\", \"inner_steps\": 50")},
      {"fragments", NULL, NULL, W_(SD_), W_(SD_ ", \"fragments\": 2")},
      {"overlap_steps", NULL, NULL, W_(SD_ ", \"fragments\": 2"),
       W_(SD_ ", \"fragments\": 2, \"overlap_steps\": 5")},
      {"exchange_levels", NULL, NULL, W_(SD_),
       W_(SD_ ", \"exchange_levels\": 2")},
      {"grad_bits", NULL, NULL, NULL, W_("\"grad_bits\": 8")},
      {"activation_bits", NULL, NULL, NULL, W_("\"activation_bits\": 8")},
      {"matchmaking_s", NULL, NULL, W_(HM_), W_(HM_ ", \"matchmaking_s\": 5")},
      {"delay_averaging", NULL, NULL, W_(HM_),
       W_(HM_ ", \"delay_averaging\": true")},
      {"zero", NULL, NULL, W_("\"dp_algo\": \"ring\""),
       W_("\"dp_algo\": \"ring\", \"zero\": 1")}};
#undef A_
#undef W_
#undef SD_
#undef HM_
  size_t n = sizeof edits / sizeof *edits;
  const char *keys[64];
  int nkeys = 0;
  for (const char *const *k = scenario_site_keys; *k; k++) keys[nkeys++] = *k;
  for (int r = 0; r < WORKLOAD_NFIELDS; r++)
    if (workload_rows[r].target == WORKLOAD_IN_WORKLOAD)
      keys[nkeys++] = workload_rows[r].key;
  for (int j = 0; j < nkeys; j++) {
    bool covered = false;
    for (size_t i = 0; i < n; i++)
      covered |= strcmp(edits[i].key, keys[j]) == 0;
    cr_expect(covered, "key '%s' has no edit in this test", keys[j]);
  }
  for (size_t i = 0; i < n; i++) {
    const hash_edit *x = &edits[i];
    scenario *base = two_sites(NULL, NULL, x->base);
    uint64_t hb = scenario_hash(base);
    scenario_free(base);
    scenario *edited = two_sites(x->site_a, x->site_b, x->edited);
    cr_expect_neq(scenario_hash(edited), hb, "editing %s keeps the hash",
                  x->key);
    scenario_free(edited);
  }
}

/* Issue 18, 5: a scenario may leave layers out: the model's own depth
 * (gpt3-xl: 24) is used, as --model without --layers does. */
Test(scenario_bounds, layers_default_to_the_model_depth) {
  scenario *s = two_sites(NULL, NULL, "\"model\": \"gpt3-xl\", \"batch\": 8, "
                          "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 2");
  spec_workload w;
  err e = {0};
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(w.layers, spec_model_find("gpt3-xl")->layers);
  cr_expect_eq(w.layers, 24);
  scenario_free(s);
}

/* Issue 31: the shaping and each path key move the hash (that tc, no path
 * key and 1.45e6 windows keep the hashes main computed is test_scenario's
 * tc_builtins_keep_their_hashes). */
Test(scenario_bounds, network_keys_move_the_hash) {
  static const char *const nets[] = {
      "\"shaping\": \"tc\", \"latency_ms\": 10, \"bandwidth_gbps\": 1",
      "\"shaping\": \"path\", \"latency_ms\": 10, \"bandwidth_gbps\": 1",
      "\"shaping\": \"tc\", \"latency_ms\": 10, \"bandwidth_gbps\": 1, "
      "\"flow_gbps\": 0.5",
      "\"shaping\": \"tc\", \"latency_ms\": 10, \"bandwidth_gbps\": 1, "
      "\"loss\": 0.001",
      "\"shaping\": \"tc\", \"latency_ms\": 10, \"bandwidth_gbps\": 1, "
      "\"window_bytes\": 2e6"};
  uint64_t h[5];
  for (int i = 0; i < 5; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\": \"h\", \"sites\": [{\"name\": \"a\", \"devices\": 2, "
             "\"tcp_window_bytes\": 1.45e6}, {\"name\": \"b\", \"devices\": 2, "
             "\"tcp_window_bytes\": 1.45e6}],\n \"network\": {%s},\n"
             " \"workload\": {" HASH_W0 "}}\n", nets[i]);
    scenario *s = support_scenario(support_write_file(support_path("n.json"),
                                                      text));
    h[i] = scenario_hash(s);
    scenario_free(s);
    for (int j = 0; j < i; j++) cr_expect_neq(h[i], h[j], "%d and %d", i, j);
  }
  /* the shaping as the file states it or as set after loading: one hash */
  scenario *s = two_sites("\"name\": \"a\", \"devices\": 2, "
                          "\"tcp_window_bytes\": 1.45e6",
                          "\"name\": \"b\", \"devices\": 2, "
                          "\"tcp_window_bytes\": 1.45e6", NULL);
  s->shaping = SCENARIO_SHAPING_TC;
  cr_expect_eq(scenario_hash(s), h[0]);
  scenario_free(s);
}
