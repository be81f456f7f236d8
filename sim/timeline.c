/* timeline: Chrome Trace Event JSON writer (streamed with fprintf: a run has
 * up to millions of events, more than one JSON tree should hold).
 * Invariant: every event has ts >= 0 and dur >= 0, pid = device, tid = 0
 * compute, 1 send, 2 receive. */
#include "sim/timeline.h"

#include <errno.h>
#include <string.h>

static const char *const role_names[] = {"fwd",  "bwd",  "optimizer", "act",
                                         "grad", "dp",   "sync",      "barrier"};

static void event(FILE *f, bool *first, const char *name, int mb, int pid,
                  int tid, int64_t t0, int64_t t1, int peer) {
  fprintf(f, "%s\n{\"name\":\"%s", *first ? "" : ",", name);
  if (mb >= 0) fprintf(f, " %d", mb);
  fprintf(f, "\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f",
          pid, tid, (double)t0 * 1e-3, (double)(t1 - t0) * 1e-3);
  if (peer >= 0) fprintf(f, ",\"args\":{\"peer\":%d}", peer);
  fputc('}', f);
  *first = false;
}

void sim_timeline_write(FILE *f, const sim_task *t, uint32_t n, int ndevices,
                        const char *const *device_name) {
  static const char *const streams[] = {"compute", "send", "receive"};
  bool first = true;
  fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);
  for (int d = 0; d < ndevices; d++) {
    fprintf(f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
            "\"args\":{\"name\":\"", first ? "" : ",", d);
    if (device_name && device_name[d])
      fprintf(f, "%d %s", d, device_name[d]);
    else
      fprintf(f, "device %d", d);
    fputs("\"}}", f);
    first = false;
    for (int s = 0; s < 3; s++)
      fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
              "\"tid\":%d,\"args\":{\"name\":\"%s\"}}", d, s, streams[s]);
  }
  for (uint32_t i = 0; i < n; i++) {
    const sim_task *x = &t[i];
    if (x->t_start < 0) continue;
    const char *name = role_names[x->role];
    if (x->kind == SIM_TASK_COMPUTE)
      event(f, &first, name, x->mb, x->dev, 0, x->t_start, x->t_done, -1);
    else if (x->kind == SIM_TASK_XFER) {
      event(f, &first, name, x->mb, x->dev, 1, x->t_start, x->t_left, x->dst);
      event(f, &first, name, x->mb, x->dst, 2, x->t_start, x->t_done, x->dev);
    }
  }
  fputs("\n]}\n", f);
}

int sim_timeline_save(const char *path, const sim_task *t, uint32_t n,
                      int ndevices, const char *const *device_name, err *e) {
  FILE *f = fopen(path, "w");
  if (!f)
    return err_set(e, ERR_IO, "%s:0: cannot write the timeline: %s", path,
                   strerror(errno));
  sim_timeline_write(f, t, n, ndevices, device_name);
  if (fclose(f) != 0)
    return err_set(e, ERR_IO, "%s:0: cannot write the timeline: %s", path,
                   strerror(errno));
  return ERR_OK;
}
