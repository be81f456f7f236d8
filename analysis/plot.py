#!/usr/bin/env python3
"""plot.py: draws the figures of a geodes results database (DESIGN.md s. 7, 9).

    analysis/plot.py DB --out DIR [--timeline FILE] [--shapes] [--series]
    analysis/plot.py --links FILE.csv --out DIR [--scenario NAME]
    analysis/plot.py --timeline FILE --out DIR [--scenario NAME]

Writes PNG files into DIR, from the database alone:
  score_vs_simulated.png      DT-FM score vs simulated iteration time, one
                              panel per scenario, one colour per network model
  predicted_vs_simulated.png  the end-to-end predictor vs simulation (y = x
                              is a perfect prediction)
  bandwidth_scale.png         simulated iteration time vs bandwidth scale,
                              one line per method (and GPU, when rows hold
                              several; mean over seeds)
  convergence.png             best DT-FM score vs candidates, one line per
                              (run, method), labelled with the scenario
  iterations.png              throughput (samples/s) of each iteration over
                              its span of the run's clock (rows with
                              iterations), one line per run, broken where
                              nothing trained (lost time), replicas marked,
                              faults marked as vertical lines, the network
                              trace's changes as ticks on the time axis
  policies.png                goodput (samples/s) and time lost vs device
                              outages per hour, one line per recovery
                              policy, a panel per scenario and network
  timeline.png                (--timeline) a per-device Gantt chart of a
                              `geodes simulate --timeline` Chrome trace
  links.png                   (--links FILE.csv) link utilisation over time
                              from `geodes explain --link-stats`: the
                              busiest site pairs' utilisation per step, and
                              every resource's mean and peak (no DB needed)
  costs.png                   dollars per 1,000 samples against samples/s
                              of every priced single-iteration row, one
                              panel per scenario, one marker per training
                              method (data-parallel algorithm, widths,
                              DiLoCo's H), each point labelled with the
                              share of its bill that is egress
  shapes.png                  (--shapes) samples/s against the parallel
                              shape (stages x replicas) of every
                              configuration `geodes schedule --shape auto
                              --db` evaluated, predicted and simulated, a
                              panel per run, as wide as its shapes' labels
                              need
A plot whose data is missing is skipped with a note on stderr. Titles name
a scenario by its name (a file's "name", not its file name; scenario_names).
Throughput, iteration time, goodput and time lost start from 0, so a dip
of a few per cent looks like one. With --series, each NAME.png gets
NAME.json beside it: the series drawn, read back from the figure
(plot_series.py), which tests/test_plot.c compares with the data.

Matplotlib: when the first python3 on PATH lacks it, the script re-executes
itself under /usr/bin/python3 (Debian's python3-matplotlib).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpl_agg import matplotlib_agg  # noqa: E402

matplotlib = matplotlib_agg(__file__, "plot.py")
import plot_series  # noqa: E402
import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sqlite3  # noqa: E402
from collections import defaultdict  # noqa: E402

import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

NETWORK_COLOURS = {"ideal": "tab:green", "netem": "tab:blue", "tcp": "tab:red"}
# Hollow, filled and triangle markers, so identical ideal/netem points show.
NETWORK_STYLE = {"ideal": dict(marker="o", s=60, facecolors="none", lw=1.2),
                 "netem": dict(marker="o", s=14),
                 "tcp": dict(marker="^", s=22)}
MARKERS = "os^Dv<>pPX*h"


SCHEMA_VERSION = 10  # analysis/db.h DB_SCHEMA_VERSION


def note(msg):
    print("plot.py: " + msg, file=sys.stderr)


def connect(path):
    if not os.path.exists(path):
        sys.exit("plot.py: %s: no such database" % path)
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        app = db.execute("PRAGMA application_id").fetchone()[0]
    except sqlite3.DatabaseError as e:
        sys.exit("plot.py: %s: not a readable SQLite database (%s)" % (path, e))
    if app != 0x67656F64:
        sys.exit("plot.py: %s: not a geodes results database" % path)
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA_VERSION:
        sys.exit("plot.py: %s: results store of schema version %d; this "
                 "plot.py reads version %d (geodes migrates older versions "
                 "from 2 on when it opens the file, e.g. for a sweep; re-run "
                 "an older study into a new database)"
                 % (path, version, SCHEMA_VERSION))
    return db


def grid(n):
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols,
                             figsize=(max(7.0, 5.2 * cols), 4.6 * rows),
                             squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def varying(rows, keys, get=lambda r, k: r[k], base=lambda r: ()):
    """The keys of `keys` (in their order) that take more than one value
    over rows, less those the keys before them (and base(row), e.g. the
    method) determine: what a label must name to tell the rows apart. A key
    every row shares (window_bytes=None, activation_gb=0.5) is left out, and
    so is one that follows another (gradient_gb with layers)."""
    out = []
    for k in keys:
        seen = {}
        for r in rows:
            at = (base(r),) + tuple(get(r, o) for o in out)
            if seen.setdefault(at, get(r, k)) != get(r, k):
                out.append(k)
                break
    return out


def value(v):
    """A knob's value in a label: floats to 4 significant digits."""
    return "%.4g" % v if isinstance(v, float) else str(v)


def stem(scenario):
    """A scenario file's name without its folder and .json."""
    base = os.path.basename(scenario or "?")
    return base[:-5] if base.endswith(".json") else base


# The scenario's name of each spelling of a scenario in the database
# (scenario_names), filled by main; named() reads it.
NAMES = {}


def named(scenario):
    """A scenario as titles and panels name it: its name (NAMES), a
    built-in's name as it is, else a file's stem."""
    return NAMES.get(scenario) or stem(scenario)


