/* iperf3: see iperf3.h. A file is a sequence of JSON objects separated by
 * white space; each is decoded alone (jansson stops after one value), so
 * appended runs cost the memory of one test at a time, and every message
 * cites the line in the whole file (the lines before the object are
 * counted and handed to jfield).
 * Choices where iperf3 leaves room:
 * - the round trip is what the sender's kernel measured (tcpi_rtt, in
 *   microseconds on Linux and FreeBSD; macOS's tcpi_srtt is in
 *   milliseconds, told by start.system_info), so a receiver's file has
 *   none; a -R client's file gets it from server_output_json
 *   (--get-server-output) when that is there;
 * - a stream whose mean_rtt is 0 took no sample (iperf3 writes 0 then). */
#include "traces/iperf3.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/jfield.h"
#include "base/mem.h"

/* mean_rtt's units in a millisecond: tcpi_rtt (Linux, FreeBSD) is in
 * microseconds; the tcpi_srtt iperf3 reads on macOS (tcp_connection_info)
 * in milliseconds. Divided once (the sum by n x 1000), so that a whole
 * number of microseconds keeps its digits: 98500 us is 98.5 ms. */
#define IPERF3_RTT_PER_MS 1000.0
#define IPERF3_RTT_PER_MS_DARWIN 1.0
#define IPERF3_MAX_STREAMS 1e6 /* -P: iperf3 allows 128; room to spare */

bool iperf3_local_sends(const iperf3_run *r) { return r->server == r->reverse; }

static void run_free(iperf3_run *r) {
  free(r->file);
  free(r->local);
  free(r->remote);
  free(r->peer_name);
  free(r->cookie);
}

void iperf3_runs_free(iperf3_runs *r) {
  for (size_t i = 0; i < r->n; i++) run_free(&r->v[i]);
  free(r->v);
  *r = (iperf3_runs){0};
}

/* A number at key of obj in [lo, inf) (> lo when open); def when absent
 * unless required. */
static int number(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
                  const char *key, double lo, bool open, bool required,
                  double def, double *out) {
  jfield_num_spec spec = {.lo = lo, .hi = HUGE_VAL, .open = open,
                          .required = required, .def = def};
  return jfield_num(d, s, obj, key, &spec, out);
}

/* The scale of the sender's mean_rtt, from the start object of the file
 * (or server output) whose streams report it. */
static double rtt_unit(const json_t *start) {
  const char *sys = json_string_value(json_object_get(start, "system_info"));
  return sys && strncmp(sys, "Darwin", 6) == 0 ? IPERF3_RTT_PER_MS_DARWIN
                                                : IPERF3_RTT_PER_MS;
}

/* The mean of end.streams[].sender.mean_rtt over the streams with a
 * sample, in ms (NAN: none) of the document whose end is at es; per_ms:
 * mean_rtt's units in a millisecond. */
static int streams_rtt(const jfield_doc *d, const jfield_scope *es,
                       const json_t *end, double per_ms, double *out) {
  *out = NAN;
  const json_t *streams = json_object_get(end, "streams");
  if (!streams) return ERR_OK;
  if (!json_is_array(streams))
    return jfield_fail(d, es, "streams", ERR_PARSE, "must be a list");
  jfield_scope ss = jfield_child(es, "streams");
  double sum = 0;
  int n = 0, rc = ERR_OK;
  for (size_t i = 0; i < json_array_size(streams) && rc == ERR_OK; i++) {
    const json_t *el = json_array_get(streams, i);
    jfield_scope s = jfield_elem(&ss, streams, i);
    if (!json_is_object(el))
      return jfield_fail(d, &s, NULL, ERR_PARSE, "must be an object");
    json_t *snd;
    double rtt = 0;
    jfield_scope sc = jfield_child(&s, "sender");
    if ((rc = jfield_obj(d, &s, el, "sender", false, &snd)) || !snd) continue;
    rc = number(d, &sc, snd, "mean_rtt", 0, false, false, 0, &rtt);
    if (rtt > 0) sum += rtt, n++;
  }
  if (n) *out = sum / ((double)n * per_ms);
  return rc;
}

