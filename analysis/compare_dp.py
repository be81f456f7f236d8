#!/usr/bin/env python3
"""compare_dp.py: pipeline over the WAN, or DiLoCo? (issue 12; the study
of analysis/FINDINGS.md)

    analysis/compare_dp.py --out DIR [--geodes BIN] [--samples N]
                           [--method NAME] [--model LABEL=SCENARIO[@ALLOC] ...]
                           [--place-each] [--jobs N] [--from-csv FILE]

Simulates each training method on each model's scenario with `geodes
simulate --json` and writes into DIR:
  compare_dp.csv   one row per (model, method): iteration_s, samples_per_s,
                   compute utilisation, the hours to N samples, and the
                   bytes the pipeline and the data-parallel synchronisation
                   send for those N samples (and of both, those between
                   cities), the placement and the scenario; then, when the
                   scenario is priced, the dollars per 1,000 samples (GPU-
                   hours and egress: simulate --json's cost) and the share
                   of them that is egress (empty where not priced)
  compare_dp.png   two panels per model: hours to N samples, TB sent; a
                   third, dollars per 1,000 samples, when some row is
                   priced; the title names the scenario and the placement
With --from-csv FILE it plots an earlier CSV instead of simulating.

The methods: DT-FM's pipeline (GPipe, central-PS synchronisation every
iteration), the same with 4-bit activations (AC-SGD), DiLoCo at H = 50, 100
and 500 inner steps (fp16 pseudo-gradients) and at H = 100 with int8
(INTELLECT-1's), and streaming DiLoCo (H = 100, 4 fragments, 5 overlapped
steps, 4-bit, as Douillard et al. 2025).

One placement per model serves every row: the user's (@ALLOC; its rows say
"allocation FILE") or one search by --method (default gcma, DT-FM's
scheduler), saved as DIR/alloc-I.json and reused by later runs. The DiLoCo
replicas keep the pipelines of that placement. --place-each searches the
4-bit row a placement of its own, with its sizes (DIR/alloc-I-K.json), as
the study in analysis/FINDINGS.md does. Searches, then simulations, run
--jobs at a time; while stderr is a terminal a line shows the steps done
and an estimate of the time left. geodes simulates time, not convergence.

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
import threading  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (label, options, changes the sizes the scheduler sees: with --place-each
# such a row gets a placement of its own, scheduled with those sizes)
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
# The scenario's name (simulate's "scenario") is the last column, so that
# CSVs of earlier versions, without it, still plot.
FIELDS = ["model", "method", "placement", "iteration_s", "samples_per_s",
          "compute_utilisation", "samples", "hours", "pp_tb", "dp_tb",
          "wan_tb", "scenario", "usd_per_1k_samples", "egress_share"]
NUMBERS = FIELDS[3:11]
DOLLARS = FIELDS[12:]  # empty (None) where the scenario prices nothing


def geodes_json(cmd):
    """Runs a geodes command; its stdout parsed as JSON when it asks for
    --json (None otherwise). Exits naming the command when it fails."""
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("compare_dp.py: %s: %s" % (" ".join(cmd), out.stderr.strip()))
    return json.loads(out.stdout) if "--json" in cmd else None


class Progress:
    """Steps done, the time so far and an estimate of the time left, on one
    line of stderr, redrawn while stderr is a terminal (silent otherwise).
    A kind of step (search, simulation) is estimated at the mean time of
    the steps of that kind already done; running steps are credited with
    their time so far; the work left is shared by the jobs."""

    def __init__(self, steps, jobs):
        self.todo = dict(steps)  # kind -> steps not yet done
        self.took = {k: [] for k in self.todo}
        self.running = {}  # id -> (kind, start)
        self.jobs, self.t0 = jobs, time.monotonic()
        self.lock = threading.Lock()
        self.tty = sys.stderr.isatty()
        self.stop = threading.Event()
        if self.tty:
            threading.Thread(target=self._tick, daemon=True).start()

    def begin(self, key, kind):
        with self.lock:
            self.running[key] = (kind, time.monotonic())

    def end(self, key):
        with self.lock:
            kind, start = self.running.pop(key)
            self.took[kind].append(time.monotonic() - start)
            self.todo[kind] -= 1
        self._draw()

    def left(self):
        """Seconds left, or None while a kind has no step done yet."""
        now, total = time.monotonic(), 0.0
        for kind, n in self.todo.items():
            if n == 0:
                continue
            if not self.took[kind]:
                return None
            mean = sum(self.took[kind]) / len(self.took[kind])
            ran = sum(now - t for k, t in self.running.values() if k == kind)
            total += max(0.0, n * mean - ran)
        return total / self.jobs

    def _draw(self):
        if not self.tty:
            return
        with self.lock:
            done = sum(len(v) for v in self.took.values())
            total = done + sum(self.todo.values())
            left = self.left()
            now = time.monotonic()
            busy = ", ".join("%s %.0f s" % (k, now - t)
                             for k, t in sorted(self.running.values()))
        est = ("about %.0f s left" % left if left is not None
               else "estimate after the first of each kind")
        line = "compare_dp: %d/%d steps, %.0f s, %s%s" % (
            done, total, time.monotonic() - self.t0, est,
            "; running: " + busy if busy else "")
        sys.stderr.write("\r\033[K" + line[:160])
        sys.stderr.flush()

    def _tick(self):
        while not self.stop.wait(1.0):
            self._draw()

    def close(self):
        self.stop.set()
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def row(model, label, placement, r, samples):
    iterations = samples / r["samples_per_s"] / r["iteration_s"]
    return {"model": model, "method": label, "placement": placement,
            "iteration_s": r["iteration_s"],
            "samples_per_s": r["samples_per_s"],
            "compute_utilisation": r["compute_utilisation"],
            "samples": samples, "hours": samples / r["samples_per_s"] / 3600,
            "pp_tb": r["pp_bytes"] * iterations / 1e12,
            "dp_tb": r["dp_bytes"] * iterations / 1e12,
            "wan_tb": r["wan_bytes"] * iterations / 1e12,
            "scenario": r.get("scenario", ""),
            "usd_per_1k_samples": r.get("cost", {}).get("usd_per_1k_samples"),
            "egress_share": r.get("cost", {}).get("egress_share")}


def plan(args):
    """The searches and simulations of the study: a list of searches
    (path, command) and of rows (model, label, placement name, scenario,
    allocation path, options), in the table's order. One placement per
    model serves every row: the user's (@ALLOC), or one search by --method,
    saved in DIR and reused; --place-each adds a search per row that
    changes the sizes the scheduler sees. A placement already in DIR is
    not searched again."""
    searches, rows = [], []
    for i, spec in enumerate(args.model or MODELS):
        model, _, scenario = spec.partition("=")
        scenario, _, alloc = scenario.partition("@")
        if alloc:
            placement = os.path.basename(alloc)
        else:
            alloc = os.path.join(args.out, "alloc-%d.json" % i)
            placement = args.method
            searches.append((alloc, [args.geodes, "schedule", scenario,
                                     "--method", args.method, "-o", alloc]))
        for k, (label, extra, *sizes) in enumerate(METHODS):
            mine, where = alloc, placement
            if k == 0 and placement != args.method:
                label = "pipeline (allocation %s)" % placement
            if sizes and args.place_each:
                mine = os.path.join(args.out, "alloc-%d-%d.json" % (i, k))
                where = "%s (own sizes)" % args.method
                searches.append((mine, [args.geodes, "schedule", scenario,
                                        "--method", args.method, "-o",
                                        mine] + extra))
            rows.append((model, label, where, scenario, mine, extra))
    searches = [(p, c) for p, c in searches if not os.path.exists(p)]
    return searches, rows


def run_all(args):
    searches, rows = plan(args)
    progress = Progress({"search": len(searches), "simulate": len(rows)},
                        args.jobs)
    results = [None] * len(rows)

    def step(key, kind, cmd):
        progress.begin(key, kind)
        try:
            return geodes_json(cmd)
        finally:
            progress.end(key)

    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            # Searches first (the long steps), then every row at once.
            list(pool.map(lambda s: step(s[0], "search", s[1]), searches))
            cmds = [[args.geodes, "simulate", r[3], "--alloc", r[4], "--json"]
                    + r[5] for r in rows]
            sims = list(pool.map(lambda kc: step(kc[0], "simulate", kc[1]),
                                 enumerate(cmds)))
    finally:
        progress.close()
    for k, ((model, label, where, _, _, _), r) in enumerate(zip(rows, sims)):
        results[k] = row(model, label, where, r, args.samples)
        x = results[k]
        usd = x["usd_per_1k_samples"]
        print("%-10s %-34s %9.3f s/iter  %8.1f h  %7.1f %%  %9.2f TB  "
              "%8.2f TB WAN  %s" % (
                  model, label, x["iteration_s"], x["hours"],
                  100 * x["compute_utilisation"], x["pp_tb"] + x["dp_tb"],
                  x["wan_tb"], "not priced" if usd is None else
                  "$%.4g per 1,000 samples, egress %.0f %%"
                  % (usd, 100 * (x["egress_share"] or 0))),
              file=sys.stderr)
    print("compare_dp.py: %d searches, %d simulations in %.1f s"
          % (len(searches), len(rows), time.monotonic() - progress.t0),
          file=sys.stderr)
    return results


def read_csv(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in NUMBERS:
            r[k] = float(r[k])
        r["scenario"] = r.get("scenario") or ""
        for k in DOLLARS:  # absent (an older CSV) or empty: not priced
            r[k] = float(r[k]) if r.get(k) else None
    return rows


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if r[k] is None else r[k] for k in FIELDS})


def title(model, mine):
    """A panel's title: the model, the scenario and the placement(s)."""
    scenario = mine[0]["scenario"] or "?"
    places = list(dict.fromkeys(r["placement"] for r in mine))
    if len(places) == 1:
        where = "one placement (%s) for every row" % places[0]
    else:
        where = "placements: " + ", ".join(places)
    return "%s on %s: %s" % (model, scenario, where)


