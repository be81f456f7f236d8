/* harness: the report of the consistency harness (tests/harness.h) — the
 * relations' names, the outcomes counted per relation, and each distinct
 * failure class kept with its first seed, so that a run of 10^4 cases
 * names every defect class once with a case that reproduces it. */
#include "tests/harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define HX_REL_NAME_(id, name, what) name,
#define HX_REL_WHAT_(id, name, what) what,
const char *const hx_rel_names[HX_NRELS] = {HX_REL_MAP(HX_REL_NAME_)};
const char *const hx_rel_what[HX_NRELS] = {HX_REL_MAP(HX_REL_WHAT_)};
#undef HX_REL_NAME_
#undef HX_REL_WHAT_
#define HX_KNOWN_NAME_(id, name, note) name,
#define HX_KNOWN_NOTE_(id, name, note) note,
const char *const hx_known_names[HX_NKNOWN] = {HX_KNOWN_MAP(HX_KNOWN_NAME_)};
const char *const hx_known_notes[HX_NKNOWN] = {HX_KNOWN_MAP(HX_KNOWN_NOTE_)};
#undef HX_KNOWN_NAME_
#undef HX_KNOWN_NOTE_

void hx_report_init(hx_report *r) { memset(r, 0, sizeof *r); }

/* The class of (rel, outcome, klass) in r, added when new. */
static int class_of(hx_report *r, const hx_case *c, hx_rel rel, int outcome,
                    const char *klass, const char *msg) {
  for (int i = 0; i < r->nclasses; i++)
    if (r->cls[i].rel == rel && r->cls[i].outcome == outcome &&
        strcmp(r->cls[i].klass, klass) == 0)
      return i;
  if (r->nclasses == HX_MAX_CLASSES) return -1;
  int i = r->nclasses++;
  r->cls[i].rel = rel, r->cls[i].outcome = outcome, r->cls[i].seed = c->seed;
  r->cls[i].count = 0;
  snprintf(r->cls[i].klass, sizeof r->cls[i].klass, "%s", klass);
  snprintf(r->cls[i].msg, sizeof r->cls[i].msg, "%s", msg);
  return i;
}

void hx_record(hx_report *r, const hx_case *c, hx_rel rel, int outcome,
               int known, const char *klass, const char *fmt, ...) {
  r->n[rel][outcome]++;
  if (outcome == HX_PASS || outcome == HX_SKIP) return;
  char msg[512] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
  }
  int k = class_of(r, c, rel, outcome, klass ? klass : "?", msg);
  if (k >= 0) r->cls[k].count++;
  if (r->nfind == HX_MAX_FINDINGS) return;
  hx_finding *f = &r->find[r->nfind++];
  *f = (hx_finding){.seed = c->seed, .rel = rel, .outcome = outcome,
                    .known = known};
  snprintf(f->klass, sizeof f->klass, "%s", klass ? klass : "?");
  snprintf(f->msg, sizeof f->msg, "%s", msg);
}

void hx_check_case(const hx_case *c, const hx_opts *o, hx_report *r) {
  r->cases++;
  if (o->lib) hx_check_lib(c, o, r);
  if (o->cli) hx_check_cli(c, o, r);
}

void hx_report_write(const hx_report *r, FILE *f) {
  fprintf(f, "%ld cases (%ld draws)\n", r->cases, r->draws);
  fprintf(f, "%-26s %8s %8s %8s %8s\n", "RELATION", "PASSED", "SKIPPED",
          "KNOWN", "FAILED");
  for (int k = 0; k < HX_NRELS; k++)
    fprintf(f, "%-26s %8ld %8ld %8ld %8ld\n", hx_rel_names[k],
            r->n[k][HX_PASS], r->n[k][HX_SKIP], r->n[k][HX_KNOWN],
            r->n[k][HX_FAIL]);
  fprintf(f, "predict~simulate: worst error where within tolerance %.3f %%\n",
          100 * r->worst_predict);
  for (int i = 0; i < r->nclasses; i++)
    fprintf(f, "%s %s: %s (%ld cases, first seed %llu): %s\n",
            r->cls[i].outcome == HX_FAIL ? "FAILED" : "known ",
            hx_rel_names[r->cls[i].rel], r->cls[i].klass, r->cls[i].count,
            (unsigned long long)r->cls[i].seed, r->cls[i].msg);
}