/* The round trip of a test: its own sender streams', else (a -R client's
 * file) the server's, when --get-server-output put them in the file. */
static int test_rtt(const jfield_doc *d, const json_t *o, iperf3_run *r) {
  jfield_scope top = jfield_top(), es = jfield_child(&top, "end");
  const json_t *start = json_object_get(o, "start"),
               *end = json_object_get(o, "end");
  int rc = streams_rtt(d, &es, end, rtt_unit(start), &r->rtt_ms);
  json_t *so;
  if (rc || !isnan(r->rtt_ms) ||
      (rc = jfield_obj(d, &top, o, "server_output_json", false, &so)) || !so)
    return rc;
  jfield_scope ss = jfield_child(&top, "server_output_json"),
               sse = jfield_child(&ss, "end");
  const json_t *send = json_object_get(so, "end");
  if (!json_is_object(send)) return ERR_OK; /* the server's own failure */
  return streams_rtt(d, &sse, send, rtt_unit(json_object_get(so, "start")),
                     &r->rtt_ms);
}

/* start.test_start: a TCP test in one direction, its streams. */
static int read_test_start(const jfield_doc *d, const jfield_scope *ss,
                           const json_t *start, iperf3_run *r) {
  json_t *ts;
  int rc = jfield_obj(d, ss, start, "test_start", true, &ts);
  if (rc) return rc;
  jfield_scope s = jfield_child(ss, "test_start");
  char *proto = NULL;
  double bidir = 0, reverse = 0, streams = 0;
  if ((rc = jfield_str(d, &s, ts, "protocol", NULL, &proto))) return rc;
  if (strcmp(proto, "TCP") != 0)
    rc = jfield_fail(d, &s, "protocol", ERR_CONFIG,
                     "%s: net import reads TCP tests (a %s test measures no "
                     "TCP window, round trip or loss: run iperf3 without -u "
                     "or --sctp)", proto, proto);
  free(proto);
  if (rc || (rc = number(d, &s, ts, "bidir", 0, false, false, 0, &bidir)))
    return rc;
  if (bidir != 0)
    return jfield_fail(d, &s, "bidir", ERR_CONFIG,
                       "--bidir sends both ways at once: measure each "
                       "direction in a test of its own (-R for the other)");
  if ((rc = number(d, &s, ts, "reverse", 0, false, false, 0, &reverse)) ||
      (rc = number(d, &s, ts, "num_streams", 1, false, true, 0, &streams)))
    return rc;
  char x[ERR_NUM_MAX];
  if (streams > IPERF3_MAX_STREAMS || streams != floor(streams))
    return jfield_fail(d, &s, "num_streams", ERR_RANGE,
                       "must be a whole number of streams up to %g, not %s",
                       IPERF3_MAX_STREAMS, err_num(streams, x));
  r->reverse = reverse != 0;
  r->streams = (int)streams;
  return ERR_OK;
}

/* start.connected[0]: the two ends' addresses. */
static int read_connected(const jfield_doc *d, const jfield_scope *ss,
                          const json_t *start, iperf3_run *r) {
  const json_t *c = json_object_get(start, "connected");
  if (!json_is_array(c) || json_array_size(c) == 0)
    return jfield_fail(d, ss, "connected", c ? ERR_PARSE : ERR_MISSING,
                       "no connection listed (iperf3 lists each stream's "
                       "ends there)");
  jfield_scope cs = jfield_child(ss, "connected"),
               s = jfield_elem(&cs, c, 0);
  const json_t *first = json_array_get(c, 0);
  if (!json_is_object(first))
    return jfield_fail(d, &s, NULL, ERR_PARSE, "must be an object");
  int rc = jfield_str(d, &s, first, "local_host", NULL, &r->local);
  return rc ? rc : jfield_str(d, &s, first, "remote_host", NULL, &r->remote);
}

