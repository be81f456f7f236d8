/* test_timeline: the Chrome Trace Event JSON that `geodes simulate
 * --timeline` writes, checked as Perfetto reads it: one JSON object with a
 * traceEvents array; "M" metadata naming every process (device) and every
 * thread used; "X" events with a string name, integer pid/tid, finite ts
 * and dur >= 0 in microseconds (the task times / 1000); no two X events of
 * one thread overlapping (the format allows only nesting, Perfetto drops the
 * rest); names from user files escaped. Compared against the task records
 * (hand-made, and the engine's through sim_run). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/graph.h"
#include "sim/timeline.h"
#include "tests/support.h"

TestSuite(timeline, .init = support_dir_make, .fini = support_dir_remove);

#define MAXTRACKS 4096

typedef struct track {
  int pid, tid;
  double *t0, *t1;
  size_t n, cap;
  bool named;
} track;

typedef struct checked {
  size_t x, tracks, counters;
  double end_us;  /* the latest ts + dur */
  int max_tid;
} checked;

static track *track_of(track *tr, size_t *n, int pid, int tid) {
  for (size_t i = 0; i < *n; i++)
    if (tr[i].pid == pid && tr[i].tid == tid) return &tr[i];
  cr_assert_lt(*n, MAXTRACKS);
  tr[*n] = (track){.pid = pid, .tid = tid};
  return &tr[(*n)++];
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Checks the structure of the trace in j for ndevices devices; returns the
 * counts. Every assertion names the event index. */
static checked check_trace(json_t *j, int ndevices) {
  cr_assert(json_is_object(j));
  json_t *ev = json_object_get(j, "traceEvents");
  cr_assert(json_is_array(ev), "traceEvents is not an array");
  track *tr = calloc(MAXTRACKS, sizeof *tr);
  bool *proc = calloc((size_t)ndevices + 1, sizeof *proc);
  size_t ntr = 0;
  checked c = {0};
  for (size_t i = 0; i < json_array_size(ev); i++) {
    json_t *e = json_array_get(ev, i);
    const char *ph = json_string_value(json_object_get(e, "ph"));
    cr_assert_not_null(ph, "event %zu: no ph", i);
    cr_assert(json_is_string(json_object_get(e, "name")), "event %zu", i);
    json_t *pid = json_object_get(e, "pid");
    cr_assert(json_is_integer(pid), "event %zu: pid", i);
    int p = (int)json_integer_value(pid);
    /* pid ndevices: the "links" process of the counter tracks */
    cr_assert(p >= 0 && p <= ndevices, "event %zu: pid %d", i, p);
    const char *name = json_string_value(json_object_get(e, "name"));
    if (strcmp(ph, "M") == 0) {
      const char *v = json_string_value(
          json_object_get(json_object_get(e, "args"), "name"));
      cr_assert_not_null(v, "event %zu: metadata without args.name", i);
      if (strcmp(name, "process_name") == 0) {
        proc[p] = true;
      } else {
        cr_assert_str_eq(name, "thread_name", "event %zu", i);
        json_t *tid = json_object_get(e, "tid");
        cr_assert(json_is_integer(tid), "event %zu: tid", i);
        track_of(tr, &ntr, p, (int)json_integer_value(tid))->named = true;
      }
      continue;
    }
    if (strcmp(ph, "C") == 0) {
      json_t *args = json_object_get(e, "args");
      double ts = json_number_value(json_object_get(e, "ts"));
      cr_assert_eq(p, ndevices, "event %zu: a counter off the links", i);
      cr_assert(isfinite(ts) && ts >= 0, "event %zu: ts", i);
      cr_assert(json_number_value(json_object_get(args, "gbps")) >= 0);
      cr_assert(json_is_integer(json_object_get(args, "flows")));
      c.counters++;
      continue;
    }
    cr_assert_lt(p, ndevices, "event %zu: a slice off the devices", i);
    cr_assert_str_eq(ph, "X", "event %zu", i);
    json_t *tid = json_object_get(e, "tid");
    json_t *ts = json_object_get(e, "ts"), *dur = json_object_get(e, "dur");
    cr_assert(json_is_integer(tid), "event %zu: tid", i);
    cr_assert(json_is_number(ts) && json_is_number(dur), "event %zu", i);
    double t0 = json_number_value(ts), d = json_number_value(dur);
    cr_assert(isfinite(t0) && isfinite(d) && t0 >= 0 && d >= 0,
              "event %zu: ts %g dur %g", i, t0, d);
    track *k = track_of(tr, &ntr, p, (int)json_integer_value(tid));
    if (k->n == k->cap) {
      k->cap = k->cap ? 2 * k->cap : 16;
      k->t0 = realloc(k->t0, k->cap * sizeof *k->t0);
      k->t1 = realloc(k->t1, k->cap * sizeof *k->t1);
    }
    k->t0[k->n] = t0;
    k->t1[k->n++] = t0 + d;
    if (t0 + d > c.end_us) c.end_us = t0 + d;
    if (k->tid > c.max_tid) c.max_tid = k->tid;
    c.x++;
  }
  for (int p = 0; p < ndevices; p++)
    cr_assert(proc[p], "device %d has no process_name", p);
  cr_assert(!c.counters || proc[ndevices], "the links process has no name");
  for (size_t i = 0; i < ntr; i++) {
    track *k = &tr[i];
    cr_assert(k->named, "pid %d tid %d has no thread_name", k->pid, k->tid);
    if (k->n == 0) continue; /* a stream that never ran */
    /* sorted by start, a slice must start at or after the previous end
     * (equal starts: the two are then sorted by start only, so check the
     * pairs in both orders through sorted starts and ends) */
    qsort(k->t0, k->n, sizeof *k->t0, cmp_double);
    qsort(k->t1, k->n, sizeof *k->t1, cmp_double);
    for (size_t m = 1; m < k->n; m++)
      cr_assert(k->t0[m] >= k->t1[m - 1] - 1e-6,
                "pid %d tid %d: slices overlap near %.3f us", k->pid, k->tid,
                k->t0[m]);
    free(k->t0);
    free(k->t1);
  }
  c.tracks = ntr;
  free(tr);
  free(proc);
  return c;
}

static json_t *load(const char *path) {
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  cr_assert_not_null(j, "%s:%d: %s", path, je.line, je.text);
  return j;
}

static sim_task xfer(int a, int b, int64_t t0, int64_t left, int64_t done) {
  return (sim_task){.kind = SIM_TASK_XFER, .role = SIM_ROLE_DP, .dev = a,
                    .dst = b, .mb = 0, .t_start = t0, .t_left = left,
                    .t_done = done};
}

/* Hand-made records: three transfers from device 0 in flight together
 * (0->1 twice, 0->2), one compute, one task never reached. */
Test(timeline, overlapping_transfers_get_their_own_tracks) {
  sim_task t[] = {
      xfer(0, 1, 1000, 5000, 9000),
      xfer(0, 1, 2000, 6000, 10000),
      xfer(0, 2, 5000, 7000, 12345),
      {.kind = SIM_TASK_COMPUTE, .role = SIM_ROLE_FWD, .dev = 2, .dst = -1,
       .mb = 3, .dur_ns = 1500, .t_start = 0, .t_left = 1500,
       .t_done = 1500},
      xfer(1, 2, -1, -1, -1),
  };
  const char *names[] = {"a\"b\\c", "tab\there", NULL};
  const char *path = support_path("hand.json");
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  sim_timeline_write(f, t, 5, 3, names, NULL, NULL);
  fclose(f);
  json_t *j = load(path);
  checked c = check_trace(j, 3);
  /* 3 transfers x (send, receive) + 1 compute */
  cr_assert_eq(c.x, 7);
  cr_assert_float_eq(c.end_us, 12.345, 1e-9);
  /* device 0 sends [1,5) [2,6) [5,7): two lanes, tids 1 and 4; device 1
   * receives [1,9) [2,10): two lanes, tids 2 and 5 */
  cr_assert_eq(c.max_tid, 5, "%d", c.max_tid);
  json_t *ev = json_object_get(j, "traceEvents");
  const char *want[] = {"0 a\"b\\c", "1 tab\there", "device 2"};
  int seen = 0;
  for (size_t i = 0; i < json_array_size(ev); i++) {
    json_t *e = json_array_get(ev, i);
    if (strcmp(json_string_value(json_object_get(e, "name")),
               "process_name") == 0) {
      int p = (int)json_integer_value(json_object_get(e, "pid"));
      cr_assert_str_eq(json_string_value(json_object_get(
                           json_object_get(e, "args"), "name")),
                       want[p]);
      seen++;
    }
    if (strcmp(json_string_value(json_object_get(e, "name")), "fwd 3") == 0) {
      cr_assert_eq(json_integer_value(json_object_get(e, "pid")), 2);
      cr_assert_eq(json_integer_value(json_object_get(e, "tid")), 0);
      cr_assert_float_eq(json_number_value(json_object_get(e, "dur")), 1.5,
                         1e-9);
    }
  }
  cr_assert_eq(seen, 3);
  json_decref(j);
}

/* `geodes simulate --timeline` on a small scenario whose site name needs
 * escaping, for each DP algorithm (central-ps and sharded-ps keep several
 * transfers of one device in flight): the trace is well formed, ends at the
 * iteration time and holds every compute once and every transfer twice. */
Test(timeline, simulate_writes_a_perfetto_clean_trace) {
  const char *scen = support_write_file(
      support_path("q.json"),
      "{\"name\": \"q\", \"sites\": [{\"name\": \"x\\\"y\", \"devices\": 4, "
      "\"gpu\": \"V100\", \"nic_gbps\": 10}, {\"name\": \"z\", \"devices\": "
      "4, \"gpu\": \"V100\", \"nic_gbps\": 10}],\n"
      "\"network\": {\"latency_ms\": 30, \"bandwidth_gbps\": 2},\n"
      "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 16, "
      "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 4, "
      "\"micro_batches_per_pass\": 2, \"runtime\": \"dtfm\"}}\n");
  const char *algos[] = {"central-ps", "ring", "sharded-ps"};
  for (int i = 0; i < 3; i++) {
    const char *out = support_path("tl-%d.json", i);
    json_t *res = support_geodes_json("simulate '%s' --method megatron "
                                      "--dp-algo %s --timeline '%s' --json",
                                      scen, algos[i], out);
    double it = json_number_value(json_object_get(res, "iteration_s"));
    long long flows = json_integer_value(json_object_get(res, "flows"));
    json_decref(res);
    json_t *j = load(out);
    checked c = check_trace(j, 8);
    cr_assert(fabs(c.end_us - it * 1e6) < 1e-3, "%s: ends %.3f us, %.3f s",
              algos[i], c.end_us, it);
    /* 8 devices x 2 passes x 2 micro-batches x (fwd + bwd) + 8 optimizer
     * steps + DT-FM's 3 barriers (2 passes, the end); each transfer on its
     * sender and its receiver */
    cr_assert_eq(c.x, 8 * 2 * 2 * 2 + 8 + 3 + 2 * (size_t)flows, "%s",
                 algos[i]);
    if (i != 1) cr_assert_gt(c.max_tid, 2, "%s: no overlap lanes", algos[i]);
    json_decref(j);
  }
}

/* Bytes per link: from the send slices' args, and from the integral of the
 * link's rate counter (Gbit/s between change points). */
#define MAXLINKS 64
typedef struct link_bytes {
  char name[64];
  double slices, counter, last_ts, last_gbps;
} link_bytes;

static link_bytes *link_of(link_bytes *v, int *n, const char *name) {
  for (int i = 0; i < *n; i++)
    if (!strcmp(v[i].name, name)) return &v[i];
  cr_assert_lt(*n, MAXLINKS);
  snprintf(v[*n].name, sizeof v[*n].name, "%s", name);
  return &v[(*n)++];
}

Test(timeline, counters_and_slices_agree_on_bytes) {
  const char *scen = support_write_file(
      support_path("c.json"),
      "{\"name\": \"c\", \"sites\": [{\"name\": \"x\", \"devices\": 2, "
      "\"gpu\": \"V100\", \"nic_gbps\": 10}, {\"name\": \"z\", \"devices\": "
      "2, \"gpu\": \"V100\", \"nic_gbps\": 10}],\n"
      "\"network\": {\"latency_ms\": 30, \"bandwidth_gbps\": 2},\n"
      "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 8, "
      "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 2, \"dp_algo\": "
      "\"ring\"}}\n");
  support_run r = {0};
  const char *out = support_path("c-tl.json");
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method megatron "
                                  "--timeline '%s'", scen, out), 0, "%s", r.err);
  json_t *j = load(out);
  checked c = check_trace(j, 4);
  cr_assert_gt(c.counters, 0);
  json_t *ev = json_object_get(j, "traceEvents");
  link_bytes v[MAXLINKS] = {0};
  int n = 0;
  for (size_t i = 0; i < json_array_size(ev); i++) {
    json_t *e = json_array_get(ev, i), *args = json_object_get(e, "args");
    const char *ph = json_string_value(json_object_get(e, "ph"));
    if (!strcmp(ph, "X") && json_object_get(args, "peer")) {
      cr_assert(json_is_number(json_object_get(args, "bytes")), "%zu", i);
      cr_assert(json_is_number(json_object_get(args, "rate_gbps")), "%zu", i);
      cr_assert(json_is_string(json_object_get(args, "cause")), "%zu", i);
      const char *l = json_string_value(json_object_get(args, "link"));
      cr_assert_not_null(l, "event %zu: no link", i);
      if (json_integer_value(json_object_get(e, "tid")) % 3 == 1) /* sent */
        link_of(v, &n, l)->slices +=
            json_number_value(json_object_get(args, "bytes"));
    } else if (!strcmp(ph, "C")) {
      link_bytes *k =
          link_of(v, &n, json_string_value(json_object_get(e, "name")));
      double ts = json_number_value(json_object_get(e, "ts"));
      k->counter += k->last_gbps * (ts - k->last_ts) * 1e3 / 8;
      k->last_ts = ts;
      k->last_gbps = json_number_value(json_object_get(args, "gbps"));
    }
  }
  cr_assert_geq(n, 3, "links inside x, inside z and between");
  for (int i = 0; i < n; i++) {
    cr_assert_eq(v[i].last_gbps, 0, "%s ends idle", v[i].name);
    cr_assert(fabs(v[i].counter - v[i].slices) <= 1e-6 * v[i].slices + 1,
              "%s: counters %.17g vs slices %.17g bytes", v[i].name,
              v[i].counter, v[i].slices);
  }
  json_decref(j);
  support_run_clear(&r);
}