def name_in_file(spelled, db_path, command):
    """The "name" of the scenario file spelled as it was typed, looked for
    from the working folder, the database's folder and the folder of the
    sweep file in command (sweeps read a scenario beside their file), or
    None."""
    folders = ["", os.path.dirname(db_path)]
    words = (command or "").split()
    if "sweep" in words:
        for w in words[words.index("sweep") + 1:]:
            if w.endswith(".json") and not w.startswith("-"):
                folders += [os.path.dirname(w),
                            os.path.join(os.path.dirname(db_path),
                                         os.path.dirname(w))]
    for folder in folders:
        try:
            with open(os.path.join(folder, spelled)) as f:
                name = json.load(f).get("name")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(name, str) and name:
            return name
    return None


def scenario_names(db, db_path):
    """The scenario's name for each spelling of results.scenario: sweep
    points (and `geodes run`'s) keep a scenario file as its path was typed,
    validate and schedule rows keep its name. A path takes the name of the
    run that stored it (`geodes run FILE` writes it in runs.scenario), else
    the "name" in the file (name_in_file), else its stem; files of one name
    are told apart by their stems."""
    out = {}
    for spelled, run_name, command in db.execute(
            "SELECT DISTINCT r.scenario, u.scenario, u.command FROM results "
            "r LEFT JOIN runs u ON u.id = r.run_id ORDER BY r.scenario, "
            "u.scenario IS NULL"):  # a run's name first
        if spelled in out or not spelled.endswith(".json"):
            continue
        out[spelled] = (run_name or name_in_file(spelled, db_path, command)
                        or stem(spelled))
    by = defaultdict(set)
    for spelled, name in out.items():
        by[name].add(spelled)
    for name, spellings in by.items():
        if len(spellings) > 1:
            for spelled in spellings:
                out[spelled] = "%s (%s)" % (name, stem(spelled))
    return out


def legend_outside(ax, **kw):
    """The axes' legend to the right of its panel, off the data."""
    kw.setdefault("fontsize", 8)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0,
              **kw)


def figure_legend(fig, axes, **kw):
    """One legend for every panel (their series share a look), to the right
    of the figure: each label once, in the order first drawn."""
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    kw.setdefault("fontsize", 9)
    fig.legend(list(seen.values()), list(seen.keys()), loc="upper left",
               bbox_to_anchor=(1.0, 0.93), borderaxespad=0.5, **kw)


def nice_ticks(hi):
    """0 and 1-2-5 steps up to hi: ticks a symlog axis reads at a glance."""
    out, k = [0.0], 0
    while True:
        for m in (1, 2, 5):
            v = m * 10.0 ** k
            if v > hi * 1.05:
                return out
            out.append(v)
        k += 1


# --series: save() also writes NAME.json, the series drawn (plot_series).
SERIES = False


def save(fig, out, name, title, description=None):
    # Room for the title in inches, whatever the figure's height:
    # tight_layout alone lets it overlap a tall figure's first row (the
    # timeline) when a legend sits outside the axes.
    height = fig.get_size_inches()[1]
    fig.suptitle(title, fontsize=13, y=1 - 0.1 / height, va="top")
    fig.tight_layout()  # counts the suptitle (matplotlib >= 3.3)
    fig.subplots_adjust(top=min(fig.subplotpars.top, 1 - 0.5 / height))
    path = os.path.join(out, name)
    meta = {"Title": title}
    if description:
        meta["Description"] = description
    # bbox "tight": legends outside the panels are in the picture
    fig.savefig(path, dpi=110, metadata=meta, bbox_inches="tight")
    if SERIES:  # what was drawn, beside it (plot_series)
        plot_series.write(fig, path[:-4] + ".json")
    plt.close(fig)
    print(path)