/* The start object: which end wrote the file, the test, its time, MSS. */
static int read_start(const jfield_doc *d, const json_t *start, iperf3_run *r) {
  jfield_scope top = jfield_top(), s = jfield_child(&top, "start");
  json_t *to, *acc, *ts;
  int rc;
  if ((rc = read_test_start(d, &s, start, r)) ||
      (rc = read_connected(d, &s, start, r)) ||
      (rc = jfield_obj(d, &s, start, "connecting_to", false, &to)) ||
      (rc = jfield_obj(d, &s, start, "accepted_connection", false, &acc)))
    return rc;
  if (!to && !acc)
    return jfield_fail(d, &s, NULL, ERR_PARSE,
                       "neither connecting_to (a client's file) nor "
                       "accepted_connection (a server's): no test ran");
  jfield_scope tos = jfield_child(&s, "connecting_to"),
               tss = jfield_child(&s, "timestamp");
  r->server = !to;
  double secs = 0, mss = NAN, mss_default = 0;
  if ((to && (rc = jfield_str(d, &tos, to, "host", NULL, &r->peer_name))) ||
      (rc = jfield_str(d, &s, start, "cookie", "", &r->cookie)) ||
      (rc = jfield_obj(d, &s, start, "timestamp", true, &ts)) ||
      (rc = number(d, &tss, ts, "timesecs", 0, false, true, 0, &secs)) ||
      (rc = number(d, &s, start, "tcp_mss", 0, true, false, NAN, &mss)) ||
      (rc = number(d, &s, start, "tcp_mss_default", 0, false, false, 0,
                   &mss_default)))
    return rc;
  if (secs > (double)INT64_MAX / 2)
    return jfield_fail(d, &tss, "timesecs", ERR_RANGE, "out of range: %g",
                       secs);
  r->time_s = (int64_t)secs;
  r->mss_bytes = !isnan(mss) ? mss : mss_default > 0 ? mss_default : NAN;
  return ERR_OK;
}

/* The end object: the rate received, the bytes sent and retransmitted. */
static int read_end(const jfield_doc *d, const json_t *end, iperf3_run *r) {
  jfield_scope top = jfield_top(), es = jfield_child(&top, "end"),
               rs = jfield_child(&es, "sum_received"),
               ss = jfield_child(&es, "sum_sent");
  json_t *rcv, *snt;
  double retr = NAN;
  int rc;
  if ((rc = jfield_obj(d, &es, end, "sum_received", true, &rcv)) ||
      (rc = number(d, &rs, rcv, "bits_per_second", 0, true, true, 0,
                   &r->received_bps)) ||
      (rc = jfield_obj(d, &es, end, "sum_sent", true, &snt)) ||
      (rc = number(d, &ss, snt, "bytes", 0, false, true, 0, &r->sent_bytes)) ||
      (rc = number(d, &ss, snt, "retransmits", -HUGE_VAL, false, false, NAN,
                   &retr)))
    return rc;
  r->retransmits = retr >= 0 ? retr : NAN; /* -1: the sender counts none */
  return ERR_OK;
}

