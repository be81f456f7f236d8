"""plot_series: what a drawn matplotlib figure shows, as data (plot.py
--series writes it beside each PNG as NAME.json), so that a test can check
the series drawn against the database or the file they came from.

It reads the figure's artists after it was drawn, not a second copy of the
plotting code: what is in the JSON is what is in the picture. Per panel
(a visible axes): its title, axis labels, scales and limits, the x tick
labels shown (their text, font size and how many neighbours overlap),
its texts, and every line (x, y; NaN, a break in the line, as null),
scatter (points), bar (centre, height) and rectangle collection (the
timeline's bars: x0, x1, y0, y1).
"""
import json
import math

import matplotlib.collections
import matplotlib.patches


def _num(v):
    v = float(v)
    return None if math.isnan(v) else v


def _nums(vs):
    return [_num(v) for v in vs]


def _ticks(ax, renderer):
    """The x tick labels drawn (inside the view), left to right, and how
    many neighbouring pairs of them overlap on the canvas."""
    lo, hi = sorted(ax.get_xlim())
    shown = [t for t, x in zip(ax.get_xticklabels(), ax.get_xticks())
             if t.get_visible() and t.get_text() and lo <= x <= hi]
    boxes = sorted(((t.get_window_extent(renderer), t) for t in shown),
                   key=lambda bt: bt[0].x0)
    overlaps = sum(1 for (a, _), (b, _) in zip(boxes, boxes[1:])
                   if b.x0 < a.x1 - 0.5)
    return {"xticklabels": [t.get_text() for _, t in boxes],
            "xticklabel_fontsize": min((t.get_fontsize() for t in shown),
                                       default=None),
            "xticklabels_overlapping": overlaps}


def _rectangles(coll):
    out = []
    for path in coll.get_paths():
        v = path.vertices
        out.append([_num(v[:, 0].min()), _num(v[:, 0].max()),
                    _num(v[:, 1].min()), _num(v[:, 1].max())])
    return out


def _panel(ax, renderer):
    p = {"title": ax.get_title(), "xlabel": ax.get_xlabel(),
         "ylabel": ax.get_ylabel(), "xscale": ax.get_xscale(),
         "yscale": ax.get_yscale(), "xlim": _nums(ax.get_xlim()),
         "ylim": _nums(ax.get_ylim()),
         "texts": [t.get_text() for t in ax.texts],
         "lines": [{"label": ln.get_label(),
                    "x": _nums(ln.get_xdata(orig=False)),
                    "y": _nums(ln.get_ydata(orig=False))}
                   for ln in ax.get_lines()],
         "scatters": [], "bars": [], "rectangles": []}
    p.update(_ticks(ax, renderer))
    for c in ax.collections:
        if isinstance(c, matplotlib.collections.PathCollection):
            p["scatters"].append({"label": c.get_label(),
                                  "xy": [_nums(xy) for xy in c.get_offsets()]})
        elif isinstance(c, matplotlib.collections.PolyCollection):
            p["rectangles"].append({"label": c.get_label(),
                                    "xy": _rectangles(c)})
    for b in ax.containers:
        rects = [r for r in b if isinstance(r, matplotlib.patches.Rectangle)]
        p["bars"].append({"label": b.get_label(),
                          "x": [_num(r.get_x() + r.get_width() / 2)
                                for r in rects],
                          "height": [_num(r.get_height()) for r in rects]})
    return p


def drawn(fig):
    """The figure (already drawn, e.g. saved) as a dict of plain data."""
    renderer = fig.canvas.get_renderer()
    title = fig._suptitle.get_text() if fig._suptitle else ""
    return {"title": title,
            "panels": [_panel(ax, renderer) for ax in fig.axes
                       if ax.get_visible() and ax.axison]}


def write(fig, path):
    """Writes drawn(fig) to path as JSON (NaN as null)."""
    with open(path, "w") as f:
        json.dump(drawn(fig), f, indent=1, allow_nan=False)
        f.write("\n")
