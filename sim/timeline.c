/* timeline: Chrome Trace Event JSON writer (streamed with fprintf: a run has
 * up to millions of events, more than one JSON tree should hold).
 * Invariant: every event has ts >= 0 and dur >= 0 in microseconds, pid =
 * device; the "X" events of one thread never overlap (Perfetto, following
 * the format's spec, drops slices that overlap without nesting), so each
 * stream is split into lanes: lane 0 of stream k (0 compute, 1 send, 2
 * receive) is tid k, lane j > 0 is tid 3 j + k. Transfers that are not on a
 * stream (gradient chunks in flight together) take the extra lanes. Every
 * pid and tid used has its process_name / thread_name metadata event. */
#include "sim/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "sim/critpath.h"
#include "sim/linkstats.h"

#define NSTREAMS 3

const char *const sim_timeline_role_names[SIM_TIMELINE_NROLES] = {
    "fwd", "bwd", "optimizer", "act", "grad", "dp", "sync", "barrier",
    "p2p call"};
#define role_names sim_timeline_role_names
static const char *const stream_names[NSTREAMS] = {"compute", "send",
                                                   "receive"};

/* One "X" event: a task on one device's stream, and the lane it got. */
typedef struct slice {
  int64_t t0, t1;
  int dev, stream, lane;
  uint32_t task;
} slice;

static int slice_cmp(const void *x, const void *y) {
  const slice *a = x, *b = y;
  if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
  if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
  if (a->t0 != b->t0) return a->t0 < b->t0 ? -1 : 1;
  if (a->t1 != b->t1) return a->t1 > b->t1 ? -1 : 1;
  return a->task < b->task ? -1 : a->task > b->task;
}

/* The slices of the finished tasks, sorted by (device, stream, start), each
 * on the lowest lane free at its start (greedy interval partitioning: as
 * few lanes as the most slices open at once). *nlanes gets per (device,
 * stream) the lanes used. */
static slice *slices(const sim_task *t, uint32_t n, int ndevices, size_t *ns,
                     int *nlanes) {
  slice *v = mem_alloc(((size_t)n * 2 + 1) * sizeof *v);
  size_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    const sim_task *x = &t[i];
    if (x->t_start < 0) continue;
    if (x->kind == SIM_TASK_COMPUTE) {
      v[k++] = (slice){.t0 = x->t_start, .t1 = x->t_done, .dev = x->dev,
                       .stream = 0, .task = i};
    } else if (x->kind == SIM_TASK_XFER) { /* sent, then received */
      v[k++] = (slice){.t0 = x->t_start, .t1 = x->t_left, .dev = x->dev,
                       .stream = 1, .task = i};
      v[k++] = (slice){.t0 = x->t_start, .t1 = x->t_done, .dev = x->dst,
                       .stream = 2, .task = i};
    }
  }
  qsort(v, k, sizeof *v, slice_cmp);
  int64_t *end = NULL;
  size_t cap = 0;
  for (size_t lo = 0, hi; lo < k; lo = hi) {
    int used = 0;
    for (hi = lo; hi < k && v[hi].dev == v[lo].dev &&
                  v[hi].stream == v[lo].stream; hi++) {
      int j = 0;
      while (j < used && end[j] > v[hi].t0) j++;
      if (j == used) mem_grow((void **)&end, &cap, (size_t)++used, sizeof *end);
      end[j] = v[hi].t1;
      v[hi].lane = j;
    }
    if (v[lo].dev >= 0 && v[lo].dev < ndevices)
      nlanes[v[lo].dev * NSTREAMS + v[lo].stream] = used;
  }
  free(end);
  *ns = k;
  return v;
}

/* s as a JSON string body: quotes, backslashes and control characters
 * escaped (site names come from user files). */
static void put_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
}

