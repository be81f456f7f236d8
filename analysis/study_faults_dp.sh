#!/bin/sh
# study_faults_dp.sh: the study "DiLoCo or pipeline, on spot GPUs?"
# of analysis/FINDINGS.md.
# On worldwide (8 cities of V100s) and volunteer-mix (cloud
# hosts and volunteers' GPUs), it runs ITERATIONS inner steps (a pipeline's
# iterations) of three data-parallel algorithms — the scenario's pipeline
# with its own synchronisation every step, DiLoCo (H = INNER inner steps
# per outer step) and streaming DiLoCo (FRAGMENTS fragments, OVERLAP steps
# of overlap) — at three fault rates (the measured Spot Instance Advisor
# band, 30x and 300x: `geodes faults synth --rate-scale`), under restart
# (a checkpoint every CKPT inner steps), reroute and replan, into
# DIR/faults_dp.db; then DIR/faults_dp.md (goodput and WAN bytes per
# batch, a table) and DIR/faults_dp.png (goodput against the fault rate).
# geodes simulates time, not convergence: an inner step of DiLoCo counts
# as a batch here, as a pipeline's iteration does.
#
#   analysis/study_faults_dp.sh [DIR] [GEODES]   (defaults: faults_dp, build/geodes)
#
# Deterministic: the same binary writes the same fault files and rows.
# About two CPU-minutes (54 runs; JOBS at once).
set -eu
case "${1:-}" in
  -h|--help) sed -n '2,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
  -*) echo "study_faults_dp.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
dir=${1:-faults_dp}
geodes=${2:-build/geodes}
ITERATIONS=${ITERATIONS:-100}
INNER=${INNER:-20}
FRAGMENTS=${FRAGMENTS:-2}
OVERLAP=${OVERLAP:-3}
CKPT=${CKPT:-20}
RATES=${RATES:-"1 30 300"}
SEED=${SEED:-1}
JOBS=${JOBS:-2}
PYTHON=${PYTHON:-python3}  # one with matplotlib (else /usr/bin/python3's)
"$PYTHON" -c 'import matplotlib' 2>/dev/null || PYTHON=/usr/bin/python3
mkdir -p "$dir/faults"
for s in worldwide volunteer-mix; do
  # a fault trace four times the pipeline's run without faults
  it=$("$geodes" simulate "$s" --method dtfm-identity --json |
       python3 -c 'import json, sys; print("%.1f" % json.load(sys.stdin)["iteration_s"])')
  horizon=$(awk -v n="$ITERATIONS" -v t="$it" 'BEGIN { printf "%d", 4 * n * t }')
  files=""
  for r in $RATES; do
    f="$dir/faults/$s-x$r.csv"
    "$geodes" faults synth "$s" --duration-s "$horizon" --seed "$SEED" \
      --rate-scale "$r" -o "$f"
    files="$files${files:+, }\"$f\""
  done
  common="\"scenarios\": [\"$s\"], \"methods\": [\"dtfm-identity\"],
 \"iterations\": $ITERATIONS, \"checkpoint_every\": $CKPT,
 \"recovery\": [\"restart\", \"reroute\", \"replan\"], \"faults\": [$files]"
  echo "{$common}" > "$dir/$s-pipeline.json"
  echo "{$common, \"dp_algo\": [\"diloco\"], \"inner_steps\": $INNER}" \
    > "$dir/$s-diloco.json"
  echo "{$common, \"dp_algo\": [\"streaming-diloco\"], \"inner_steps\": $INNER,
 \"fragments\": $FRAGMENTS, \"overlap_steps\": $OVERLAP}" \
    > "$dir/$s-streaming.json"
  for a in pipeline diloco streaming; do
    "$geodes" sweep "$dir/$s-$a.json" --db "$dir/faults_dp.db" --jobs "$JOBS"
  done
done
"$PYTHON" - "$dir" <<'PY'
import os, re, sqlite3, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
d = sys.argv[1]
db = sqlite3.connect(os.path.join(d, "faults_dp.db"))
rows = db.execute(
    "SELECT scenario, dp_algo, recovery, faults, samples_per_s, wan_bytes, "
    "lost_s, total_s FROM results WHERE iterations IS NOT NULL").fetchall()
def algo(dp):
    return dp if dp in ("diloco", "streaming-diloco") else "pipeline (%s)" % dp
data = {}
for sc, dp, rec, f, gp, wan, lost, total in rows:
    rate = int(re.search(r"-x(\d+)\.csv$", f).group(1))
    data[(sc, algo(dp), rec, rate)] = (gp, wan, lost / total)
scen = sorted({k[0] for k in data}, reverse=True)
algos = sorted({k[1] for k in data}, key=lambda a: (a.startswith("s"), a))
recs = ["restart", "reroute", "replan"]
rates = sorted({k[3] for k in data})
with open(os.path.join(d, "faults_dp.md"), "w") as out:
    out.write("| scenario | algorithm | WAN GB / batch | rate | restart | "
              "reroute | replan |\n|---|---|---|---|---|---|---|\n")
    for sc in scen:
        for a in algos:
            for i, r in enumerate(rates):
                cells = []
                for rec in recs:
                    gp, wan, lost = data[(sc, a, rec, r)]
                    cells.append("%.3g (%.0f %%)" % (gp, 100 * lost))
                wan = data[(sc, a, "restart", rates[0])][1] / 1e9
                out.write("| %s | %s | %s | %dx | %s |\n" % (
                    sc if i == 0 and a == algos[0] else "",
                    a if i == 0 else "", "%.2f" % wan if i == 0 else "", r,
                    " | ".join(cells)))
fig, axes = plt.subplots(1, len(scen), figsize=(6 * len(scen), 4.2))
styles = {"restart": ":", "reroute": "-", "replan": "--"}
for ax, sc in zip(axes, scen):
    for j, a in enumerate(algos):
        for rec in recs:
            ys = [data[(sc, a, rec, r)][0] for r in rates]
            ax.plot(rates, ys, styles[rec], marker="os^"[j], color="C%d" % j,
                    label="%s, %s" % (a, rec))
    ax.set_xscale("log")
    ax.set_xticks(rates)
    ax.set_xticklabels(["%dx" % r for r in rates])
    ax.set_xlabel("fault rate (x the measured spot rate)")
    ax.set_ylabel("goodput (samples/s over the run)")
    ax.set_title(sc)
    ax.grid(alpha=0.3)
axes[0].legend(fontsize=6)
fig.suptitle("Pipeline vs DiLoCo vs streaming DiLoCo under spot faults "
             "(time, not convergence)", fontsize=10)
fig.tight_layout()
fig.savefig(os.path.join(d, "faults_dp.png"), dpi=110)
print(open(os.path.join(d, "faults_dp.md")).read())
PY
