#!/usr/bin/env bash
# A fixed set of runs whose outputs must not change when the engine is
# rebuilt for speed or memory (issues of "bit-identical outputs"): run it
# on the tree before and after, then diff the two folders.
#   bash tests/fixed_set.sh build/geodes OUTDIR
# Every output is the --json of one command (wall-clock fields removed), so
# a diff shows exactly which number moved.
set -euo pipefail
geodes="$(realpath "$1")"; out="$2"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"; out="$(realpath "$out")"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
strip() {  # drop fields that measure the host, not the simulation
  python3 -c '
import json, sys
SKIP = {"wall_s", "cpu_s", "rate", "points_per_s", "elapsed_s", "peak_rss_mb",
        "events_per_s", "candidates_per_s", "db", "started", "finished"}
def clean(v):
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items() if k not in SKIP}
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v
for line in sys.stdin:
    line = line.strip()
    if line:
        print(json.dumps(clean(json.loads(line)), sort_keys=True))
'
}
run() {  # NAME ARGS...: geodes ARGS --json > OUT/NAME.json
  local name="$1"; shift
  "$geodes" "$@" --json | strip > "$out/$name.json"
}
for m in dtfm-identity megatron random greedy; do
  for n in tcp netem ideal; do
    run "sim-worldwide-$m-$n" simulate worldwide --method "$m" --network "$n"
  done
done
run sim-regional-1f1b simulate regional --method megatron --schedule 1f1b
run sim-ring simulate worldwide --method dtfm-identity --dp-algo ring
run sim-sharded simulate multi-dc --method random --dp-algo sharded-ps
run sim-volunteer-balanced simulate volunteer-mix --method dtfm-identity \
    --layers-per-stage balanced
run sim-diloco simulate intellect-1 --method dtfm-identity
run sim-streaming simulate worldwide --method dtfm-identity \
    --dp-algo streaming-diloco --inner-steps 4 --fragments 2
run sim-varying simulate worldwide-varying --method dtfm-identity \
    --iterations 20
run predict-worldwide predict worldwide --method gcma --seed 3
"$geodes" faults synth worldwide --duration-s 20000 --seed 7 \
    --rate-scale 300 -o faults.csv >/dev/null
for p in restart reroute replan; do
  run "train-$p" simulate worldwide --method dtfm-identity --iterations 40 \
      --faults faults.csv --recovery "$p" --checkpoint-every 5
done
cat > sweep.json <<JSON
{"scenarios": ["worldwide", "regional"], "methods": ["megatron", "gcma"],
 "networks": ["tcp", "netem"], "seeds": [1, 2]}
JSON
"$geodes" sweep sweep.json --db s.db >/dev/null 2>&1
sqlite3 -header -csv s.db "SELECT * FROM results ORDER BY 1" \
  | python3 -c '
import csv, sys
r = csv.reader(sys.stdin); head = next(r)
drop = {i for i, h in enumerate(head) if h in ("wall_s", "run_id", "created")}
for row in [head] + list(r):
    print(",".join(x for i, x in enumerate(row) if i not in drop))
' > "$out/sweep.csv"
echo "fixed set: $(ls "$out" | wc -l) outputs in $out" >&2