def dollars(ax, mine):
    """The third panel: dollars per 1,000 samples, the egress's part apart."""
    y = range(len(mine))
    usd = [r["usd_per_1k_samples"] or 0 for r in mine]
    egress = [u * (r["egress_share"] or 0) for u, r in zip(usd, mine)]
    ax.barh(list(y), usd, color="tab:green", label="GPU-hours + egress")
    ax.barh(list(y), egress, color="tab:purple", label="of which egress")
    for k, r in enumerate(mine):
        ax.text(usd[k], k, " not priced" if r["usd_per_1k_samples"] is None
                else " $%.3g" % usd[k], va="center", fontsize=7)
    ax.set_yticks(list(y), [""] * len(mine))
    ax.set_xlim(0, 1.35 * max(usd + [1e-9]))
    ax.set_xlabel("USD per 1,000 samples", fontsize=8)


def plot(rows, path):
    models = list(dict.fromkeys(r["model"] for r in rows))
    priced = any(r["usd_per_1k_samples"] is not None for r in rows)
    fig, axes = plt.subplots(len(models), 3 if priced else 2, squeeze=False,
                             figsize=(17 if priced else 12,
                                      1.6 + 0.45 * len(rows)))
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
        ax.set_title(title(m, mine[::-1]), fontsize=9, loc="left")
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
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
            lambda v, _: "%g" % v))  # 0.1, 1, 10: not 10^-1, 10^0
        ax.set_xlabel("TB sent for those samples (log)", fontsize=8)
        if i == 0:  # one legend, above the panels, off the bars
            ax.legend(fontsize=7, loc="lower left", ncol=2,
                      bbox_to_anchor=(0, 1.0), frameon=False)
        if priced:
            dollars(axes[i][2], mine)
            if i == 0:
                axes[i][2].legend(fontsize=7, loc="lower left", ncol=2,
                                  bbox_to_anchor=(0, 1.0), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Without --place-each every row of a model runs on one "
               "placement, so the rows differ only by what they name.")
    p.add_argument("--out", required=True, help="folder for the CSV, the "
                   "PNG and the placements (alloc-*.json, reused)")
    p.add_argument("--geodes", default=os.path.join(ROOT, "build", "geodes"),
                   help="the geodes binary (default: build/geodes)")
    p.add_argument("--samples", type=float, default=1e6,
                   help="samples to train (default 1e6)")
    p.add_argument("--method", default="gcma",
                   help="placement method of the searches (default gcma, "
                        "DT-FM's scheduler)")
    p.add_argument("--model", action="append",
                   help="LABEL=SCENARIO[@ALLOC] (repeatable; default: GPT-3 "
                        "XL and 6.7B on worldwide; ALLOC: a placement to use "
                        "instead of searching one)")
    p.add_argument("--place-each", action="store_true",
                   help="search a placement of its own for each row that "
                        "changes the sizes the scheduler sees (4-bit "
                        "activations), instead of the model's one placement")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="geodes commands run at once (default: the CPUs)")
    p.add_argument("--from-csv", help="plot this CSV instead of simulating")
    args = p.parse_args()
    if args.samples <= 0:
        p.error("--samples must be > 0")
    if args.jobs < 1:
        p.error("--jobs must be >= 1")
    for spec in args.model or []:
        if "=" not in spec:
            p.error("--model %s: expected LABEL=SCENARIO[@ALLOC]" % spec)
    os.makedirs(args.out, exist_ok=True)
    rows = read_csv(args.from_csv) if args.from_csv else run_all(args)
    if not args.from_csv:
        write_csv(rows, os.path.join(args.out, "compare_dp.csv"))
    plot(rows, os.path.join(args.out, "compare_dp.png"))


if __name__ == "__main__":
    main()