/* One decoded object of the file: a test appended to out, or an error. */
static int read_test(const jfield_doc *d, const json_t *o, iperf3_runs *out) {
  jfield_scope top = jfield_top();
  if (!json_is_object(o))
    return jfield_fail(d, &top, NULL, ERR_PARSE, "not iperf3's JSON output "
                       "(iperf3 -J writes one object per test)");
  const json_t *error = json_object_get(o, "error");
  if (error)
    return jfield_fail(d, &top, "error", ERR_CONFIG,
                       "iperf3 reported \"%s\": the test measured nothing "
                       "(remove it from the file)",
                       json_is_string(error) ? json_string_value(error) : "?");
  if (json_object_get(o, "event"))
    return jfield_fail(d, &top, "event", ERR_PARSE,
                       "an iperf3 --json-stream line: give the output of "
                       "iperf3 -J (one object per test)");
  if (!json_is_object(json_object_get(o, "start")) ||
      !json_is_object(json_object_get(o, "end")))
    return jfield_fail(d, &top, NULL, ERR_PARSE,
                       "not iperf3's JSON output (iperf3 -J writes an object "
                       "with \"start\", \"intervals\" and \"end\")");
  iperf3_run r = {.file = mem_strdup(d->file),
                  .line = d->lines_before + 1};
  int rc = read_start(d, json_object_get(o, "start"), &r);
  if (!rc) rc = read_end(d, json_object_get(o, "end"), &r);
  if (!rc) rc = test_rtt(d, o, &r);
  if (rc) {
    run_free(&r);
    return rc;
  }
  mem_grow((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v);
  out->v[out->n++] = r;
  return ERR_OK;
}

/* The offset of the first byte at or after off that is not JSON white
 * space; *line counts the newlines passed. */
static size_t skip_space(const char *t, size_t len, size_t off, int *line) {
  for (; off < len && strchr(" \t\r\n", t[off]) && t[off]; off++)
    *line += t[off] == '\n';
  return off;
}

static int count_lines(const char *t, size_t n) {
  int k = 0;
  for (size_t i = 0; i < n; i++) k += t[i] == '\n';
  return k;
}

int iperf3_parse(const char *text, size_t len, const char *name,
                 iperf3_runs *out, err *e) {
  size_t n0 = out->n;
  int line = 1, rc = ERR_OK;
  size_t off = skip_space(text, len, 0, &line);
  if (off == len)
    return err_set(e, ERR_PARSE, "%s:%d: no iperf3 test in the file "
                   "(iperf3 -J writes one JSON object per test)", name, line);
  while (off < len && rc == ERR_OK) {
    json_error_t je;
    json_t *o = json_loadb(text + off, len - off, JSON_DISABLE_EOF_CHECK, &je);
    if (!o) {
      rc = err_set(e, ERR_PARSE, "%s:%d: not iperf3's JSON output (iperf3 "
                   "-J): %s", name, line - 1 + (je.line > 0 ? je.line : 1),
                   je.text);
      break;
    }
    size_t n = (size_t)je.position;
    jfield_doc d = {.file = name, .text = text + off, .len = n, .e = e,
                    .lines_before = line - 1};
    rc = read_test(&d, o, out);
    json_decref(o);
    line += count_lines(text + off, n);
    off = skip_space(text, len, off + n, &line);
  }
  if (rc != ERR_OK) {
    for (size_t i = n0; i < out->n; i++) run_free(&out->v[i]);
    out->n = n0;
  }
  return rc;
}

int iperf3_read(const char *path, iperf3_runs *out, err *e) {
  size_t len;
  char *text = file_load(path, "the iperf3 output", FILE_MAX_BYTES, &len, e);
  if (!text) return e->code;
  int rc = iperf3_parse(text, len, path, out, e);
  free(text);
  return rc;
}

/* O(n^2) in the tests read (thousands at most): plain and enough. */
void iperf3_runs_merge(iperf3_runs *r) {
  size_t kept = 0;
  for (size_t i = 0; i < r->n; i++) {
    iperf3_run *x = &r->v[i];
    iperf3_run *same = NULL;
    for (size_t j = 0; j < kept && x->cookie[0] && !same; j++)
      if (strcmp(r->v[j].cookie, x->cookie) == 0) same = &r->v[j];
    if (!same) {
      r->v[kept++] = *x;
      continue;
    }
    if (isnan(same->rtt_ms)) same->rtt_ms = x->rtt_ms;
    run_free(x);
  }
  r->n = kept;
}