static void metadata(FILE *f, int ndevices, const char *const *device_name,
                     const int *nlanes) {
  for (int d = 0; d < ndevices; d++) {
    fprintf(f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
            "\"args\":{\"name\":\"", d ? "," : "", d);
    if (device_name && device_name[d]) {
      fprintf(f, "%d ", d);
      put_escaped(f, device_name[d]);
    } else {
      fprintf(f, "device %d", d);
    }
    fputs("\"}}", f);
    for (int s = 0; s < NSTREAMS; s++) {
      int lanes = nlanes[d * NSTREAMS + s] > 1 ? nlanes[d * NSTREAMS + s] : 1;
      for (int j = 0; j < lanes; j++) {
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
                "\"tid\":%d,\"args\":{\"name\":\"%s", d, NSTREAMS * j + s,
                stream_names[s]);
        if (j) fprintf(f, " %d", j + 1);
        fputs("\"}}", f);
      }
    }
  }
}

/* The file's head: its metadata (the transport that ran), then the
 * events' list. */
static void head(FILE *f, const char *meta) {
  fputs("{\"displayTimeUnit\":\"ms\",", f);
  if (meta) {
    fputs("\"otherData\":{\"transport\":\"", f);
    put_escaped(f, meta);
    fputs("\"},", f);
  }
  fputs("\"traceEvents\":[", f);
}

/* What a communication slice says beyond its peer and bytes, when the
 * network is known: each transfer's span on the wire (w0, w1 per task). */
typedef struct facts {
  const sim_timeline_net *net;
  const int64_t *w0, *w1;
} facts;

/* The args of transfer k (task id) of the run: peer, bytes, and with the
 * network its link, mean rate on the wire and that rate's cause. */
static void xfer_args(FILE *f, const slice *x, const sim_task *k, uint32_t id,
                      const int *dmap, const facts *fx) {
  int peer = x->stream == 1 ? k->dst : k->dev;
  fprintf(f, ",\"args\":{\"peer\":%d,\"bytes\":%.17g", dmap ? dmap[peer] : peer,
          k->bytes);
  if (fx && fx->net) {
    const scenario *s = fx->net->s;
    int a = dmap ? dmap[k->dev] : k->dev, b = dmap ? dmap[k->dst] : k->dst;
    fputs(",\"link\":\"", f);
    put_escaped(f, s->sites[s->device_site[a]].name);
    fputc('>', f);
    put_escaped(f, s->sites[s->device_site[b]].name);
    int64_t span = fx->w1[id] - fx->w0[id];
    double gbps = span > 0 ? 8 * k->bytes / (double)span : 0;
    sim_task m = *k;
    m.dev = a, m.dst = b;
    sim_flow_bounds bd = sim_critpath_bounds(s, fx->net->o, &m);
    fprintf(f, "\",\"rate_gbps\":%.9g,\"cause\":\"%s\"", gbps,
            span > 0 ? sim_cp_cause_names[sim_critpath_cause(&bd, gbps)]
                     : "none");
  }
  fputc('}', f);
}

/* One slice as a complete ("X") event, after a comma unless it is the
 * first event; devices (and a transfer's peer) renumbered by dmap (NULL:
 * as they are). */
static void write_slice(FILE *f, bool comma, const slice *x, const sim_task *k,
                        const int *dmap, const facts *fx) {
  fprintf(f, "%s\n{\"name\":\"%s", comma ? "," : "", role_names[k->role]);
  if (k->mb >= 0) fprintf(f, " %d", k->mb);
  fprintf(f, "\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
          "\"dur\":%.3f", dmap ? dmap[x->dev] : x->dev,
          NSTREAMS * x->lane + x->stream, (double)x->t0 * 1e-3,
          (double)(x->t1 - x->t0) * 1e-3);
  if (x->stream) xfer_args(f, x, k, x->task, dmap, fx);
  fputc('}', f);
}

/* The counter tracks of the links of the n tasks t (devices as in the
 * net's scenario) in process pid: at each change of a link's rate, its
 * Gbit/s and its flows on the wire. */
static void counters(FILE *f, const sim_task *t, uint32_t n, int pid,
                     const sim_timeline_net *net) {
  int64_t end = 0;
  for (uint32_t i = 0; i < n; i++)
    if (t[i].t_done > end) end = t[i].t_done;
  sim_linkstats ls;
  sim_linkstats_build(net->s, net->o, t, n, 0, end, true, &ls);
  for (int i = 0; i < ls.nres; i++) {
    const sim_ls_res *r = &ls.res[i];
    if (r->kind != SIM_LS_LINK) continue;
    for (size_t k = 0; k < r->npts; k++) {
      fputs(",\n{\"name\":\"", f);
      put_escaped(f, net->s->sites[r->a].name);
      fputc('>', f);
      put_escaped(f, net->s->sites[r->b].name);
      fprintf(f, "\",\"ph\":\"C\",\"pid\":%d,\"ts\":%.3f,\"args\":"
              "{\"gbps\":%.17g,\"flows\":%d}}", pid, (double)r->t[k] * 1e-3,
              r->rate_gbps[k], r->inflight[k]);
    }
  }
  sim_linkstats_free(&ls);
}

