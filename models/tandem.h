/* tandem: K jobs through servers in series with unbounded buffers, all
 * jobs present at the first server at time 0 — a pipeline phase (compute
 * streams and stage boundaries), a chain of NCCL chunks — in closed form.
 * The last job leaves the last server at the length of the longest
 * monotone path through the (job, server) grid: down job 0 to some server
 * j1, then its K - 2 extra job steps at the slowest server from j1 on
 * (job 0 may take longer at every server than the others: first[j] >=
 * t[j], e.g. TCP slow start). A pure delay after a server (a latency that
 * does not hold the server: the bytes of the next job may leave while the
 * previous ones are still on their way) adds once.
 * Invariant: a pure function of its arguments. */
#ifndef MODELS_TANDEM_H
#define MODELS_TANDEM_H

/* When the last of k jobs leaves server hi of servers lo..hi (job 0 takes
 * first[j] at server j, the others t[j]; delay[j] after server j, NULL:
 * none), all k present at server lo at time 0. */
double tandem_span(int lo, int hi, int k, const double *first,
                   const double *t, const double *delay);

#endif
