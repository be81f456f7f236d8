#!/bin/sh
# policies.sh: the README's recovery-policy study (issue 10) — which policy
# wins, on which network, at which preemption rate. For three networks
# (datacenter: one data centre; multi-dc: two; worldwide: eight cities) it
# synthesises spot-interruption fault traces at the measured rate (AWS Spot
# Instance Advisor, traces/data/fault_params.csv) scaled by RATES, three
# seeds each, runs ITERATIONS iterations under restart (a checkpoint every
# CKPT iterations), reroute and replan, plus a run without faults per
# network, into DIR/policies.db, and draws DIR/plots/policies.png. NETWORK
# (default tcp, the default model of every command) is the network model.
#
#   analysis/policies.sh [DIR] [GEODES]     (defaults: policies, build/geodes)
#
# Deterministic: the same binary writes the same fault files and rows. About
# five CPU-minutes (eight and a half on a shared two-core machine).
set -eu
dir=${1:-policies}
geodes=${2:-build/geodes}
here=$(dirname "$0")
ITERATIONS=${ITERATIONS:-100}
CKPT=${CKPT:-10}
RATES=${RATES:-"30 100 300 1000 3000"}
SEEDS=${SEEDS:-"1 2 3"}
JOBS=${JOBS:-2}
NETWORK=${NETWORK:-tcp}
mkdir -p "$dir/faults"
# a fault trace four times the length of a run without faults (its
# iteration as geodes simulates it, to 0.1 s), so that a policy that loses
# much still meets faults for most of its run
for s in datacenter multi-dc worldwide; do
  it=$("$geodes" simulate "$s" --method dtfm-identity --network "$NETWORK" --json |
       python3 -c 'import json, sys; print("%.1f" % json.load(sys.stdin)["iteration_s"])')
  horizon=$(awk -v n="$ITERATIONS" -v t="$it" 'BEGIN { printf "%d", 4 * n * t }')
  files=""
  for r in $RATES; do
    for seed in $SEEDS; do
      f="$dir/faults/$s-x$r-$seed.csv"
      "$geodes" faults synth "$s" --duration-s "$horizon" --seed "$seed" \
        --rate-scale "$r" -o "$f"
      files="$files${files:+, }\"$f\""
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
  "$geodes" sweep "$dir/$s.json" --db "$dir/policies.db" --jobs "$JOBS"
  "$geodes" sweep "$dir/$s-none.json" --db "$dir/policies.db" --jobs "$JOBS"
done
"$here/plot.py" "$dir/policies.db" --out "$dir/plots"