/* The "links" process's name. */
static void links_process(FILE *f, int pid) {
  fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
          "\"args\":{\"name\":\"links\"}}", pid);
}

/* facts of the n tasks t (devices as in net's scenario); free_facts. */
static facts facts_of(const sim_timeline_net *net, const sim_task *t,
                      uint32_t n) {
  facts fx = {.net = net};
  if (!net) return fx;
  int64_t *w0 = mem_alloc(((size_t)n + 1) * sizeof *w0);
  int64_t *w1 = mem_alloc(((size_t)n + 1) * sizeof *w1);
  sim_linkstats_wire(net->s, t, n, w0, w1);
  fx.w0 = w0;
  fx.w1 = w1;
  return fx;
}

static void facts_free(facts *fx) {
  free((void *)fx->w0);
  free((void *)fx->w1);
}

void sim_timeline_write(FILE *f, const sim_task *t, uint32_t n, int ndevices,
                        const char *const *device_name, const char *meta,
                        const sim_timeline_net *net) {
  int *nlanes = mem_calloc((size_t)ndevices * NSTREAMS + 1, sizeof *nlanes);
  size_t ns;
  slice *v = slices(t, n, ndevices, &ns, nlanes);
  facts fx = facts_of(net, t, n);
  head(f, meta);
  metadata(f, ndevices, device_name, nlanes);
  for (size_t i = 0; i < ns; i++)
    write_slice(f, ndevices || i, &v[i], &t[v[i].task], NULL, &fx);
  if (net && ndevices) {
    links_process(f, ndevices);
    counters(f, t, n, ndevices, net);
  }
  fputs("\n]}\n", f);
  facts_free(&fx);
  free(v);
  free(nlanes);
}

int sim_timeline_save(const char *path, const sim_task *t, uint32_t n,
                      int ndevices, const char *const *device_name,
                      const char *meta, const sim_timeline_net *net, err *e) {
  FILE *f = fopen(path, "w");
  if (!f)
    return err_set(e, ERR_IO, "%s:0: cannot write the timeline: %s", path,
                   strerror(errno));
  sim_timeline_write(f, t, n, ndevices, device_name, meta, net);
  /* a failed fprintf (disk full) leaves the error flag; fclose may not */
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad)
    return err_set(e, ERR_IO, "%s:0: cannot write the timeline: %s", path,
                   errno ? strerror(errno) : "write error");
  return ERR_OK;
}

/* ---- a whole run, streamed ---- */

struct sim_timeline_stream {
  FILE *f;
  char *path;
  const scenario *s;
  int *named;  /* [devices x streams]: lanes with a thread_name so far */
  bool any;    /* an event was written (the next needs a comma) */
  sim_timeline_net net; /* net.o NULL: not known */
};

void sim_timeline_stream_net(sim_timeline_stream *t,
                             const transport_options *o) {
  t->net = (sim_timeline_net){t->s, o};
  if (o && t->s->ndevices) links_process(t->f, t->s->ndevices);
}

sim_timeline_stream *sim_timeline_stream_open(const char *path,
                                              const scenario *s,
                                              const char *meta, err *e) {
  FILE *f = fopen(path, "w");
  if (!f) {
    err_set(e, ERR_IO, "%s:0: cannot write the timeline: %s", path,
            strerror(errno));
    return NULL;
  }
  sim_timeline_stream *t = mem_calloc(1, sizeof *t);
  t->f = f;
  t->path = mem_strdup(path);
  t->s = s;
  t->named = mem_calloc((size_t)s->ndevices * NSTREAMS + 1, sizeof *t->named);
  const char **names = mem_alloc(((size_t)s->ndevices + 1) * sizeof *names);
  for (int d = 0; d < s->ndevices; d++)
    names[d] = s->sites[s->device_site[d]].name;
  head(f, meta);
  for (int i = 0; i < s->ndevices * NSTREAMS; i++) t->named[i] = 1;
  metadata(f, s->ndevices, names, t->named);
  t->any = s->ndevices > 0;
  free(names);
  return t;
}

