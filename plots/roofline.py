#!/usr/bin/env python3
"""The front page's roofline figure: each chapter's fastest version at its
headline shape (the rows of the README's headline table, from the front
page's run, plots/data/front.csv) under the roofs of its device, probed by
`make probe` (the latest row of plots/data/probe_<gpu>.csv):

  plots/roofline.png  left: the chapters with matrix products (05, 06):
                      arithmetic intensity (FLOPs per byte moved) against
                      attained FLOP/s, both log; the roofs are the probed
                      copy rate times the intensity and the probed dense fp16
                      wgmma rate, with mma.sync's rate a dashed lower roof.
                      right: the chapters without (FLOPs 0: the scans 01-04,
                      whose work is exponentials, and the decode step 07),
                      the same roofline in exponentials: exps per byte
                      against exps/s, under the copy rate and the exp2 rate.

A point's share of the roof above it is floor / time, the floor those roofs
give: max(bytes / copy rate, work / compute rate), a bf16 row's FLOPs over
the probed bf16 wgmma rate. Without front.csv, or without a probe file for
its device, nothing is drawn and a line says why (exit 0).
Needs matplotlib: python3 -m pip install matplotlib (or Debian's
python3-matplotlib). Usage: python3 plots/roofline.py
"""
import math
import sys

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from tablelib.data import DATA, FRONT, PROBE, ROOT, load_front, load_probes, short_device  # noqa: E402
from tablelib.markdown import label, sig  # noqa: E402
from tablelib.sets import headline_rows  # noqa: E402

NAME = "roofline.png"
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def roof(ax, copy_rate, peak, span, style, text):
    """Draws min(copy_rate · x, peak) over span (two x values, log), in units
    of y; marks the ridge, where the bandwidth slope meets the flat line."""
    ridge = peak / copy_rate
    xs = [span[0], ridge, span[1]] if span[0] < ridge < span[1] else list(span)
    ax.plot(xs, [min(copy_rate * x, peak) for x in xs], style, color="black", lw=1.5, label=text)
    if span[0] < ridge < span[1]:
        ax.annotate(f"ridge {sig(ridge)}", (ridge, peak), xytext=(0, 6), textcoords="offset points",
                    ha="center", fontsize=7)


def fraction(value, low, high):
    """Where value sits between low and high on a log axis, 0 to 1."""
    return (math.log(value) - math.log(low)) / (math.log(high) - math.log(low))


def place_labels(ax, spots):
    """Annotates spots [(x, y, text, color)] (data units) with labels in a
    column beside them: right of the points in the left 60% of the axes, left
    of the others, each moved down past the labels already placed on its side."""
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    side_of = {x: 1 if fraction(x, x0, x1) < 0.6 else -1 for x, _, _, _ in spots}
    edge = {1: max([fraction(x, x0, x1) for x in side_of if side_of[x] > 0], default=0.0) + 0.04,
            -1: min([fraction(x, x0, x1) for x in side_of if side_of[x] < 0], default=1.0) - 0.04}
    placed = []  # (side, top, bottom) in axes fractions
    for x, y, text, color in sorted(spots, key=lambda s: -s[1]):
        side, fy = side_of[x], fraction(y, y0, y1)
        top = fy + 0.02
        for other_side, other_top, other_bottom in sorted(placed, key=lambda p: -p[1]):
            if other_side == side and top > other_bottom and top - 0.09 < other_top:
                top = other_bottom - 0.01
        placed.append((side, top, top - 0.09))
        ax.annotate(text, (x, y), xytext=(edge[side], top), textcoords="axes fraction",
                    ha="left" if side > 0 else "right", va="top", fontsize=7, color=color,
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
                    arrowprops={"arrowstyle": "-", "color": color, "lw": 0.6})


def panel(ax, points, copy_rate, roofs, unit, scale, xlabel, ylabel):
    """One roofline: points [(text, intensity, attained, color, peak)], each
    point's share taken of min(copy_rate · intensity, its peak); roofs
    [(peak, style, text)]; rates in work/s, y drawn in work/s / scale."""
    xs = [p[1] for p in points] + [peak / copy_rate for peak, _, _ in roofs]
    span = (min(xs) / 8, max(xs) * 8)
    for peak, style, text in roofs:
        roof(ax, copy_rate / scale, peak / scale, span, style, text)
    top = max(peak for peak, _, _ in roofs)
    spots = []
    for text, x, y, color, peak in points:
        under = y / min(copy_rate * x, peak)  # floor / time: the share of its roof at x
        ax.scatter(x, y / scale, s=60, color=color, edgecolors="black", zorder=3)
        spots.append((x, y / scale, f"{text}\n{under:.0%} of the roof", color))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*span)
    low = min([p[2] for p in points] + [copy_rate * span[0]]) / scale
    ax.set_ylim(low / 3, top / scale * 3)
    place_labels(ax, spots)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(f"{ylabel} ({unit}, log)", fontsize=9)
    ax.grid(True, which="major", color="#dddddd")
    ax.legend(loc="lower right", fontsize=7)


