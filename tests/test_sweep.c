/* test_sweep: sweep files (every key, crossing, canonical keys, errors with
 * FILE:LINE), the wire format, and execution with a cheap evaluator: 1 job vs
 * forked jobs give identical rows, a sweep killed with SIGKILL resumes to
 * exactly one row per point, failures are retried. The geodes front end
 * (and its MPI mode) is tested in test_sweep_cli.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/eval.h"
#include "analysis/sweep.h"
#include "base/builtin.h"
#include "tests/support.h"

/* The timeout fails a quadratic parse of a million seeds (one per suite:
 * two tests with their own timeouts running at once leak in Criterion). */
TestSuite(sweep, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 300);

static sweep *parse(const char *text, err *e) {
  return sweep_parse(text, strlen(text), "s.json", e);
}

static const char EXAMPLE[] =
    "{\"scenarios\": [\"worldwide\", \"regional\"],\n"
    " \"methods\": [\"megatron\", \"gcma\"],\n"
    " \"networks\": [\"netem\", \"tcp\"], \"layers\": [24, 40],\n"
    " \"bandwidth_scale\": [0.5, 1, 2],\n"
    " \"seeds\": [1, 2, 3]}";

Test(sweep, example_is_the_cross_product) {
  err e = {0};
  sweep *s = parse(EXAMPLE, &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_assert_eq(sweep_count(s), 2 * 2 * 2 * 2 * 3 * 3);
  /* Naive reference: nested loops over the values; each combination must be
   * exactly one index. */
  const char *sc[] = {"worldwide", "regional"}, *me[] = {"megatron-order", "gcma"},
             *ne[] = {"netem", "tcp"};
  int la[] = {24, 40}, se[] = {1, 2, 3};
  double bw[] = {0.5, 1, 2};
  int found = 0;
  for (int a = 0; a < 2; a++) for (int b = 0; b < 2; b++)
  for (int c = 0; c < 2; c++) for (int d = 0; d < 2; d++)
  for (int f = 0; f < 3; f++) for (int g = 0; g < 3; g++) {
    int hits = 0;
    for (size_t i = 0; i < sweep_count(s); i++) {
      sweep_point p;
      sweep_point_at(s, i, &p);
      hits += !strcmp(p.scenario, sc[a]) && !strcmp(p.method, me[b]) &&
              !strcmp(p.network, ne[c]) && p.knobs.layers == la[d] &&
              p.knobs.bandwidth_scale == bw[f] && p.knobs.seed == se[g] &&
              p.knobs.batch == -1 && p.knobs.schedule == NULL && isnan(p.knobs.gradient_gb) &&
              p.knobs.latency_scale == 1;
    }
    cr_expect_eq(hits, 1);
    found += hits;
  }
  cr_expect_eq(found, 144);
  cr_expect_eq(sweep_line(s, "bandwidth_scale"), 4);
  const char *const *names;
  cr_expect_eq(sweep_scenarios(s, &names), 2);
  cr_expect_str_eq(names[1], "regional");
  sweep_free(s);
}

Test(sweep, every_key_and_defaults) {
  err e = {0};
  sweep *s = parse(
      "{\"scenarios\": \"spot\", \"methods\": \"greedy\", \"networks\": "
      "\"ideal\", \"seeds\": 7, \"layers\": 12, \"batch\": 512, "
      "\"micro_batch\": 2, \"micro_batches_per_pass\": 32, \"schedule\": "
      "\"1f1b\", \"dp_algo\": \"ring\", \"bandwidth_scale\": 0.25, "
      "\"latency_scale\": 3, \"window_bytes\": 65536, \"activation_gb\": 0.5, "
      "\"gradient_gb\": 0.9, \"sockets\": 16, \"runtime\": \"megatron\"}",
      &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_assert_eq(sweep_count(s), 1);
  sweep_point p;
  sweep_point_at(s, 0, &p);
  cr_expect_str_eq(p.scenario, "spot");
  cr_expect_str_eq(p.method, "greedy");
  cr_expect_str_eq(p.network, "ideal");
  cr_expect(p.knobs.seed == 7 && p.knobs.layers == 12 && p.knobs.batch == 512 &&
            p.knobs.micro_batch == 2 && p.knobs.micro_batches_per_pass == 32 &&
            p.knobs.window_bytes == 65536);
  cr_expect_str_eq(p.knobs.schedule, "1f1b");
  cr_expect_str_eq(p.knobs.dp_algo, "ring");
  cr_expect(p.knobs.bandwidth_scale == 0.25 && p.knobs.latency_scale == 3 &&
            p.knobs.activation_gb == 0.5 && p.knobs.gradient_gb == 0.9);
  cr_expect_eq(p.knobs.nccl_sockets, 16);
  cr_expect_str_eq(p.knobs.runtime, "megatron");
  char key[512];
  sweep_point_key(&p, key, sizeof key);
  cr_expect_not_null(strstr(key, " sockets=16 runtime=megatron"), "%s", key);
  sweep_free(s);
  cr_expect_null(parse("{\"sockets\": 65}", &e));
  cr_expect_not_null(strstr(e.msg, "sockets"), "%s", e.msg);
  err_clear(&e);
  cr_expect_null(parse("{\"runtime\": \"deepspeed\"}", &e));
  cr_expect_not_null(strstr(e.msg, "runtime"), "%s", e.msg);
  s = parse("{}", &e);
  cr_assert_not_null(s);
  sweep_point_at(s, 0, &p);
  cr_expect_str_eq(p.scenario, "worldwide");
  cr_expect_str_eq(p.method, "dtfm-identity");
  cr_expect_str_eq(p.network, "tcp"); /* the default model */
  cr_expect(p.knobs.seed == -1 && p.knobs.layers == -1 &&
            p.knobs.window_bytes == -1 &&
            p.knobs.nccl_sockets == -1 && p.knobs.runtime == NULL);
  cr_expect_null(p.knobs.gpu, "absent gpus: each site's own GPU");
  sweep_free(s);
}

static void key_of(const char *text, size_t i, char *buf, size_t size) {
  err e = {0};
  sweep *s = parse(text, &e);
  cr_assert_not_null(s, "%s", e.msg);
  sweep_point p;
  sweep_point_at(s, i, &p);
  sweep_point_key(&p, buf, size);
  sweep_free(s);
}

Test(sweep, canonical_keys) {
  char a[512], b[512], c[512];
  key_of("{\"layers\": 24, \"bandwidth_scale\": 1.0, \"seeds\": [5]}", 0, a,
         sizeof a);
  key_of("{\"seeds\": 5, \"bandwidth_scale\": 1, \"layers\": [24]}", 0, b,
         sizeof b);
  cr_expect_str_eq(a, b, "spelling does not change the key");
  key_of("{\"layers\": 24, \"bandwidth_scale\": 2, \"seeds\": 5}", 0, c,
         sizeof c);
  cr_expect_str_neq(a, c);
  cr_expect_not_null(strstr(a, "layers=24"));
  cr_expect_not_null(strstr(a, "batch=-"));
  /* Truncation: the needed length is returned and the buffer terminated. */
  err e = {0};
  sweep *s = parse("{}", &e);
  sweep_point p;
  sweep_point_at(s, 0, &p);
  char tiny[8];
  size_t need = sweep_point_key(&p, tiny, sizeof tiny);
  cr_expect_gt(need, sizeof tiny);
  cr_expect_eq(strlen(tiny), sizeof tiny - 1);
  sweep_free(s);
  /* All keys of a sweep are distinct. */
  s = parse(EXAMPLE, &e);
  size_t n = sweep_count(s);
  char (*keys)[512] = malloc(n * sizeof *keys);
  for (size_t i = 0; i < n; i++) {
    sweep_point_at(s, i, &p);
    sweep_point_key(&p, keys[i], sizeof keys[i]);
    for (size_t j = 0; j < i; j++) cr_assert_str_neq(keys[i], keys[j]);
  }
  free(keys);
  sweep_free(s);
}

/* gpus: crossed like the other keys, fastest-varying, names spelled as
 * models/spec.h spells them; each GPU is its own key. */
Test(sweep, gpus_are_crossed_and_canonical) {
  err e = {0};
  sweep *s = parse("{\"layers\": [8, 12],\n \"gpus\": [\"v100\", \"A100\","
                   " \"h100\"]}", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_assert_eq(sweep_count(s), 6);
  cr_expect_eq(sweep_line(s, "gpus"), 2);
  const char *want[] = {"V100", "A100", "H100"};
  char keys[6][512];
  for (size_t i = 0; i < 6; i++) {
    sweep_point p;
    sweep_point_at(s, i, &p);
    cr_expect_eq(p.knobs.layers, i < 3 ? 8 : 12);
    cr_expect_str_eq(p.knobs.gpu, want[i % 3]);
    sweep_point_key(&p, keys[i], sizeof keys[i]);
    char needle[32];
    snprintf(needle, sizeof needle, " gpu=%s", want[i % 3]);
    cr_expect_not_null(strstr(keys[i], needle), "%s in %s", needle, keys[i]);
    for (size_t j = 0; j < i; j++) cr_expect_str_neq(keys[i], keys[j]);
  }
  sweep_free(s);
  char a[512], b[512], c[512];
  key_of("{\"gpus\": \"A100\"}", 0, a, sizeof a);
  key_of("{\"gpus\": [\"a100\"]}", 0, b, sizeof b);
  cr_expect_str_eq(a, b, "a scalar fixes it; the spelling is canonical");
  key_of("{}", 0, c, sizeof c);
  cr_expect_str_neq(a, c);
  cr_expect_not_null(strstr(c, " gpu=-"), "%s", c);
  /* A point built elsewhere (geodes run --gpu a100) gets the same key. */
  sweep_point p;
  s = parse("{}", &e);
  sweep_point_at(s, 0, &p);
  p.knobs.gpu = "a100";
  sweep_point_key(&p, c, sizeof c);
  cr_expect_str_eq(a, c);
  sweep_free(s);
}

/* results.gpu: the one GPU, or the sites' distinct GPUs in site order as
 * spec.h spells them; "mixed" when that does not fit. */
Test(sweep, gpu_label_of_a_scenario) {
  scenario *s = support_scenario(GEODES_FIXTURES "/analysis/three-sites.json");
  char buf[48];
  eval_gpu_label(s, buf, sizeof buf);
  cr_expect_str_eq(buf, "V100");
  free(s->sites[0].gpu), free(s->sites[2].gpu);
  s->sites[0].gpu = strdup("rtx 3090");
  s->sites[2].gpu = strdup("v100");
  eval_gpu_label(s, buf, sizeof buf);
  cr_expect_str_eq(buf, "RTX3090,V100");
  eval_gpu_label(s, buf, 12);
  cr_expect_str_eq(buf, "mixed");
  scenario_free(s);
}

/* Bad input: the code and "s.json:LINE:" at the start of the message. */
static void bad(const char *text, int code, int line, const char *needle) {
  err e = {0};
  sweep *s = parse(text, &e);
  cr_expect_null(s, "accepted: %s", text);
  sweep_free(s);
  cr_expect_eq(e.code, code, "%s -> %d (%s)", text, e.code, e.msg);
  char where[32];
  snprintf(where, sizeof where, "s.json:%d: ", line);
  cr_expect_eq(strncmp(e.msg, where, strlen(where)), 0, "'%s' in '%s'",
               where, e.msg);
  cr_expect_not_null(strstr(e.msg, needle), "'%s' in '%s'", needle, e.msg);
}

Test(sweep, bad_inputs_name_file_and_line) {
  bad("{\"layers\": [24],\n \"bandwith_scale\": [1]}", ERR_UNKNOWN, 2,
      "bandwith_scale");
  bad("{\n\"layers\": [24, \"x\"]}", ERR_PARSE, 2, "layers");
  bad("{\n\n\"layers\": [2.5]}", ERR_PARSE, 3, "integer");
  bad("{\"seeds\": []}", ERR_RANGE, 1, "empty");
  bad("{\"methods\": [\"gcma\",\n \"nope\"]}", ERR_UNKNOWN, 1, "nope");
  bad("{\"networks\": [\"tcp\", \"tcp\"]}", ERR_DUPLICATE, 1, "twice");
  bad("{\"layers\": [24, 24.0]}", ERR_DUPLICATE, 1, "twice");
  bad("{\"bandwidth_scale\": 0}", ERR_RANGE, 1, "bandwidth_scale");
  bad("{\"window_bytes\": 100}", ERR_RANGE, 1, "window_bytes");
  bad("{\"schedule\": \"pipedream\"}", ERR_UNKNOWN, 1, "pipedream");
  bad("{\"layers\": 24,\n\"layers\": 40}", ERR_PARSE, 2, "duplicate");
  bad("{\"layers\": 24,\n\n]", ERR_PARSE, 3, "");
  bad("[1, 2]", ERR_PARSE, 1, "object");
  bad("{\"scenarios\": [1]}", ERR_PARSE, 1, "name");
  bad("{\"layers\": 8,\n \"gpus\": [\"V100\", \"B200\"]}", ERR_UNKNOWN, 2,
      "unknown GPU 'B200' (known: V100, V100-16GB, V100-32GB, A100, ");
  bad("{\"gpus\": \"\"}", ERR_UNKNOWN, 1, "gpus");
  bad("{\n\"gpus\": [\"A100\", \"a100\"]}", ERR_DUPLICATE, 2, "'A100' is listed");
  bad("{\"gpus\": [80]}", ERR_PARSE, 1, "gpus");
  bad("{\"gpuz\": \"A100\"}", ERR_UNKNOWN, 1, "delay_averaging, zero)");
  /* a key and its former name together */
  bad("{\"gpu\": \"A100\",\n \"gpus\": \"V100\"}", ERR_DUPLICATE, 2,
      "'gpu' and 'gpus' name one key ('gpus' is its former name)");
  /* Integer bounds in full, not as 2.14748e+09. */
  bad("{\n\"seeds\": [1, 1e300]}", ERR_RANGE, 2,
      "seeds: 1e+300 is outside [0, 2147483647]");
  bad("{\"window_bytes\": 100}", ERR_RANGE, 1, "[1448, 1099511627776]");
}

/* 60^4 points would need 100 MB of indices and an hour of lookups before
 * the first point (a 40^6 file aborted on 32 GB): refused at parse time. */
Test(sweep, too_many_points_is_an_error) {
  char text[4096];
  size_t at = 0;
  const char *keys[] = {"seeds", "layers", "bandwidth_scale", "latency_scale"};
  at += (size_t)snprintf(text + at, sizeof text - at, "{");
  for (int k = 0; k < 4; k++) {
    at += (size_t)snprintf(text + at, sizeof text - at, "%s\"%s\": [",
                           k ? ",\n" : "", keys[k]);
    for (int v = 1; v <= 60; v++)
      at += (size_t)snprintf(text + at, sizeof text - at, "%s%d",
                             v > 1 ? ", " : "", v);
    at += (size_t)snprintf(text + at, sizeof text - at, "]");
  }
  snprintf(text + at, sizeof text - at, "}");
  bad(text, ERR_RANGE, 1, "12960000 points");
  /* Seeds cut to 1..46: 46 * 60^3 = 9936000 points, accepted. */
  char *cut = strstr(text, ", 47, ");
  cr_assert_not_null(cut);
  memmove(cut, strchr(cut, ']'), strlen(strchr(cut, ']')) + 1);
  err e = {0};
  sweep *s = sweep_parse(text, strlen(text), "s.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_expect_eq(sweep_count(s), 46u * 60 * 60 * 60);
  sweep_free(s);
}

/* A list of n seeds: 0 .. n-1, then last (< 0: none) once more, and the
 * rest of the object (caller frees). */
static char *many_seeds(int n, int last, const char *rest) {
  size_t cap = (size_t)n * 9 + strlen(rest) + 64, at = 0;
  char *t = malloc(cap);
  cr_assert_not_null(t);
  at += (size_t)snprintf(t, cap, "{\"seeds\": [");
  for (int i = 0; i < n; i++)
    at += (size_t)snprintf(t + at, cap - at, "%s%d", i ? "," : "", i);
  if (last >= 0) at += (size_t)snprintf(t + at, cap - at, ",%d", last);
  snprintf(t + at, cap - at, "]%s}", rest);
  return t;
}

/* The duplicate check compared each value with every one before it: 10^6
 * distinct seeds took minutes. Sorted, they take a moment (the suite's
 * timeout fails the quadratic one). */
Test(sweep, a_million_seeds_parse_at_once) {
  char *text = many_seeds(1000000, -1, "");
  err e = {0};
  sweep *s = parse(text, &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_expect_eq(sweep_count(s), 1000000);
  sweep_point p;
  sweep_point_at(s, 999999, &p);
  cr_expect_eq(p.knobs.seed, 999999);
  sweep_free(s);
  free(text);
  text = many_seeds(1000000, 5, "");
  bad(text, ERR_DUPLICATE, 1, "seeds: 5 is listed twice");
  free(text);
}

/* The product of the list lengths is checked before any value is read: a
 * million bad seeds crossed with 20 layers is refused for its size. */
Test(sweep, product_is_checked_before_the_values) {
  size_t cap = 8000000, at = 0;
  char *text = malloc(cap);
  cr_assert_not_null(text);
  at += (size_t)snprintf(text, cap, "{\"layers\": [1");
  for (int l = 2; l <= 20; l++)
    at += (size_t)snprintf(text + at, cap - at, ",%d", l);
  at += (size_t)snprintf(text + at, cap - at, "], \"seeds\": [\"x\"");
  for (int i = 1; i < 1000000; i++)
    at += (size_t)snprintf(text + at, cap - at, ",\"x\"");
  snprintf(text + at, cap - at, "]}");
  bad(text, ERR_RANGE, 1, "20000000 points");
  free(text);
}

/* The identity of a row: stable for one point, and different when the
 * scenario's content, the built-in data or the key differ. */
Test(sweep, identity_follows_content_data_and_key) {
  err e = {0};
  sweep *s = parse("{\"seeds\": [1, 2]}", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_assert_eq(sweep_resolve(s, &e), ERR_OK, "%s", e.msg);
  sweep_point p, q;
  sweep_point_at(s, 0, &p);
  scenario *w = support_scenario("worldwide");
  cr_expect_eq(p.scenario_hash, scenario_hash(w));
  scenario_free(w);
  cr_expect_eq(p.data_hash, builtin_hash());
  char key[1024], a[17], b[17];
  sweep_point_key(&p, key, sizeof key);
  sweep_point_identity(&p, key, a);
  sweep_point_identity(&p, key, b);
  cr_expect_str_eq(a, b);
  cr_expect_eq(strlen(a), 16);
  q = p, q.scenario_hash ^= 1;
  sweep_point_identity(&q, key, b);
  cr_expect_str_neq(a, b, "scenario content");
  q = p, q.data_hash ^= 1;
  sweep_point_identity(&q, key, b);
  cr_expect_str_neq(a, b, "built-in data");
  sweep_point_at(s, 1, &q);
  char key2[1024];
  sweep_point_key(&q, key2, sizeof key2);
  sweep_point_identity(&q, key2, b);
  cr_expect_str_neq(a, b, "another point");
  sweep_free(s);
}

/* A scenario edited after sweep_resolve: its points fail rather than store
 * results of the new content under the identity of the old. */
Test(sweep, a_scenario_edited_during_the_sweep_fails_its_points) {
  const char *sc = support_path("moving.json");
  static const char fmt[] =
      "{\"name\": \"m\", \"sites\": [{\"name\": \"a\", \"devices\": 4}],"
      " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": %d},"
      " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 8,"
      " \"micro_batch\": 1, \"stages\": 2, \"replicas\": 2}}";
  char text[512], sw[600];
  snprintf(text, sizeof text, fmt, 1);
  support_write_file(sc, text);
  snprintf(sw, sizeof sw, "{\"scenarios\": [\"%s\"]}", sc);
  err e = {0};
  sweep *s = parse(sw, &e);
  cr_assert_eq(sweep_resolve(s, &e), ERR_OK, "%s", e.msg);
  sweep_point p;
  sweep_point_at(s, 0, &p);
  db_result r;
  db_result_init(&r);
  cr_expect_eq(eval_point(NULL, &p, &r, &e), ERR_OK, "%s", e.msg);
  db_result_clear(&r);
  snprintf(text, sizeof text, fmt, 2);
  support_write_file(sc, text);
  err_clear(&e);
  cr_expect_eq(eval_point(NULL, &p, &r, &e), ERR_CONFIG);
  cr_expect(strstr(e.msg, "changed while the sweep ran"), "%s", e.msg);
  db_result_clear(&r);
  sweep_free(s);
}

Test(sweep, load_missing_file) {
  err e = {0};
  cr_expect_null(sweep_load("/nonexistent/s.json", &e));
  cr_expect_eq(e.code, ERR_IO);
  cr_expect_not_null(strstr(e.msg, "/nonexistent/s.json"));
}

/* Every column an evaluation fills crosses the wire with its own value (a
 * swap of two in sweep_pack or sweep_unpack fails here); a label column
 * does not (the writer puts the point's on). */
Test(sweep, wire_round_trip) {
  db_result r, back;
  db_result_init(&r);
  db_result_init(&back);
  support_result_distinct(&r);
  r.gradient_gb = NAN; /* absent survives */
  r.nit = 2, r.it = calloc(2, sizeof *r.it);
  r.it[1] = (db_iteration){.index = 7, .lost_by = {0, 0, 0, 0, 1.5}};
  r.nmarks = 1, r.marks = calloc(1, sizeof *r.marks);
  r.marks[0] = (db_mark){.t_s = 2.5, .kind = "trace"};
  size_t len;
  char *buf = sweep_pack(ERR_OK, NULL, &r, &len);
  int status = -99;
  err e = {0};
  cr_assert(sweep_unpack(buf, len, &status, &e, &back));
  cr_expect_eq(status, ERR_OK);
  db_result fresh;
  db_result_init(&fresh);
#define X(f, col, type, sql, absent, since, origin)                        \
  cr_expect(support_result_same(&back, #origin[0] != 'L' ? &r : &fresh, col), \
            "column %s (%s) after the wire", col, #origin);
  DB_RESULT_MAP(X)
#undef X
  cr_assert_eq(back.nit, 2);
  cr_expect(back.it[1].index == 7 && back.it[1].lost_by[4] == 1.5);
  cr_assert_eq(back.nmarks, 1);
  cr_expect_str_eq(back.marks[0].kind, "trace");
  db_result_clear(&back);
  cr_expect_not(sweep_unpack(buf, len - 1, &status, &e, &back), "truncated");
  db_result_clear(&back);
  free(buf);
  err fail = {0};
  err_set(&fail, ERR_CONFIG, "x.json:3: bad");
  buf = sweep_pack(ERR_CONFIG, &fail, NULL, &len);
  cr_assert(sweep_unpack(buf, len, &status, &e, &back));
  cr_expect_eq(status, ERR_CONFIG);
  cr_expect_str_eq(e.msg, "x.json:3: bad");
  free(buf);
  db_result_clear(&r);
}

/* --- execution with a cheap evaluator --- */

typedef struct cheap {
  int sleep_us;     /* per point, to make a sweep slow enough to kill */
  int fail_layers;  /* points with this many layers fail */
  int crash_layers; /* ... or abort the worker */
  int calls;
} cheap;

static void sleep_us(long us) {
  struct timespec t = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&t, NULL);
}

static int cheap_eval(void *ctx, const sweep_point *p, db_result *r, err *e) {
  cheap *c = ctx;
  c->calls++;
  if (c->sleep_us) sleep_us(c->sleep_us);
  if (p->knobs.layers == c->fail_layers)
    return err_set(e, ERR_CONFIG, "cheap.json:1: %lld layers fail",
                   (long long)p->knobs.layers);
  if (p->knobs.layers == c->crash_layers) abort();
  r->layers = p->knobs.layers, r->seed = p->knobs.seed < 0 ? 42 : p->knobs.seed;
  r->score_s = (double)p->knobs.layers / p->knobs.bandwidth_scale;
  r->iteration_s = r->score_s * 1.5 + (double)r->seed;
  r->events = p->knobs.layers * 1000;
  snprintf(r->schedule, sizeof r->schedule, "gpipe");
  snprintf(r->gpu, sizeof r->gpu, "%s", p->knobs.gpu ? p->knobs.gpu : "T4,V100");
  char buf[64];
  snprintf(buf, sizeof buf, "{\"pipelines\": [[%lld]]}", (long long)p->knobs.seed);
  r->alloc = strdup(buf);
  return ERR_OK;
}

/* On a one-stage scenario, so every layer count is a valid point (the
 * sweep checks them against the scenario before any point runs). */
static const char SMALL[] =
    "{\"scenarios\": \"" GEODES_FIXTURES "/analysis/two-devices.json\","
    " \"layers\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], \"seeds\": [1, 2, 3, 4],"
    " \"bandwidth_scale\": [0.5, 1, 2], \"networks\": [\"ideal\", \"tcp\"]}";

/* The rows, without ids, in key order, as one string. */
static char *dump(const char *path) {
  sqlite3 *h;
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_prepare_v2(
                   h,
                   "SELECT point_key, scenario, method, network_model, seed, "
                   "layers, bandwidth_scale, score_s, iteration_s, events, "
                   "alloc, schedule, dp_algo, gpu FROM results ORDER BY point_key",
                   -1, &st, NULL),
               SQLITE_OK);
  size_t cap = 1 << 16, len = 0;
  char *out = calloc(1, cap);
  while (sqlite3_step(st) == SQLITE_ROW)
    for (int c = 0; c < sqlite3_column_count(st); c++) {
      const char *v = (const char *)sqlite3_column_text(st, c);
      size_t n = strlen(v ? v : "NULL") + 2;
      if (len + n >= cap) out = realloc(out, cap *= 2);
      len += (size_t)snprintf(out + len, cap - len, "%s%c", v ? v : "NULL",
                              c + 1 < sqlite3_column_count(st) ? '|' : '\n');
    }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

static sweep_stats run(const char *path, const char *text, int jobs,
                       cheap *c) {
  err e = {0};
  sweep *s = parse(text, &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_assert_eq(sweep_resolve(s, &e), ERR_OK, "%s", e.msg);
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t id = db_run_begin(d, &(db_run){"test", NULL, -1, "0", "x"}, &e);
  sweep_opts o = {.eval = cheap_eval, .ctx = c, .jobs = jobs, .run = id,
                  .batch_rows = 8};
  sweep_stats st;
  cr_assert_eq(sweep_run(s, d, &o, &st, &e), ERR_OK, "%s", e.msg);
  db_close(d);
  sweep_free(s);
  return st;
}

Test(sweep, jobs_give_identical_rows) {
  cheap c1 = {0}, c2 = {0};
  const char *one = support_path("one.db"), *two = support_path("two.db");
  sweep_stats a = run(one, SMALL, 1, &c1), b = run(two, SMALL, 3, &c2);
  cr_expect_eq(a.total, 240);
  cr_expect_eq(a.computed, 240);
  cr_expect_eq(b.computed, 240);
  cr_expect_eq(c1.calls, 240);
  cr_expect_eq(c2.calls, 0, "workers evaluate, not the parent");
  char *x = dump(one), *y = dump(two);
  cr_expect_str_eq(x, y);
  free(x), free(y);
  cr_expect_eq(
      support_sql_int(two, "SELECT count(*) FROM results WHERE gpu = 'T4,V100'"),
      240, "the evaluator's GPU label crosses the pipe");
  sweep_stats again = run(one, SMALL, 2, &c1);
  cr_expect_eq(again.present, 240);
  cr_expect_eq(again.computed, 0, "nothing left to compute");
}

Test(sweep, failures_are_not_stored_and_retried) {
  cheap c = {.fail_layers = 3};
  const char *path = support_path("fail.db");
  sweep_stats a = run(path, SMALL, 1, &c);
  cr_expect_eq(a.failed, 24);
  cr_expect_eq(a.computed, 216);
  cheap crash = {.crash_layers = 3};
  sweep_stats b = run(path, SMALL, 2, &crash);
  cr_expect_eq(b.present, 216);
  cr_expect_eq(b.failed, 24, "a crashed worker fails only its point");
  cr_expect_eq(
      support_sql_int(path, "SELECT count(*) FROM results WHERE layers = 3"),
      0);
  cheap ok = {0};
  sweep_stats d = run(path, SMALL, 2, &ok);
  cr_expect_eq(d.computed, 24);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM results"), 240);
}

/* Starts a slow sweep in a child, SIGKILLs it once some rows are committed
 * (polling the database), then resumes in this process. */
static void kill_and_resume(int jobs) {
  const char *path = support_path("killed.db");
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    cheap slow = {.sleep_us = 3000};
    run(path, SMALL, jobs, &slow);
    _exit(0);
  }
  long long rows = 0;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    sleep_us(2000);
    if (access(path, F_OK) == 0)
      rows = support_sql_int(path, "SELECT count(*) FROM results");
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while (rows < 16 && t.tv_sec - t0.tv_sec < 60);
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  cr_assert(WIFSIGNALED(status), "the sweep finished before the kill");
  long long kept = support_sql_int(path, "SELECT count(*) FROM results");
  cr_assert_geq(kept, 16);
  cr_assert_lt(kept, 240);
  cheap c = {0};
  sweep_stats st = run(path, SMALL, 1, &c);
  cr_expect_eq(st.present, (size_t)kept);
  cr_expect_eq(st.computed, 240 - (size_t)kept, "only the missing points");
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM results"), 240);
  cr_expect_eq(
      support_sql_int(path, "SELECT count(DISTINCT point_key) FROM results"),
      240);
  char *x = dump(path);
  const char *fresh = support_path("fresh.db");
  run(fresh, SMALL, 1, &c);
  char *y = dump(fresh);
  cr_expect_str_eq(x, y, "a resumed sweep equals an uninterrupted one");
  free(x), free(y);
}

Test(sweep, sigkill_then_resume_inline) { kill_and_resume(1); }
Test(sweep, sigkill_then_resume_jobs) { kill_and_resume(2); }

/* An evaluator that, from its second point on, writes to the database
 * itself, as another process would (a second sweep, `schedule --db`), with a
 * short busy timeout: the point fails if the sweep holds the write lock. */
typedef struct intruder {
  const char *path;
  int calls;
} intruder;

static int intruding_eval(void *ctx, const sweep_point *p, db_result *r,
                          err *e) {
  intruder *in = ctx;
  if (in->calls++ > 0) {
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(in->path, &h), SQLITE_OK);
    sqlite3_busy_timeout(h, 200);
    int rc = sqlite3_exec(h, "INSERT INTO runs(started_at) VALUES('other')",
                          NULL, NULL, NULL);
    sqlite3_close(h);
    if (rc != SQLITE_OK)
      return err_set(e, ERR_DB, "another writer waited: %s",
                     sqlite3_errstr(rc));
  }
  cheap c = {0};
  return cheap_eval(&c, p, r, e);
}

/* The sweep held its write transaction open while it evaluated the next
 * point, so another writer failed whenever a point outlasted its busy
 * timeout. In-process and in forked workers (other processes). */
static void other_writers_never_wait(int jobs) {
  const char *path = support_path("busy%d.db", jobs);
  intruder in = {path, 0};
  err e = {0};
  sweep *s = parse("{\"seeds\": [1, 2, 3, 4, 5, 6]}", &e);
  cr_assert_eq(sweep_resolve(s, &e), ERR_OK, "%s", e.msg);
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t id = db_run_begin(d, &(db_run){"test", NULL, -1, "0", "x"}, &e);
  sweep_opts o = {.eval = intruding_eval, .ctx = &in, .jobs = jobs,
                  .run = id, .batch_rows = 64, .batch_seconds = 60};
  sweep_stats st;
  cr_assert_eq(sweep_run(s, d, &o, &st, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(st.failed, 0, "%zu points failed", st.failed);
  cr_expect_eq(st.computed, 6);
  db_close(d);
  sweep_free(s);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM results"), 6);
  cr_expect_geq(support_sql_int(path, "SELECT count(*) FROM runs WHERE "
                                      "started_at = 'other'"), 4);
}

Test(sweep, other_writers_never_wait_inline) { other_writers_never_wait(1); }
Test(sweep, other_writers_never_wait_jobs) { other_writers_never_wait(2); }

/* A pipe for a worker that cannot be made (no file descriptor left) is an
 * error the caller gets, with its reason: the library neither prints nor
 * aborts; the failed hook hears nothing (no point failed). */
typedef struct hooks_heard {
  int progress, failed, last;
} hooks_heard;

static void heard_progress(void *ctx, const sweep_progress *p) {
  hooks_heard *h = ctx;
  h->progress++;
  h->last += p->last;
}

static void heard_failed(void *ctx, const char *key, const char *msg) {
  (void)key, (void)msg;
  ((hooks_heard *)ctx)->failed++;
}

Test(sweep, no_pipe_is_an_error_not_an_abort) {
  err e = {0};
  sweep *s = parse("{\"scenarios\": \"" GEODES_FIXTURES
                   "/analysis/two-devices.json\", \"seeds\": [1, 2, 3, 4]}",
                   &e);
  cr_assert_eq(sweep_resolve(s, &e), ERR_OK, "%s", e.msg);
  db *d = db_open(support_path("nofd.db"), &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t id = db_run_begin(d, &(db_run){"test", NULL, -1, "0", "x"}, &e);
  cheap c = {0};
  hooks_heard h = {0};
  sweep_opts o = {.eval = cheap_eval, .ctx = &c, .jobs = 2, .run = id,
                  .progress = heard_progress, .failed = heard_failed,
                  .hook_ctx = &h};
  struct rlimit old, low;
  cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
  int next_fd = dup(0);
  close(next_fd);
  low = old;
  low.rlim_cur = (rlim_t)next_fd + 1; /* room for one descriptor, not two */
  cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
  sweep_stats st;
  int rc = sweep_run(s, d, &o, &st, &e);
  setrlimit(RLIMIT_NOFILE, &old);
  cr_expect_eq(rc, ERR_IO);
  cr_expect(strstr(e.msg, "pipe: "), "%s", e.msg);
  cr_expect_eq(st.computed, 0);
  cr_expect_eq(h.failed, 0);
  cr_expect_eq(h.last, 1, "the end is reported once");
  db_close(d);
  sweep_free(s);
}

/* The hooks hear every point: progress after each and once at the end,
 * failed once per failing point, with its key. */
Test(sweep, hooks_hear_every_point) {
  err e = {0};
  sweep *s = parse("{\"scenarios\": \"" GEODES_FIXTURES
                   "/analysis/two-devices.json\", \"layers\": [2, 3, 4], "
                   "\"seeds\": [1, 2]}",
                   &e);
  cr_assert_eq(sweep_resolve(s, &e), ERR_OK, "%s", e.msg);
  db *d = db_open(support_path("hooks.db"), &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t id = db_run_begin(d, &(db_run){"test", NULL, -1, "0", "x"}, &e);
  cheap c = {.fail_layers = 3};
  hooks_heard h = {0};
  sweep_opts o = {.eval = cheap_eval, .ctx = &c, .jobs = 1, .run = id,
                  .progress = heard_progress, .failed = heard_failed,
                  .hook_ctx = &h};
  sweep_stats st;
  cr_assert_eq(sweep_run(s, d, &o, &st, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(st.failed, 2);
  cr_expect_eq(h.failed, 2);
  cr_expect_eq(h.progress, 6 + 1);
  cr_expect_eq(h.last, 1);
  db_close(d);
  sweep_free(s);
}

static void count_checking(void *ctx, const sweep_progress *p) {
  size_t *calls = ctx;
  if (p->checking) {
    cr_expect_eq(p->done, (calls[0] + 1) * SWEEP_CHECK_EVERY);
    cr_expect_eq(p->todo, calls[1]);
    calls[0]++;
  }
}

/* Issue 24, 16: a sweep of millions of points spent tens of seconds
 * looking its points up in the store with no output; the look-up reports
 * progress (checking) every SWEEP_CHECK_EVERY points. */
Test(sweep, the_store_look_up_reports_progress) {
  size_t n = 2 * SWEEP_CHECK_EVERY + 10, len = 0, cap = 16 * n + 64;
  char *text = malloc(cap);
  len += (size_t)snprintf(text, cap, "{\"seeds\": [");
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(text + len, cap - len, "%s%zu", i ? "," : "", i);
  snprintf(text + len, cap - len, "]}");
  err e = {0};
  sweep *s = parse(text, &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_assert_eq(sweep_resolve(s, &e), ERR_OK, "%s", e.msg);
  db *d = db_open(support_path("look.db"), &e);
  cr_assert_not_null(d, "%s", e.msg);
  size_t calls[2] = {0, n}, missing, stale;
  sweep_opts o = {.progress = count_checking, .hook_ctx = calls};
  size_t *todo = sweep_missing(s, d, &o, &missing, &stale, &e);
  cr_assert_not_null(todo, "%s", e.msg);
  cr_expect_eq(missing, n);
  cr_expect_eq(calls[0], 2, "reported at 65536 and 131072");
  free(todo);
  db_close(d);
  sweep_free(s);
  free(text);
}
