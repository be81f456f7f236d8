#!/usr/bin/env python3
"""compare_dp.py: pipeline over the WAN, or DiLoCo? (README, issue 12)

    analysis/compare_dp.py --out DIR [--geodes BIN] [--samples N]
                           [--method NAME] [--model LABEL=SCENARIO[@ALLOC] ...]

Simulates each training method on each model's scenario with `geodes
simulate --json` and writes into DIR:
  compare_dp.csv   one row per (model, method): iteration_s, samples_per_s,
                   compute utilisation, the hours to N samples, and the
                   bytes the pipeline and the data-parallel synchronisation
                   send for those N samples (and of both, those between
                   cities)
  compare_dp.png   two panels per model: hours to N samples, TB sent
With --from-csv FILE it plots an earlier CSV instead of simulating.

The methods: DT-FM's pipeline with its scheduler (GPipe, central-PS
synchronisation every iteration), the same with 4-bit activations
(AC-SGD), DiLoCo at H = 50, 100 and 500 inner steps (fp16 pseudo-
gradients) and at H = 100 with int8 (INTELLECT-1's), and streaming DiLoCo
(H = 100, 4 fragments, 5 overlapped steps, 4-bit, as Douillard et al.
2025). Every method is placed by --method (default gcma, DT-FM's
scheduler): its placement for the pipeline (`geodes schedule`, once per
model) is the placement of the DiLoCo methods, whose replicas then keep
their pipelines inside cities; the compressed pipeline gets its own
placement, scheduled with its sizes. A placement already in DIR
(alloc-I.json, alloc-I-K.json for model I, method K) is reused.
geodes simulates time, not convergence.

Matplotlib: when the first python3 on PATH lacks it, the script re-executes
itself under /usr/bin/python3 (Debian's python3-matplotlib).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpl_agg import matplotlib_agg  # noqa: E402

matplotlib = matplotlib_agg(__file__, "compare_dp.py")
import argparse  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (label, options, placed with its own options: the scheduler's placement
# follows the sizes, and 4-bit activations move pipelines onto the WAN)
METHODS = [
    ("pipeline (DT-FM)", []),
    ("pipeline, 4-bit activations", ["--activation-bits", "4"], True),
    ("DiLoCo H=50", ["--dp-algo", "diloco", "--inner-steps", "50"]),
    ("DiLoCo H=100", ["--dp-algo", "diloco", "--inner-steps", "100"]),
    ("DiLoCo H=500", ["--dp-algo", "diloco", "--inner-steps", "500"]),
    ("DiLoCo H=100 int8", ["--dp-algo", "diloco", "--inner-steps", "100",
                           "--grad-bits", "8"]),
    ("streaming DiLoCo H=100 F=4 4-bit",
     ["--dp-algo", "streaming-diloco", "--inner-steps", "100",
      "--fragments", "4", "--overlap-steps", "5", "--grad-bits", "4"]),
]
MODELS = ["GPT-3 XL=worldwide",
          "GPT-3 6.7B=" + os.path.join(HERE, "scenarios", "worldwide-6.7b.json")]
FIELDS = ["model", "method", "placement", "iteration_s", "samples_per_s",
          "compute_utilisation", "samples", "hours", "pp_tb", "dp_tb",
          "wan_tb"]


def place(geodes, scenario, method, path, extra=()):
    if os.path.exists(path):
        return path
    cmd = [geodes, "schedule", scenario, "--method", method, "-o", path]
    cmd += list(extra)
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("compare_dp.py: %s: %s" % (" ".join(cmd), out.stderr.strip()))
    return path


def simulate(geodes, scenario, alloc, extra):
    cmd = [geodes, "simulate", scenario, "--alloc", alloc, "--json"] + extra
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("compare_dp.py: %s: %s" % (" ".join(cmd), out.stderr.strip()))
    return json.loads(out.stdout)


def row(model, label, method, r, samples):
    iterations = samples / r["samples_per_s"] / r["iteration_s"]
    return {"model": model, "method": label, "placement": method,
            "iteration_s": r["iteration_s"],
            "samples_per_s": r["samples_per_s"],
            "compute_utilisation": r["compute_utilisation"],
            "samples": samples, "hours": samples / r["samples_per_s"] / 3600,
            "pp_tb": r["pp_bytes"] * iterations / 1e12,
            "dp_tb": r["dp_bytes"] * iterations / 1e12,
            "wan_tb": r["wan_bytes"] * iterations / 1e12}


def run_all(args):
    rows = []
    for i, spec in enumerate(args.model or MODELS):
        model, scenario = spec.split("=", 1)
        scenario, _, alloc = scenario.partition("@")
        alloc = alloc or place(args.geodes, scenario, args.method,
                               os.path.join(args.out, "alloc-%d.json" % i))
        for k, (label, extra, *own) in enumerate(METHODS):
            mine = alloc
            if own:
                mine = place(args.geodes, scenario, args.method,
                             os.path.join(args.out, "alloc-%d-%d.json" % (i, k)),
                             extra)
            r = simulate(args.geodes, scenario, mine, extra)
            rows.append(row(model, label, args.method, r, args.samples))
            print("%-10s %-34s %9.3f s/iter  %8.1f h  %7.1f %%  %9.2f TB  "
                  "%8.2f TB WAN" % (model, label, r["iteration_s"],
                                    rows[-1]["hours"],
                                    100 * r["compute_utilisation"],
                                    rows[-1]["pp_tb"] + rows[-1]["dp_tb"],
                                    rows[-1]["wan_tb"]), file=sys.stderr)
    return rows


def read_csv(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in FIELDS[3:]:
            r[k] = float(r[k])
    return rows


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in FIELDS})


def plot(rows, path):
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, axes = plt.subplots(len(models), 2, squeeze=False,
                             figsize=(12, 1.2 + 0.45 * len(rows)))
    for i, m in enumerate(models):
        mine = [r for r in rows if r["model"] == m][::-1]
        y = range(len(mine))
        names = [r["method"] for r in mine]
        ax = axes[i][0]
        ax.barh(y, [r["hours"] for r in mine], color="tab:blue")
        for k, r in enumerate(mine):
            ax.text(r["hours"], k, " %.0f h, %.0f %% busy"
                    % (r["hours"], 100 * r["compute_utilisation"]),
                    va="center", fontsize=7)
        ax.set_yticks(list(y), names, fontsize=8)
        ax.set_xlabel("hours to %.3g samples (simulated time, not "
                      "convergence)" % mine[0]["samples"], fontsize=8)
        ax.set_title("%s on worldwide" % m, fontsize=9)
        ax.set_xlim(0, 1.35 * max(r["hours"] for r in mine))
        ax = axes[i][1]
        total = [r["pp_tb"] + r["dp_tb"] for r in mine]
        wan = [r["wan_tb"] for r in mine]
        ax.barh([k + 0.2 for k in y], total, height=0.4, color="tab:orange",
                label="all bytes (pipeline + data-parallel)")
        ax.barh([k - 0.2 for k in y], wan, height=0.4, color="tab:red",
                label="between cities")
        for k in y:
            ax.text(wan[k], k - 0.2, " %.3g" % wan[k], va="center", fontsize=7)
        ax.set_yticks(list(y), [""] * len(mine))
        ax.set_xscale("log")
        lo = min(v for v in wan + total if v > 0)
        ax.set_xlim(lo / 3, 3 * max(total))
        ax.set_xlabel("TB sent for those samples (log)", fontsize=8)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--geodes", default=os.path.join(ROOT, "build", "geodes"))
    p.add_argument("--samples", type=float, default=1e6)
    p.add_argument("--method", default="gcma")
    p.add_argument("--model", action="append",
                   help="LABEL=SCENARIO[@ALLOC] (repeatable; default: GPT-3 "
                        "XL and 6.7B on worldwide; ALLOC: a placement to use "
                        "instead of scheduling one)")
    p.add_argument("--from-csv", help="plot this CSV instead of simulating")
    args = p.parse_args()
    if args.samples <= 0:
        p.error("--samples must be > 0")
    os.makedirs(args.out, exist_ok=True)
    rows = read_csv(args.from_csv) if args.from_csv else run_all(args)
    if not args.from_csv:
        write_csv(rows, os.path.join(args.out, "compare_dp.csv"))
    plot(rows, os.path.join(args.out, "compare_dp.png"))


if __name__ == "__main__":
    main()