def draw(found, front, probe, probe_file):
    copy_rate = probe["copy_gbps"] * 1e9  # bytes/s
    mma_sync = probe["mma_sync_tflops"] * 1e12
    wgmma = (probe["wgmma_fp16_tflops"] or 0.0) * 1e12
    wgmma_bf16 = (probe["wgmma_bf16_tflops"] or 0.0) * 1e12
    matrix, other, right = [], [], []
    for i, (chapter, _, r, _, _) in enumerate(found):
        color = COLORS[i % len(COLORS)]
        seconds = r["ms_median"] * 1e-3
        text = f"{chapter[:2]} {label(r)} {r['dtype']}, {sig(r['ms_median'])} ms"
        if r["flops"]:  # a bf16 row against the bf16 rate, as the tables' floors take it
            peak = (wgmma_bf16 if r["dtype"] == "bf16" else wgmma) or mma_sync
            matrix.append((text, r["flops"] / r["bytes"], r["flops"] / seconds, color, peak))
        elif r["exps"]:
            other.append((text, r["exps"] / r["bytes"], r["exps"] / seconds, color, probe["exp_rate"]))
            right.append(chapter[:2])

    fig, axes = plt.subplots(1, 2, figsize=(15, 6.5), gridspec_kw={"width_ratios": [1.25, 1]}, layout="constrained")
    if matrix:
        roofs = [(mma_sync, "--", f"fp16 mma.sync, {sig(mma_sync / 1e12)} TFLOP/s")]
        if wgmma:
            roofs.insert(0, (wgmma, "-", f"dense fp16 wgmma, {sig(wgmma / 1e12)} TFLOP/s"))
        else:
            roofs[0] = (mma_sync, "-", roofs[0][2] + " (no wgmma on this device)")
        panel(axes[0], matrix, copy_rate, roofs, "TFLOP/s", 1e12,
              f"arithmetic intensity: FLOPs per byte moved (log); copy roof {sig(copy_rate / 1e9)} GB/s",
              "attained FLOP/s")
        axes[0].set_title("chapters with matrix products: FLOPs", fontsize=10)
    else:
        axes[0].set_axis_off()
    if other:
        exp_rate = probe["exp_rate"]
        panel(axes[1], other, copy_rate, [(exp_rate, "-", f"exp2 (MUFU), {sig(exp_rate / 1e12)}·10^12/s")],
              "10^12 exps/s", 1e12,
              f"exps per byte moved (log); copy roof {sig(copy_rate / 1e9)} GB/s", "attained exps/s")
        axes[1].set_title("chapters without (FLOPs 0): the same roofline in exponentials", fontsize=10)
    else:
        axes[1].set_axis_off()
    fig.suptitle("Each chapter's fastest version at its headline shape under its device's roofs\n"
                 f"points: {front.device}, commit {front.commit} (plots/data/{FRONT}.csv); roofs: probed by "
                 f"make probe, commit {probe['commit']} (plots/data/{probe_file}).\n"
                 + (f"Chapters {', '.join(right)} do no matrix products (FLOPs 0): they sit on the right, "
                    "their work counted in exponentials. " if right else "")
                 + "A point's share of its roof is floor / time (bf16 points: of the probed bf16 wgmma rate).",
                 fontsize=9)
    fig.savefig(ROOT / "plots" / NAME, dpi=130)
    plt.close(fig)
    print(f"roofline: plots/{NAME}")


def main():
    front = load_front()
    if front is None:
        print(f"roofline: no plots/data/{FRONT}.csv (make front on a GPU); {NAME} not drawn")
        return 0
    gpu = short_device(front.device)
    probe_file = f"{PROBE}{(gpu or 'gpu').lower()}.csv"
    if not (DATA / probe_file).is_file():
        print(f"roofline: no plots/data/{probe_file}, the probed rates of {front.device} "
              f"(make probe on that GPU); {NAME} not drawn")
        return 0
    probe = load_probes().get(gpu)
    if not probe or not probe["copy_gbps"] or not probe["mma_sync_tflops"] or not probe["exp_rate"]:
        print(f"roofline: no row of {front.device} with its rates in plots/data/{probe_file}; {NAME} not drawn")
        return 0
    found = [f for f in headline_rows(front.chapters, front.official)
             if f[2]["ms_median"] and f[2]["bytes"] and (f[2]["flops"] or f[2]["exps"])]
    if not found:
        print(f"roofline: no timed rows at the chapters' headline shapes in plots/data/{FRONT}.csv; "
              f"{NAME} not drawn")
        return 0
    draw(found, front, probe, probe_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
