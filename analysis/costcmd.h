/* costcmd: a user's cost model as a subprocess, over JSON lines (DESIGN.md
 * section 10, `--cost-cmd CMD`).
 *
 * The protocol. geodes starts `/bin/sh -c CMD` once, its stdin and stdout
 * on pipes (its stderr is geodes's), and writes
 *   1. one header line: the resolved scenario and workload
 *      (costcmd_header_json: {"protocol": "geodes-cost-cmd/1", ...});
 *   2. one line per candidate allocation,
 *      {"id": k, "pipelines": [[d, ...], ...], "layers_per_stage": [l, ...]}
 *      with k = 0, 1, 2, ... over the whole session.
 * CMD answers each candidate with one line {"id": k, "predicted_s": x}
 * (other keys are ignored; no key twice), in the order of the candidates,
 * x a finite number in [0, COSTCMD_MAX_PREDICTED_S] (seconds per
 * iteration). geodes may write many candidates
 * before reading their answers (a batch is pipelined), or one and wait for
 * its answer (a search), so CMD must answer a candidate without waiting for
 * the next one: flush stdout after each answer, or whenever stdin has no
 * more input. When geodes has no more candidates it closes CMD's stdin;
 * CMD then exits with status 0.
 *
 * The timeout is per candidate: the answer to candidate k must arrive
 * within timeout_s of the latest of candidate k written in full, the
 * answer to k - 1 and the moment geodes starts waiting for its batch;
 * the session's first answer, which also covers CMD's start and the
 * header, has COSTCMD_START_S more (an interpreter and a model's
 * imports take seconds on a loaded machine).
 * A CMD that exits, hangs past the timeout, prints a line that is not
 * JSON, repeats a key, answers another id, or gives a missing, negative,
 * non-finite or absurd (above the ceiling) predicted_s is an error naming
 * CMD, the candidate and the line it printed (ERR_IO for the
 * process, ERR_PARSE for the answer); CMD is then killed and reaped, and
 * every later call fails with the same error. No answer is returned for
 * a batch that failed part way.
 *
 * Invariant: the child is always reaped (costcmd_free kills and waits for
 * it if it still runs), and SIGPIPE is blocked while geodes writes to it,
 * so a CMD that dies is an error message, never a dead geodes. */
#ifndef ANALYSIS_COSTCMD_H
#define ANALYSIS_COSTCMD_H

#include "models/alloc.h"
#include "models/spec.h"
#include "base/err.h"

/* The per-candidate timeout when the caller gives none (seconds). */
#define COSTCMD_TIMEOUT_S 10.0
/* What the first answer of a session may take beyond the timeout. */
#define COSTCMD_START_S 10.0
/* The longest iteration an answer may predict: 1e9 s, 31.7 years. A model
 * that says more is broken (1e308, an overflow), and a search that ranked
 * by it, or a report that printed it as objective_s, would be wrong. */
#define COSTCMD_MAX_PREDICTED_S 1e9

typedef struct costcmd costcmd;

/* Starts cmd (through /bin/sh -c) and queues header (one line, without its
 * newline; copied) for it. timeout_s <= 0: COSTCMD_TIMEOUT_S. Returns the
 * session, or NULL and e filled (ERR_IO) when the process cannot be
 * started. */
costcmd *costcmd_start(const char *cmd, const char *header, double timeout_s,
                       err *e);

/* Submits candidate a with its layers per stage (stages entries; NULL:
 * the allocation's even split is not known here, so the caller must give
 * it) to the current batch, and moves whatever is ready without waiting:
 * its line, or what of it the pipe takes, goes to CMD and answers already
 * printed are read and checked, so CMD works while the caller makes the
 * next candidate. Its prediction comes from costcmd_collect. ERR_OK, or
 * the session's error (one found now: an answer that is wrong, a CMD that
 * died); a timeout is found only by costcmd_collect. */
int costcmd_submit(costcmd *c, const alloc *a, const int *layers, err *e);

/* Waits for the answers to the batch's n candidates (n: how many were
 * submitted since the last collect) and gives them in the order they were
 * submitted: out[i], seconds. Ends the batch whatever the outcome. ERR_OK,
 * or the session's error (out then holds nothing usable). */
int costcmd_collect(costcmd *c, int n, double *out, err *e);

/* Candidates submitted and not yet collected. */
int costcmd_pending(const costcmd *c);

/* Scores n candidates: costcmd_submit of a[i] with layers[i] (layers
 * NULL: none given) for each i, then costcmd_collect into out. Requires
 * that no batch is pending. ERR_OK, or the session's error (out then
 * holds nothing usable). */
int costcmd_score(costcmd *c, int n, const alloc *const *a,
                  const int *const *layers, double *out, err *e);

/* costcmd_score of one candidate: its prediction, or NAN with e filled. */
double costcmd_score_one(costcmd *c, const alloc *a, const int *layers,
                         err *e);

/* A search's scorer over session ctx (a costcmd *): candidate a with the
 * layers per stage of w (its stage_layers, or the even split); the
 * signature of schedules/objective.h's objective_alloc_fn. NAN and e
 * filled when the session fails. */
double costcmd_judge(void *ctx, const alloc *a, const spec_workload *w,
                     err *e);

/* costcmd_judge of n allocations in one batch (pipelined: CMD sees them
 * one line each, as ever), a[i] with its layers[i]; the signature of
 * schedules/objective.h's objective_allocs_fn. ERR_OK or the session's
 * error. */
int costcmd_judge_many(void *ctx, int n, const alloc *const *a,
                       const int *const *layers, double *out, err *e);

/* costcmd_submit and costcmd_collect over session ctx (a costcmd *): the
 * signatures of schedules/objective.h's objective_submit_fn and
 * objective_collect_fn. */
int costcmd_judge_submit(void *ctx, const alloc *a, const int *layers,
                         err *e);
int costcmd_judge_collect(void *ctx, int n, double *out, err *e);

/* Ends the session (no batch pending): closes CMD's stdin and waits (up
 * to the timeout) for it to exit. ERR_OK when it exits with status 0
 * having printed nothing more; else an error naming CMD (it is then killed). The session stays
 * allocated: free it with costcmd_free. */
int costcmd_close(costcmd *c, err *e);

/* Kills CMD if it still runs, reaps it, frees c. NULL is fine. */
void costcmd_free(costcmd *c);

/* Candidates answered so far. */
long costcmd_answered(const costcmd *c);

/* The command as given (borrowed). */
const char *costcmd_command(const costcmd *c);

#endif