/* --timeline-iterations keeps the slices of the iterations asked, and
 * only those: a third of three equal iterations, all inside the second. */
Test(timeline, timeline_iterations_keep_a_window) {
  const char *scen = support_write_file(
      support_path("w.json"),
      "{\"name\": \"w\", \"sites\": [{\"name\": \"x\", \"devices\": 2, "
      "\"gpu\": \"V100\"}], \"network\": {\"latency_ms\": 1, "
      "\"bandwidth_gbps\": 10},\n\"workload\": {\"model\": \"gpt3-xl\", "
      "\"layers\": 4, \"batch\": 4, \"micro_batch\": 1, \"stages\": 2, "
      "\"replicas\": 1}}\n");
  support_run r = {0};
  const char *all = support_path("w-all.json"), *one = support_path("w-1.json");
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method megatron "
                                  "--iterations 3 --timeline '%s' --json",
                              scen, all), 0, "%s", r.err);
  json_t *res = json_loads(r.out, 0, NULL);
  json_t *its = json_object_get(res, "iterations");
  cr_assert_eq(json_array_size(its), 3);
  double t0 = json_number_value(json_object_get(json_array_get(its, 1), "start_s"));
  double t1 = json_number_value(json_object_get(json_array_get(its, 2), "start_s"));
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method megatron "
                                  "--iterations 3 --timeline '%s' "
                                  "--timeline-iterations 1:1", scen, one),
               0, "%s", r.err);
  json_t *ja = load(all), *j1 = load(one);
  checked ca = check_trace(ja, 2), c1 = check_trace(j1, 2);
  cr_assert_eq(3 * c1.x, ca.x, "%zu of %zu slices", c1.x, ca.x);
  json_t *ev = json_object_get(j1, "traceEvents");
  for (size_t i = 0; i < json_array_size(ev); i++) {
    json_t *e = json_array_get(ev, i);
    if (strcmp(json_string_value(json_object_get(e, "ph")), "X")) continue;
    double ts = json_number_value(json_object_get(e, "ts")) * 1e-6;
    cr_assert(ts >= t0 - 1e-9 && ts <= t1 + 1e-9, "%g outside [%g, %g]", ts,
              t0, t1);
  }
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method megatron "
                                  "--timeline-iterations 1:2", scen), 2);
  cr_assert(strstr(r.err, "--timeline-iterations"), "%s", r.err);
  json_decref(res);
  json_decref(ja);
  json_decref(j1);
  support_run_clear(&r);
}