def ranks(xs):
    """Average ranks (1-based; ties share the mean rank)."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2.0 + 1
        i = j + 1
    return out


def spearman(xs, ys):
    if len(xs) < 2:
        return float("nan")
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx and syy else float("nan")


def model_vs_simulated(db, out, column, name, xlabel, title, diagonal):
    rows = db.execute(
        "SELECT scenario, network_model, %s, iteration_s FROM results "
        "WHERE %s IS NOT NULL AND iteration_s IS NOT NULL "
        "ORDER BY scenario, network_model" % (column, column)).fetchall()
    if not rows:
        note("no rows with %s and iteration_s: skipping %s" % (column, name))
        return
    by = defaultdict(lambda: defaultdict(lambda: ([], [])))
    for scenario, network, x, y in rows:
        by[named(scenario)][network][0].append(x)
        by[named(scenario)][network][1].append(y)
    fig, axes = grid(len(by))
    for ax, (scenario, nets) in zip(axes, sorted(by.items())):
        lo, hi = float("inf"), 0.0
        for network, (xs, ys) in sorted(nets.items()):
            style = dict(NETWORK_STYLE.get(network, dict(marker="s", s=14)))
            colour = NETWORK_COLOURS.get(network, "tab:grey")
            if style.get("facecolors") == "none":
                style["edgecolors"] = colour
            else:
                style["color"] = colour
            ax.scatter(xs, ys, alpha=0.8, label="%s: Spearman %.2f, %d pts"
                       % (network, spearman(xs, ys), len(xs)), **style)
            lo = min(lo, min(xs), min(ys))
            hi = max(hi, max(xs), max(ys))
        if diagonal:
            ax.plot([lo, hi], [lo, hi], color="grey", lw=1, ls="--",
                    label="y = x")
        ax.set_title(scenario)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("simulated iteration time (s)")
        ax.grid(alpha=0.3)
        legend_outside(ax, title="network model")
    save(fig, out, name, title)


# Knobs besides the seed that tell two lines of one panel apart when a sweep
# crosses them (a line is a method plus the values of those that vary).
LINE_KNOBS = ("gpu", "layers", "batch", "micro_batch",
              "micro_batches_per_pass", "schedule", "dp_algo", "window_bytes",
              "latency_scale", "activation_gb", "gradient_gb")


def bandwidth_scale(db, out):
    """Iteration time vs bandwidth scale, a panel per (scenario, network).
    A line is a method (plus every other knob the rows vary, e.g. layers or
    GPU) swept over at least two scales, its points the mean over seeds;
    single points (validate's perturbed samples at scale 1) are left out. A
    line keeps one colour, marker and dash in every panel, so equal lines
    (dtfm-identity under greedy) stay visible."""
    knobs = ", ".join(LINE_KNOBS)
    rows = db.execute(
        "SELECT scenario, network_model, method, %s, bandwidth_scale, "
        "avg(iteration_s) FROM results "
        "WHERE iteration_s IS NOT NULL AND bandwidth_scale IS NOT NULL "
        "GROUP BY scenario, network_model, method, %s, bandwidth_scale "
        "ORDER BY bandwidth_scale" % (knobs, knobs)).fetchall()
    k = len(LINE_KNOBS)
    # Lines of at least two scales only (single points: validate's
    # perturbed samples at scale 1); their knobs name a line where they
    # vary inside a panel (across panels the title tells them apart).
    by = defaultdict(list)
    for r in rows:
        by[tuple(r[:3 + k])].append(r)
    kept = [r for v in by.values() if len(v) > 1 for r in v]
    panel_rows = defaultdict(list)
    for r in kept:
        panel_rows[r[:2]].append(r)
    names = [LINE_KNOBS[i] for i in sorted(
        {i for v in panel_rows.values()
         for i in varying(v, range(k), lambda r, i: r[3 + i],
                          lambda r: r[2])})]
    at = {n: 3 + LINE_KNOBS.index(n) for n in names}
    panels = defaultdict(lambda: defaultdict(list))
    for r in kept:
        scenario, network, method = named(r[0]), r[1], r[2]
        line = ", ".join([method] + ["%s=%s" % (n, value(r[at[n]]))
                                     for n in names])
        panels[(scenario, network)][line].append((r[3 + k], r[4 + k]))
    if not panels:
        note("no sweep over bandwidth_scale: skipping bandwidth_scale.png")
        return
    lines = sorted({m for v in panels.values() for m in v})
    look = {m: dict(color=plt.cm.tab10(i % 10),
                    marker=MARKERS[i % len(MARKERS)],
                    ls=("-", "--", "-.", ":")[i % 4],
                    markersize=8 - 1.5 * (i % 3))
            for i, m in enumerate(lines)}
    legend_title = ", ".join(["method"] + names)
    fig, axes = grid(len(panels))
    labels = []
    for ax, ((scenario, network), methods) in zip(axes, sorted(panels.items())):
        for method, pts in sorted(methods.items()):
            xs, ys = zip(*pts)
            ax.plot(xs, ys, label=method, **look[method])
            labels.append("%s, %s: %s" % (scenario, network, method))
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted({x for p in methods.values() for x, _ in p}))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter(
            "%g"))
        ax.set_title("%s, %s network" % (scenario, network))
        ax.set_xlabel("bandwidth scale (x the scenario's bandwidths)")
        ax.set_ylabel("simulated iteration time (s)")
        ax.set_ylim(bottom=0)  # from 0: 10 % slower looks like 10 %
        ax.grid(alpha=0.3, which="both")
    figure_legend(fig, axes, title=legend_title)
    save(fig, out, "bandwidth_scale.png",
         "Iteration time vs bandwidth, per placement method "
         "(mean over seeds)", description="\n".join(labels))


def convergence(db, out):
    """One step line per (run, method): a run may hold several searches
    (`geodes run` stores greedy's and gcma's). The legend names the run, the
    method and the scenario; the PNG's Description repeats the labels.
    Unlike quantities get their own axes: a search judged by simulation
    (a curve named METHOD/NETWORK, e.g. sim/tcp) reaches a simulated
    iteration time, the others a DT-FM score, side by side."""
    curves = db.execute(
        "SELECT c.run_id, c.method, r.scenario, count(*) FROM convergence c "
        "JOIN runs r ON r.id = c.run_id GROUP BY c.run_id, c.method "
        "ORDER BY c.run_id, c.method").fetchall()
    if not curves:
        note("no convergence rows: skipping convergence.png")
        return
    if len(curves) > 12:
        note("convergence.png: the last 12 of %d curves" % len(curves))
    curves = curves[-12:]
    kinds = [("DT-FM score (s)", [c for c in curves if "/" not in c[1]]),
             ("simulated iteration time (s)",
              [c for c in curves if "/" in c[1]])]
    kinds = [k for k in kinds if k[1]]
    fig, axes = plt.subplots(1, len(kinds), squeeze=False,
                             figsize=(6.5 * len(kinds), 4.6))
    labels = []
    for i, (run, method, scenario, _) in enumerate(curves):
        labels.append("run %d: %s on %s" % (run, method, scenario or "?"))
    colour = {c[:2]: plt.cm.tab10(i % 10) for i, c in enumerate(curves)}
    for ax, (ylabel, mine) in zip(axes[0], kinds):
        longest = 1
        for j, (run, method, scenario, _) in enumerate(mine):
            pts = db.execute("SELECT candidate, best_score_s FROM convergence "
                             "WHERE run_id = ? AND method = ? ORDER BY "
                             "candidate", (run, method)).fetchall()
            xs, ys = zip(*pts)
            label = "run %d: %s on %s" % (run, method, scenario or "?")
            # equal curves (sim under each network) stay visible: a later
            # one dashed and thinner over an earlier one
            ax.step(xs, ys, where="post", label=label,
                    color=colour[(run, method)], ls=("-", "--", ":")[j % 3],
                    lw=2.4 - 0.7 * (j % 3))
            # The end of each search, so a short one (greedy: a few
            # candidates) shows beside a 5000-candidate GCMA.
            ax.plot(xs[-1:], ys[-1:], marker="o", color=colour[(run, method)])
            longest = max(longest, xs[-1])
        if longest > 100:
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
                lambda v, _: "%g" % v))  # 1, 10, 100: not 10^0, 10^1
        ax.set_xlabel("candidates scored")
        ax.set_ylabel("best so far: " + ylabel)
        ax.set_title(ylabel.split(" (")[0])
        ax.grid(alpha=0.3)
    figure_legend(fig, axes[0], title="run: method on scenario")
    save(fig, out, "convergence.png", "Scheduler convergence",
         description="\n".join(labels))


# Colours of the marks of a run (fault events: traces/fault.h).
MARK_COLOURS = {"device_down": "tab:red", "site_down": "darkred",
                "link_down": "tab:purple", "link_slow": "tab:pink",
                "device_slow": "tab:orange"}
POLICY_COLOURS = {"restart": "tab:red", "reroute": "tab:blue",
                  "replan": "tab:green"}
POLICY_ORDER = {"restart": 0, "reroute": 1, "replan": 2}
RUN_KNOBS = ("method", "network_model", "recovery", "checkpoint_every",
             "faults", "gpu", "layers", "bandwidth_scale")


def run_label(row, keys):
    """A run's label: the values of keys (a fault file by its name)."""
    def one(k):
        v = row[k]
        if k in ("method", "recovery"):
            return str(v)
        if k == "faults" and v:
            v = os.path.basename(v)
        return "%s=%s" % (k, value(v))
    return ", ".join(one(k) for k in keys) or "run"


# Kept iterations closer than this (s) trained back to back (a run's
# starts add up to 1e-12 s): the line goes on; further apart, time was lost
# between them (a checkpoint, an outage, a reload) and the line breaks.
BACK_TO_BACK_S = 1e-6


def run_series(pts):
    """A run's throughput over its clock (hours) as a line: each kept
    iteration (start_s, iteration_s, samples, ...) flat at its samples/s
    from its start through its middle to its end, and a break (NaN) where
    time was lost before the next, for nothing trained then. Returns the
    xs, the ys and the indices of the middles (where the markers go)."""
    xs, ys, mids, end = [], [], [], None
    for a, b, c, _ in pts:
        y = c / b if b > 0 else 0.0
        if end is not None and a > end + BACK_TO_BACK_S:
            xs.append(math.nan)
            ys.append(math.nan)
        mids.append(len(xs) + 1)
        xs += [a / 3600, (a + b / 2) / 3600, (a + b) / 3600]
        ys += [y, y, y]
        end = a + b
    return xs, ys, mids


def iterations(db, out):
    """Throughput (samples per second of each kept iteration, or of each
    DiLoCo outer step, over its span: run_series; broken where nothing
    trained; from 0) against the run's clock, one line per training run
    (a results row with iterations), a panel per scenario, the replica
    count written where it changes (so a reroute to fewer replicas, whose
    iterations are shorter but train fewer samples, shows as the drop in
    throughput it is): where the network trace changed (ticks along the
    time axis) and where faults struck (vertical lines, one colour per
    event) show beside them."""
    db.row_factory = sqlite3.Row
    rows = db.execute(
        "SELECT id, scenario, %s FROM results WHERE iterations IS NOT NULL "
        "AND id IN (SELECT result_id FROM iterations) ORDER BY scenario, "
        "point_key" % ", ".join(RUN_KNOBS)).fetchall()
    db.row_factory = None
    if not rows:
        note("no training runs (rows with iterations): skipping "
             "iterations.png")
        return
    by = defaultdict(list)
    for r in rows:
        by[named(r["scenario"])].append(r)
    fig, axes = grid(len(by))
    labels = []
    look = {}  # a label keeps its colour and marker in every panel
    for ax, (scenario, runs) in zip(axes, sorted(by.items())):
        if len(runs) > 12:
            note("iterations.png: %s: the first 12 of %d runs"
                 % (scenario, len(runs)))
            runs = runs[:12]
        keys = varying(runs, RUN_KNOBS)
        faults, trace = set(), set()
        for r in runs:
            pts = db.execute("SELECT start_s, iteration_s, samples, replicas "
                             "FROM iterations WHERE result_id = ? ORDER BY "
                             "idx", (r["id"],)).fetchall()
            xs, ys, mids = run_series(pts)
            label = run_label(r, keys)
            n = look.setdefault(label, len(look))
            # equal runs stay visible: a later one dashed, its marks
            # smaller, inside an earlier one's hollow ones
            colour = plt.cm.tab10(n % 10)
            ax.plot(xs, ys, marker=MARKERS[n % len(MARKERS)], markevery=mids,
                    color=colour, ls=("-", "--", ":")[n % 3],
                    markersize=6 - 2 * (n % 3), lw=1, label=label,
                    markerfacecolor="none" if n % 3 == 0 else None)
            for k, (_, _, _, reps) in enumerate(pts):  # replicas at changes
                if k == 0 or reps != pts[k - 1][3]:
                    ax.annotate("R=%d" % reps, (xs[mids[k]], ys[mids[k]]),
                                fontsize=6, color=colour,
                                textcoords="offset points", xytext=(2, 3))
            labels.append("%s: %s" % (scenario, label))
            for t, kind, what in db.execute(
                    "SELECT t_s, kind, what FROM marks WHERE result_id = ?",
                    (r["id"],)):
                (trace if kind == "trace" else faults).add((t, kind, what))
        for t, kind, what in sorted(faults):
            ax.axvline(t / 3600, color=MARK_COLOURS.get(kind, "grey"),
                       lw=0.8, ls="--", alpha=0.6)
        if trace:
            ax.plot([t / 3600 for t, _, _ in trace], [0] * len(trace), "|",
                    color="grey", markersize=6, alpha=0.5,
                    transform=ax.get_xaxis_transform())
        for kind in sorted({k for _, k, _ in faults}):
            ax.plot([], [], color=MARK_COLOURS.get(kind, "grey"), ls="--",
                    label=kind)
        if trace:
            ax.plot([], [], "|", color="grey", label="trace change")
        ax.set_title(scenario)
        ax.set_xlabel("wall-clock time of the run (h)")
        ax.set_ylabel("throughput (samples/s of each iteration)")
        ax.set_ylim(bottom=0)  # a dip of 12 % looks like one
        ax.grid(alpha=0.3)
        legend_outside(ax, fontsize=7)
    save(fig, out, "iterations.png", "Throughput over a training run "
         "(R: replicas)",
         description="\n".join(labels))


def policies(db, out):
    """Goodput and time lost against how often devices were lost, one line
    per recovery policy (and checkpoint interval, where a panel has several),
    a panel per (scenario, network): which policy wins, where, at which
    rate. A fault file's rate is the device outages started per hour of run,
    averaged over the runs that used it, so every policy's point for one
    file sits at one x (runs without faults at 0). Files are pooled by half
    decades of rate (seeds of one generator setting fall together); a
    point is the mean over a bin's runs, at the mean rate of its files.
    Panels run four to a row, goodput above time lost."""
    rows = db.execute(
        "SELECT r.scenario, r.network_model, coalesce(r.recovery, "
        "'restart'), r.checkpoint_every, coalesce(r.faults, ''), "
        "r.samples_per_s, r.lost_s / r.total_s, r.total_s, "
        "(SELECT count(*) FROM marks m WHERE m.result_id = r.id AND m.kind IN "
        "('device_down', 'site_down')) FROM results r WHERE r.iterations IS "
        "NOT NULL AND r.total_s > 0").fetchall()
    rows = [(named(r[0]),) + tuple(r[1:]) for r in rows]
    rate = defaultdict(list)  # (scenario, network, faults) -> outages / h
    for scenario, net, _, _, faults, _, _, total, n in rows:
        rate[(scenario, net, faults)].append(n / (total / 3600.0))
    rate = {k: sum(v) / len(v) if k[2] else 0.0 for k, v in rate.items()}

    def bin_of(x):  # half decades: [10^(k/2), 10^((k+1)/2)); 0 alone
        return None if x <= 0 else math.floor(2 * math.log10(x))

    where = defaultdict(list)  # (scenario, network, bin) -> files' rates
    for (scenario, net, faults), x in rate.items():
        where[(scenario, net, bin_of(x))].append(x)
    panels = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for scenario, net, policy, ckpt, faults, goodput, lost, _, _ in rows:
        xs = where[(scenario, net, bin_of(rate[(scenario, net, faults)]))]
        x = round(sum(xs) / len(xs), 6)
        panels[(scenario, net)][(policy, ckpt)][x].append((goodput, lost))
    panels = {k: v for k, v in panels.items()
              if any(len(p) > 1 for p in v.values())}
    if not panels:
        note("no training runs at two or more outage rates: skipping "
             "policies.png")
        return
    cols = min(4, len(panels))
    rows_ = 2 * ((len(panels) + cols - 1) // cols)
    fig, axes = plt.subplots(rows_, cols, squeeze=False,
                             figsize=(max(7.0, 5.2 * cols), 4.2 * rows_))
    for i in range(len(panels), rows_ // 2 * cols):  # unused panels
        axes[2 * (i // cols)][i % cols].axis("off")
        axes[2 * (i // cols) + 1][i % cols].axis("off")
    labels = []
    # a policy keeps its colour and marker in every panel
    series = sorted({k for v in panels.values() for k in v},
                    key=lambda k: (POLICY_ORDER.get(k[0], 9), k[0], k[1] or 0))
    # (equal lines, as reroute and replan often are, stay visible: the
    # later one dashed over the earlier one's larger markers)
    look = {k: dict(color=POLICY_COLOURS.get(
        k[0], plt.cm.tab10((3 + i) % 10)), marker=MARKERS[i % len(MARKERS)],
        ls=("-", "--", ":")[i % 3], markersize=7 - 1.5 * (i % 3))
        for i, k in enumerate(series)}
    for i, ((scenario, net), pol) in enumerate(sorted(panels.items())):
        top = axes[2 * (i // cols)][i % cols]
        bottom = axes[2 * (i // cols) + 1][i % cols]
        several = len({c for _, c in pol}) > 1
        for (policy, ckpt), pts in sorted(
                pol.items(), key=lambda kv: series.index(kv[0])):
            xs = sorted(pts)
            good = [sum(g for g, _ in pts[x]) / len(pts[x]) for x in xs]
            lost = [100 * sum(l for _, l in pts[x]) / len(pts[x]) for x in xs]
            label = policy + (", checkpoint every %s" % (ckpt or "-")
                              if several else "")
            style = dict(look[(policy, ckpt)], label=label)
            top.plot(xs, good, **style)
            bottom.plot(xs, lost, **style)
            labels.append("%s, %s: %s" % (scenario, net, label))
        top.set_title("%s, %s network" % (scenario, net))
        top.set_ylabel("goodput (samples / s of run)")
        bottom.set_ylabel("time lost (% of the run)")
        hi = max(x for p in pol.values() for x in p)
        for ax in (top, bottom):
            # symlog: 0 (no faults) beside rates over decades; 0, 1, 2, 5,
            # 10, ... written as numbers, not as powers of ten
            ax.set_xscale("symlog", linthresh=1.0, linscale=0.5)
            ax.set_xlim(-0.1, hi * 1.3 if hi > 0 else 1)
            ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(
                nice_ticks(hi)))
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
                lambda v, _: "%g" % v))
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            ax.set_xlabel("device outages started per hour of run")
            ax.set_ylim(bottom=0)  # goodput and loss from none
            ax.grid(alpha=0.3)
    figure_legend(fig, [a for row in axes for a in row], title="recovery")
    save(fig, out, "policies.png", "Which recovery policy wins, and when",
         description="\n".join(labels))


# What the engine's timeline categories mean (sim/timeline.c).
CATEGORY_LABELS = {
    "fwd": "forward", "bwd": "backward", "optimizer": "optimizer step",
    "act": "activation transfer", "grad": "activation-gradient transfer",
    "dp": "gradient synchronisation", "sync": "waiting for sync",
    "barrier": "barrier", "matchmaking": "matchmaking (hivemind)",
    "host": "averaging on the host (hivemind)",
}


def timeline(path, out, scenario=None):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("plot.py: %s: %s" % (path, e))
    events = data["traceEvents"] if isinstance(data, dict) else data

    def category(ev):  # "cat", else the first word of the name ("fwd 3")
        return ev.get("cat") or (ev.get("name") or "?").split(" ")[0]

    names, bars, open_ = {}, defaultdict(list), {}
    for ev in events:
        key = (ev.get("pid", 0), ev.get("tid", 0))
        ph = ev.get("ph")
        if ph == "M" and ev.get("name") in ("thread_name", "process_name"):
            label = ev.get("args", {}).get("name")
            if ev["name"] == "thread_name" or key not in names:
                names[key if ev["name"] == "thread_name" else
                      (key[0], None)] = label
        elif ph == "X":
            bars[key].append((ev["ts"], ev.get("dur", 0), category(ev)))
        elif ph == "B":
            open_[key] = (ev["ts"], category(ev))
        elif ph == "E" and key in open_:
            ts, cat = open_.pop(key)
            bars[key].append((ts, ev["ts"] - ts, cat))
    if not bars:
        note("%s: no duration events: skipping timeline.png" % path)
        return
    # One band per device: its compute stream as a tall bar, its send and
    # receive streams as thin bars beneath, so 64+ devices stay readable.
    pids = sorted({k[0] for k in bars})
    # Extra tracks of a stream ("send 2", when slices overlap) share its
    # band: a Gantt row per stream kind, not per track.
    bands = {"compute": (0.0, 0.5), "send": (0.52, 0.18),
             "receive": (0.74, 0.18)}
    lanes = {}
    for pid in pids:
        tids = sorted(t for p, t in bars if p == pid)
        for tid in tids:
            kind = str(names.get((pid, tid), "")).split(" ")[0]
            lanes[(pid, tid)] = bands.get(kind, bands["compute"]
                                          if len(tids) == 1 else bands["send"])
    cats = sorted({c for k in bars for _, _, c in bars[k]})
    colours = {c: plt.cm.tab10(i % 10) for i, c in enumerate(cats)}
    fig, ax = plt.subplots(figsize=(12, min(40, max(3, 0.28 * len(pids) + 1.8))))
    for row, pid in enumerate(pids):
        for key in (k for k in bars if k[0] == pid):
            top, height = lanes[key]
            by_cat = defaultdict(list)
            for ts, dur, cat in bars[key]:
                by_cat[cat].append((ts / 1e6, dur / 1e6))
            for cat, spans in by_cat.items():
                ax.broken_barh(spans, (row - 0.45 + top, height),
                               color=colours[cat])
    ax.set_yticks(range(len(pids)))
    ax.set_yticklabels([names.get((pid, None), "device %s" % pid)
                        for pid in pids],
                       fontsize=8 if len(pids) <= 40 else 6)
    ax.set_ylim(len(pids) - 0.4, -0.6)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("device (tall: compute stream; thin: send, receive)")
    ax.grid(alpha=0.3, axis="x")
    ax.legend(handles=[matplotlib.patches.Patch(color=colours[c],
                                                label=CATEGORY_LABELS.get(c, c))
                       for c in cats], fontsize=8, loc="upper left",
              bbox_to_anchor=(1.0, 1.0))
    save(fig, out, "timeline.png", "Per-device timeline: " +
         (scenario or os.path.basename(path)))


def links(path, out, scenario=None, top=8):
    """links.png from the CSV of `geodes explain --link-stats` (columns
    t_s, kind, resource, src, dst, bytes, rate_gbps, utilisation, flows;
    one row per resource and step with traffic, idle steps left out).
    Steps are numbered (t_s / step, rounded): a time written as 0.3 is not
    the float 3 * 0.1, so times are never keys."""
    import csv
    rows = []  # (kind, resource), t_s, utilisation, bytes
    try:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                rows.append(((row["kind"], row["resource"]),
                             float(row["t_s"]), float(row["utilisation"]),
                             float(row["bytes"])))
    except (OSError, KeyError, ValueError) as e:
        sys.exit("plot.py: %s: %s" % (path, e))
    if not rows:
        note("%s: no rows: skipping links.png" % path)
        return
    ts = sorted({t for _, t, _, _ in rows})
    step = min((b - a for a, b in zip(ts, ts[1:])), default=1.0)
    series = defaultdict(dict)  # (kind, resource) -> {step: utilisation}
    total = defaultdict(float)
    for key, t, u, b in rows:
        series[key][int(round(t / step))] = u
        total[key] += b
    last = int(round(ts[-1] / step))
    grid_t = [i * step for i in range(last + 1)]
    # Between sites first (inside a site every site looks alike), by the
    # time-integrated utilisation.
    def load(k):
        return sum(series[k].values())

    wan = [k for k in series if k[0] == "link" and
           k[1].split(">")[0] != k[1].split(">")[-1]]
    busiest = sorted(wan or [k for k in series if k[0] == "link"],
                     key=lambda k: (-load(k), k))[:top]
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(12, 8),
                                 gridspec_kw={"height_ratios": [3, 2]})
    for i, key in enumerate(busiest):
        ys = [100 * series[key].get(k, 0.0) for k in range(last + 1)]
        # the last step drawn to its end, as every other
        ax.step(grid_t + [(last + 1) * step], ys + ys[-1:], where="post",
                lw=1.2, color=plt.cm.tab10(i % 10),
                label="%s (%.2f GB)" % (key[1], total[key] / 1e9))
    ax.set_xlabel("simulated time (s), steps of %g s" % step)
    ax.set_ylabel("utilisation (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    # the busiest resources of every kind, by mean utilisation
    ax.set_title("the %d busiest pairs of sites (100 %%: the link's "
                 "bandwidth times its senders)" % len(busiest), fontsize=10)
    keys = sorted(series, key=lambda k: (-load(k), k))[:16]
    span = ts[-1] + step
    mean = [100 * sum(series[k].values()) * step / span for k in keys]
    peak = [100 * max(series[k].values()) for k in keys]
    xs = range(len(keys))
    bx.bar([x - 0.2 for x in xs], mean, 0.4, label="mean over the run")
    bx.bar([x + 0.2 for x in xs], peak, 0.4, label="peak step")
    bx.set_xticks(list(xs))
    bx.set_xticklabels(["%s\n%s" % (k[1], k[0]) for k in keys], fontsize=7,
                       rotation=30, ha="right")
    bx.set_ylabel("utilisation (%)")
    bx.grid(alpha=0.3, axis="y")
    bx.legend(fontsize=8)
    save(fig, out, "links.png", "Link utilisation: " +
         (scenario or os.path.basename(path)))


def shape_of(alloc_text):
    """(stages, replicas, devices) of a stored allocation's pipelines."""
    rows = json.loads(alloc_text)["pipelines"]
    return len(rows[0]), len(rows), sum(len(r) for r in rows)


# shapes.png's x labels: a shape a label, upright, at this font size and
# this far apart (in inches, 90-degree text of 8 pt is 0.13 in wide) on a
# panel up to SHAPES_MAX_WIDTH_IN wide; past it, every k-th shape is
# labelled. The margin holds the y axis's labels.
SHAPES_LABEL_PT = 8
SHAPES_PITCH_IN = 0.17
SHAPES_MAX_WIDTH_IN = 24.0
SHAPES_MARGIN_IN = 1.5


def shapes(db, out):
    """samples/s against the shape, one panel per `schedule --shape auto`
    run: every configuration's prediction (grey), the simulated ones (red),
    the best simulated ringed; shapes in order of devices, then stages."""
    runs = db.execute("SELECT DISTINCT r.run_id, r.scenario FROM results r "
                      "WHERE r.method = 'shape' ORDER BY r.run_id").fetchall()
    if not runs:
        note("shapes.png skipped: no rows of `geodes schedule --shape auto "
             "--db`")
        return
    per_run = [db.execute("SELECT alloc, batch, predicted_iteration_s, "
                          "iteration_s, dp_algo FROM results WHERE method = "
                          "'shape' AND run_id = ?", (run,)).fetchall()
               for run, _ in runs]
    # A panel a row, as wide as its labels need (up to a limit).
    most = max(len({shape_of(a) for a, *_ in rows}) for rows in per_run)
    width = min(max(7.0, SHAPES_MARGIN_IN + most * SHAPES_PITCH_IN),
                SHAPES_MARGIN_IN + SHAPES_MAX_WIDTH_IN)
    fig, axes = plt.subplots(len(runs), 1, squeeze=False,
                             figsize=(width, 4.6 * len(runs)))
    for ax, (run, scen), rows in zip(axes[:, 0], runs, per_run):
        keys = sorted({shape_of(a) for a, *_ in rows},
                      key=lambda k: (k[2], k[0]))
        x_of = {k: i for i, k in enumerate(keys)}
        pred, sim, best = ([], []), ([], []), None
        for a, batch, p, s, algo in rows:
            x = x_of[shape_of(a)]
            if p:
                pred[0].append(x)
                pred[1].append(batch / p)
            if s:
                sim[0].append(x)
                sim[1].append(batch / s)
                if best is None or batch / s > best[1]:
                    best = (x, batch / s)
        ax.scatter(*pred, s=8, color="0.6", alpha=0.5,
                   label="predicted (every configuration)")
        ax.scatter(*sim, s=22, color="tab:red", marker="^",
                   label="simulated (the predictor's best)")
        if best:
            ax.scatter([best[0]], [best[1]], s=160, facecolors="none",
                       edgecolors="black", lw=1.4,
                       label="best: %.2f samples/s" % best[1])
        # every shape a tick; every every-th labelled, so none overlap
        every = max(1, math.ceil(len(keys) * SHAPES_PITCH_IN /
                                 (width - SHAPES_MARGIN_IN)))
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels(["%dx%d" % (k[0], k[1]) if i % every == 0 else ""
                            for i, k in enumerate(keys)], rotation=90,
                           fontsize=SHAPES_LABEL_PT)
        ax.set_xlim(-1, len(keys))
        ax.set_xlabel("shape: stages x replicas (fewer devices on the left)")
        ax.set_ylabel("samples/s")
        ax.set_yscale("log")
        ax.set_title("%s (run %d)" % (named(scen), run), fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    save(fig, out, "shapes.png", "Throughput against the parallel shape "
         "(geodes schedule --shape auto)")


def method_label(dp_algo, grad_bits, act_bits, inner_steps):
    """A training method as costs.png names it: the pipeline's algorithm or
    DiLoCo with its H, then the widths that are not fp16."""
    outer = dp_algo in ("diloco", "streaming-diloco")
    out = ("%s H=%s" % (dp_algo, inner_steps) if outer
           else "pipeline, %s" % dp_algo)
    if act_bits and act_bits != 16:
        out += ", %d-bit activations" % act_bits
    if grad_bits and grad_bits != 16:
        out += ", %d-bit gradients" % grad_bits
    return out


def costs(db, out):
    """What a sample costs against how fast it comes: every priced row of
    one iteration, a panel per scenario, a marker per method (the mean over
    the rows of one method, placement and network), each point annotated
    with its egress share. Both axes start from 0."""
    rows = db.execute(
        "SELECT scenario, method, network_model, dp_algo, grad_bits, "
        "activation_bits, inner_steps, samples_per_s, usd_per_1k_samples, "
        "egress_usd, usd FROM results WHERE usd_per_1k_samples IS NOT NULL "
        "AND samples_per_s > 0 AND iterations IS NULL").fetchall()
    if not rows:
        note("no priced rows (usd_per_1k_samples): skipping costs.png")
        return
    panels = defaultdict(lambda: defaultdict(list))
    for (scenario, method, net, algo, gb, ab, h, sps, usd1k, egress,
         usd) in rows:
        label = "%s (%s, %s)" % (method_label(algo, gb, ab, h), method, net)
        share = egress / usd if usd else 0.0
        panels[named(scenario)][label].append((sps, usd1k, share))
    names = sorted(panels)
    fig, axes = plt.subplots(1, len(names), squeeze=False,
                             figsize=(6.5 * len(names), 4.8))
    order = sorted({lab for p in panels.values() for lab in p})
    look = {lab: dict(marker=MARKERS[i % len(MARKERS)],
                      color=plt.cm.tab10(i % 10)) for i, lab in enumerate(order)}
    for ax, name in zip(axes[0], names):
        pts = {}
        for lab in order:
            mine = panels[name].get(lab)
            if mine:  # the mean of the method's rows
                pts[lab] = tuple(sum(p[k] for p in mine) / len(mine)
                                 for k in range(3))
        hi_x = max(p[0] for p in pts.values())
        hi_y = max(p[1] for p in pts.values())
        said = []  # annotated points: a neighbour within 4 % keeps quiet
        for lab, (x, y, share) in pts.items():
            ax.scatter([x], [y], s=40, label=lab, **look[lab])
            if all(abs(x - u) > 0.04 * hi_x or abs(y - v) > 0.04 * hi_y
                   for u, v in said):
                ax.annotate(" egress %.0f %%" % (100 * share), (x, y),
                            fontsize=7)
                said.append((x, y))
        ax.set_xlim(0, 1.25 * hi_x)
        ax.set_ylim(0, 1.2 * hi_y)
        ax.set_xlabel("samples / s (simulated)")
        ax.set_ylabel("USD per 1,000 samples (GPU-hours + egress)")
        ax.set_title(name)
        ax.grid(alpha=0.3)
    figure_legend(fig, axes[0], title="method (placement, network)")
    save(fig, out, "costs.png", "What a sample costs, and how fast it comes",
         description="one point per method: the mean of its priced rows")


def main():
    global SERIES
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db", nargs="?",
                    help="a geodes results database (geodes.db)")
    ap.add_argument("--out", required=True, help="folder for the PNG files")
    ap.add_argument("--timeline", help="a Chrome trace from geodes simulate")
    ap.add_argument("--links", metavar="CSV",
                    help="link statistics from geodes explain --link-stats")
    ap.add_argument("--scenario", metavar="NAME",
                    help="the scenario's name, for the titles of --timeline "
                    "and --links (their files do not hold it; default: the "
                    "file's name)")
    ap.add_argument("--shapes", action="store_true",
                    help="also draw shapes.png (schedule --shape auto --db)")
    ap.add_argument("--series", action="store_true",
                    help="beside each NAME.png, NAME.json: the series drawn "
                    "(plot_series.py)")
    args = ap.parse_args()
    SERIES = args.series
    if args.db is None and not (args.links or args.timeline):
        ap.error("give a database DB (or --links CSV, or --timeline FILE)")
    os.makedirs(args.out, exist_ok=True)
    if args.links:
        links(args.links, args.out, args.scenario)
    if args.timeline:
        timeline(args.timeline, args.out, args.scenario)
    if args.db is None:
        return 0
    db = connect(args.db)
    NAMES.update(scenario_names(db, args.db))
    model_vs_simulated(db, args.out, "score_s", "score_vs_simulated.png",
                       "DT-FM cost model score (s)",
                       "Does the DT-FM score rank placements as simulation "
                       "does?", diagonal=False)
    model_vs_simulated(db, args.out, "predicted_iteration_s",
                       "predicted_vs_simulated.png",
                       "predicted iteration time (s)",
                       "End-to-end predictor vs simulation", diagonal=True)
    bandwidth_scale(db, args.out)
    convergence(db, args.out)
    iterations(db, args.out)
    policies(db, args.out)
    costs(db, args.out)
    if args.shapes:
        shapes(db, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
