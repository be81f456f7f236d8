/* fill: weighted max-min sharing of capacities among flows that start at
 * given times and leave when their work is done — progressive filling,
 * solved again at each start and each departure — in closed form: a few
 * solves per phase of the predictor (models/hop.h), not a simulation of
 * events. The engine's solver (sim/maxmin.c) is the engine's: it solves
 * one instant, incrementally, on the engine's hot path; this one walks a
 * phase of the predictor's flows from start to end.
 *
 * A flow is one unit of work (a phase of a pipeline, one group's
 * synchronisation) done over its legs (the connections it uses), each
 * carrying `bytes` of it: at progress rate p a leg moves bytes x p per
 * second through each of its resources. The flow's weight is the least
 * weight per byte of its legs (a leg's share of a resource goes by its
 * weight, and the flow goes at the pace of its slowest leg), its cap the
 * least of its own and its legs' caps over their bytes. Among the flows
 * sending at an instant the progress rates are the weighted max-min of the
 * resources' capacities: one level L is raised, each unfrozen flow at
 * weight x L, until a resource saturates (its flows freeze at that level)
 * or a flow reaches its cap. A leg's available rate at that instant is
 * its own cap, and on each resource it shares with other sending legs the
 * more of what it moves there (its bytes x its flow's rate) and its
 * weight's share of the capacity among them all (what it gets when they
 * send at once, as a phase's flows do, in step); the least of these. The
 * predictor's closed forms take its time-average over the flow's life as
 * the leg's rate: the leg that binds its flow gets bytes / duration.
 * A flow with a flow upstream (a pipeline's next boundary, a chain's next
 * hop) that has caught up with it (done as much of its work) is held to
 * its pace, rising at the lesser weight of the two; one that is behind
 * goes at its own (it has a backlog). Flows may start at given times and
 * after other flows are done (a broadcast after its reduce, a ring after
 * every site's reduce).
 * Invariant: pure functions of the arguments; scratch freed on return. */
#ifndef MODELS_FILL_H
#define MODELS_FILL_H

#define FILL_MAXRES 3 /* resources one leg crosses, at most */

/* One connection of a flow. */
typedef struct fill_leg {
  double bytes;  /* the flow's work on this leg, > 0 */
  double weight; /* its weight on its resources, > 0 */
  double cap;    /* its own bound, bytes/s (INFINITY: none) */
  int nres;      /* 0 .. FILL_MAXRES */
  int res[FILL_MAXRES];
} fill_leg;

/* One flow: legs[first .. first + nlegs) of the legs array. */
typedef struct fill_flow {
  double start;  /* when it may start sending, s */
  int after;     /* the first of the flows it starts after (when they are
                    all done: a part after every chain of the part before
                    it), or -1 */
  int nafter;    /* how many, from `after` on (0 counts as 1) */
  int up;        /* a flow upstream of it, or -1: its progress never passes
                    that one's (a tandem: it forwards what arrived) */
  double cap;    /* a bound on its progress, 1/s (INFINITY: none) */
  int first, nlegs;
} fill_flow;

/* Shares res_cap[0 .. nres) (bytes/s, >= 0) among the nf flows of f, each
 * one unit of work over its legs (leg[]). finish[i] gets when flow i is
 * done (INFINITY when it can never be: a resource of capacity 0), and
 * leg_rate[k], when not NULL, leg k's available rate averaged over its
 * flow's life, from when it started (its cap for a flow of no duration).
 * Returns how many flows' rates changed while they sent (0: each at one
 * rate throughout, which the averages then are). */
int fill_solve(const double *res_cap, int nres, const fill_flow *f, int nf,
               const fill_leg *leg, double *finish, double *leg_rate);

#endif