/* Issue 35, 14: a window past the run's iterations gave an empty timeline,
 * exit 0 and no word. Refused before the run when --iterations says how
 * many, after it (the file then left as it was) under --duration-s. */
Test(timeline, a_window_past_the_run_is_refused) {
  support_run r = {0};
  const char *tl = support_path("past.json");
  cr_expect_eq(support_geodes(&r, "simulate multi-dc --method dtfm-identity "
                              "--layers 8 --iterations 3 --timeline '%s' "
                              "--timeline-iterations 5:9", tl), 2);
  cr_expect_str_eq(r.err, "geodes simulate: --timeline-iterations '5:9': the "
                   "run has 3 iterations (0 to 2), so the timeline would "
                   "hold none\nTry 'geodes simulate --help'.\n");
  cr_expect(access(tl, F_OK) != 0, "no timeline");
  support_write_file(tl, "mine\n");
  cr_expect_eq(support_geodes(&r, "simulate multi-dc --method dtfm-identity "
                              "--layers 8 --duration-s 40 --timeline '%s' "
                              "--timeline-iterations 5:", tl), 1);
  char want[1024];
  snprintf(want, sizeof want, "geodes: %s: the timeline's iterations start at "
           "5, and the run kept ", tl);
  cr_expect(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
  cr_expect(strstr(r.err, "it would hold none\n"), "%s", r.err);
  char *kept = support_read_file(tl, NULL);
  cr_expect_str_eq(kept, "mine\n", "the old file stays");
  free(kept);
  support_run_clear(&r);
}
