#!/bin/sh
# policies.sh: the recovery-policy study of analysis/FINDINGS.md (issue
# 10) — which policy wins, on which network, at which preemption rate.
# For three networks (datacenter: one data centre; multi-dc: two;
# worldwide: eight cities) it
# synthesises spot-interruption fault traces at the measured rate (AWS Spot
# Instance Advisor, traces/data/fault_params.csv) scaled by RATES, three
# seeds each, runs ITERATIONS iterations under restart (a checkpoint every
# CKPT iterations), reroute and replan, plus a run without faults per
# network, into DIR/policies.db, and draws DIR/plots/policies.png. NETWORK
# (default tcp, the default model of every command) is the network model.
#
# Reuse: a fault file already in DIR/faults is kept (the same command
# writes the same file), and a sweep point already in DIR/policies.db is
# not simulated again, so a second run only plots, and a killed run resumes.
# The fault files are written JOBS at a time; each network's sweep runs its
# points over JOBS worker processes. A line per step on stderr gives the
# time so far and, from the second network on, an estimate of the time
# left (the time per point so far); geodes sweep reports its own progress
# (a bar on a terminal, else a line every few seconds).
#
# Deterministic: the same binary writes the same fault files and rows. About
# five CPU-minutes.
usage() {
  cat <<EOF
usage: analysis/policies.sh [--jobs N] [DIR] [GEODES]

The recovery-policy study: fault files, training runs under restart,
reroute and replan on datacenter, multi-dc and worldwide, stored in
DIR/policies.db (default DIR: policies), plotted as DIR/plots/policies.png.
GEODES is the binary (default build/geodes).

  --jobs N   geodes processes at once (default: \$JOBS, else 2)
  --help     this text

Environment: ITERATIONS (100), CKPT (10), RATES ("30 100 300 1000 3000"),
SEEDS ("1 2 3"), NETWORK (tcp), JOBS (2).
EOF
}
set -eu
JOBS=${JOBS:-2}
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --jobs) [ $# -ge 2 ] || { echo "policies.sh: --jobs needs a value" >&2; exit 2; }
            JOBS=$2; shift 2 ;;
    --jobs=*) JOBS=${1#--jobs=}; shift ;;
    --) shift; break ;;
    -*) echo "policies.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -le 2 ] || { echo "policies.sh: at most DIR and GEODES (see --help)" >&2; exit 2; }
case $JOBS in
  ''|*[!0-9]*|0) echo "policies.sh: --jobs must be a positive integer, not '$JOBS'" >&2; exit 2 ;;
esac
dir=${1:-policies}
geodes=${2:-build/geodes}
here=$(dirname "$0")
ITERATIONS=${ITERATIONS:-100}
CKPT=${CKPT:-10}
RATES=${RATES:-"30 100 300 1000 3000"}
SEEDS=${SEEDS:-"1 2 3"}
NETWORK=${NETWORK:-tcp}
[ -x "$geodes" ] || { echo "policies.sh: $geodes: no geodes binary (build it, or pass GEODES)" >&2; exit 2; }
mkdir -p "$dir/faults"
start=$(date +%s)
nets="datacenter multi-dc worldwide"
points_per_net=$(( $(echo $RATES | wc -w) * $(echo $SEEDS | wc -w) * 3 + 3 ))
done_points=0
step=0
say() {  # a progress line: the step, the time so far, an estimate of the rest
  now=$(date +%s)
  el=$((now - start))
  left=""
  if [ "$done_points" -gt 0 ]; then
    todo=$(( 3 * points_per_net - done_points ))
    left=", about $(( el * todo / done_points )) s left"
  fi
  echo "policies.sh: [$step/3] $1 (${el} s so far$left)" >&2
}
# whether fault file $5 is there, written by this very command (its header
# records the command): then it is kept
made() {
  grep -qxF "# generated_by: geodes faults synth $1 --duration-s $2 --seed $3 --rate-scale $4 -o $5" \
    "$5" 2>/dev/null
}
# a fault trace four times the length of a run without faults (its
# iteration as geodes simulates it, to 0.1 s), so that a policy that loses
# much still meets faults for most of its run
for s in $nets; do
  step=$((step + 1))
  say "$s: fault files"
  it=$("$geodes" simulate "$s" --method dtfm-identity --network "$NETWORK" --json |
       python3 -c 'import json, sys; print("%.1f" % json.load(sys.stdin)["iteration_s"])')
  horizon=$(awk -v n="$ITERATIONS" -v t="$it" 'BEGIN { printf "%d", 4 * n * t }')
  files=""
  n=0
  for r in $RATES; do
    for seed in $SEEDS; do
      f="$dir/faults/$s-x$r-$seed.csv"
      files="$files${files:+, }\"$f\""
      made "$s" "$horizon" "$seed" "$r" "$f" && continue
      "$geodes" faults synth "$s" --duration-s "$horizon" --seed "$seed" \
        --rate-scale "$r" -o "$f" &
      n=$((n + 1))
      if [ "$n" -ge "$JOBS" ]; then wait; n=0; fi
    done
  done
  wait
  for r in $RATES; do  # a synth that failed said why on stderr
    for seed in $SEEDS; do
      made "$s" "$horizon" "$seed" "$r" "$dir/faults/$s-x$r-$seed.csv" ||
        { echo "policies.sh: $dir/faults/$s-x$r-$seed.csv was not written" >&2; exit 1; }
    done
  done
  cat > "$dir/$s.json" <<EOF
{"scenarios": ["$s"], "methods": ["dtfm-identity"], "networks": ["$NETWORK"],
 "iterations": $ITERATIONS, "checkpoint_every": $CKPT,
 "recovery": ["restart", "reroute", "replan"], "faults": [$files]}
EOF
  cat > "$dir/$s-none.json" <<EOF
{"scenarios": ["$s"], "methods": ["dtfm-identity"], "networks": ["$NETWORK"],
 "iterations": $ITERATIONS, "checkpoint_every": $CKPT,
 "recovery": ["restart", "reroute", "replan"]}
EOF
  say "$s: training runs"
  "$geodes" sweep "$dir/$s.json" --db "$dir/policies.db" --jobs "$JOBS"
  "$geodes" sweep "$dir/$s-none.json" --db "$dir/policies.db" --jobs "$JOBS"
  done_points=$((done_points + points_per_net))
done
step=3
say "plots"
"$here/plot.py" "$dir/policies.db" --out "$dir/plots"