/* thread_name events for the lanes of (pid, stream) not named yet. */
static void name_lanes(sim_timeline_stream *t, int pid, int stream, int lanes) {
  int *named = &t->named[pid * NSTREAMS + stream];
  for (; *named < lanes; (*named)++)
    fprintf(t->f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
            "\"tid\":%d,\"args\":{\"name\":\"%s %d\"}}", pid,
            NSTREAMS * *named + stream, stream_names[stream], *named + 1);
}

void sim_timeline_stream_add(sim_timeline_stream *t, const sim_task *tasks,
                             uint32_t n, const int *dmap) {
  int nd = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (tasks[i].dev >= nd) nd = tasks[i].dev + 1;
    if (tasks[i].dst >= nd) nd = tasks[i].dst + 1;
  }
  int *nlanes = mem_calloc((size_t)nd * NSTREAMS + 1, sizeof *nlanes);
  size_t ns;
  slice *v = slices(tasks, n, nd, &ns, nlanes);
  for (int d = 0; d < nd; d++)
    for (int st = 0; st < NSTREAMS; st++)
      name_lanes(t, dmap ? dmap[d] : d, st, nlanes[d * NSTREAMS + st]);
  /* the network's facts read the run's devices as the scenario's */
  sim_task *mapped = t->net.o ? mem_alloc(((size_t)n + 1) * sizeof *mapped)
                              : NULL;
  for (uint32_t i = 0; mapped && i < n; i++) {
    mapped[i] = tasks[i];
    if (dmap && mapped[i].dev >= 0) mapped[i].dev = dmap[mapped[i].dev];
    if (dmap && mapped[i].dst >= 0) mapped[i].dst = dmap[mapped[i].dst];
  }
  facts fx = facts_of(t->net.o ? &t->net : NULL, mapped, n);
  for (size_t i = 0; i < ns; i++) {
    if (v[i].dev < 0) continue;
    write_slice(t->f, t->any, &v[i], &tasks[v[i].task], dmap, &fx);
    t->any = true;
  }
  if (mapped && t->s->ndevices) counters(t->f, mapped, n, t->s->ndevices, &t->net);
  facts_free(&fx);
  free(mapped);
  free(v);
  free(nlanes);
}

static void instant(sim_timeline_stream *t, const fault_event *ev, int pid) {
  fprintf(t->f, "%s\n{\"name\":\"%s\",\"ph\":\"i\",\"s\":\"%s\",", t->any ? "," : "",
          fault_kind_name(ev->kind), pid < 0 ? "g" : "p");
  t->any = true;
  if (pid >= 0) fprintf(t->f, "\"pid\":%d,\"tid\":0,", pid);
  fprintf(t->f, "\"ts\":%.3f,\"args\":{\"line\":%d}}", (double)ev->t_ns * 1e-3,
          ev->line);
}

void sim_timeline_stream_faults(sim_timeline_stream *t, const fault_trace *f,
                                const scenario *s) {
  for (size_t i = 0; i < fault_count(f); i++) {
    const fault_event *ev = fault_event_at(f, i);
    if (ev->kind == FAULT_SITE_DOWN) {
      const scenario_site *st = &s->sites[ev->a];
      for (int d = 0; d < st->ndevices; d++) instant(t, ev, st->first_device + d);
    } else {
      instant(t, ev, fault_kind_target(ev->kind) == FAULT_TARGET_DEVICE ? ev->a : -1);
    }
  }
}

int sim_timeline_stream_close(sim_timeline_stream *t, err *e) {
  fputs("\n]}\n", t->f);
  bool bad = ferror(t->f) != 0;
  int rc = ERR_OK;
  if (fclose(t->f) != 0 || bad)
    rc = err_set(e, ERR_IO, "%s:0: cannot write the timeline: %s", t->path,
                 errno ? strerror(errno) : "write error");
  free(t->path);
  free(t->named);
  free(t);
  return rc;
}
