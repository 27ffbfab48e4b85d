#!/usr/bin/env python3
"""The front page's speed-up and memory figures, drawn from the front
page's run alone (plots/data/front.csv and the official file of the same
device call, see tablelib.data.load_front: one device, one commit):

  plots/summary_speedup.png  left: each chapter's fastest version at S1 (d 2048,
                             N 32, L 512) over 01's GPU eager baseline vs batch;
                             right: each chapter's fastest version at its
                             headline shape over the official kernel (the
                             headline table's × official)
  plots/summary_memory.png   peak MiB of each chapter's fastest version: at S1
                             vs batch (01-04), at S3 batch 8 vs L (05, 06's
                             default form), at S4 Mamba-2 vs batch (07), with
                             the official kernels' peaks at the same shapes

Without plots/data/front.csv nothing is drawn (`make front` on a GPU writes it).
Needs matplotlib: python3 -m pip install matplotlib (or Debian's
python3-matplotlib). Usage: python3 plots/summary.py
"""
import sys
import textwrap

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ssd import MARKERS, log_axes  # noqa: E402
from tablelib.data import FRONT, ROOT, load_front  # noqa: E402
from tablelib.markdown import sig  # noqa: E402
from tablelib.ops import chapter_of  # noqa: E402
from tablelib.sets import (DTYPE_ORDER, OFFICIAL_NAMES,  # noqa: E402
                           decode_form, eager_baseline, fastest, headline_rows, is_s1, is_s3, is_s4,
                           official_kernel_rows, timed)

BIDIR, DECODE, SSD = chapter_of("bidir"), chapter_of("decode"), chapter_of("ssd")  # the memory panels' chapters

OFFICIAL_COLORS = ("#333333", "#999999")


def chapter_colors(chapters):
    """{chapter: color}, one color a chapter in chapter order, the same in every panel."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {c: cycle[i % len(cycle)] for i, c in enumerate(sorted(chapters))}


def fastest_lines(rows, x):
    """[(dtype, [(x, row)])]: the fastest row of each dtype at each value of
    the column x, fp32 first."""
    lines = []
    for dtype in sorted({r["dtype"] for r in rows}, key=DTYPE_ORDER.index):
        here = [r for r in rows if r["dtype"] == dtype]
        points = [(v, fastest([r for r in here if r[x] == v])) for v in sorted({r[x] for r in here})]
        lines.append((dtype, points))
    return lines


def line_label(chapter, dtype, points):
    """'03_fused_cuda fp32 (v7)': the versions a line follows."""
    versions = dict.fromkeys(f"v{r['version']:g}" for _, r in points)
    return f"{chapter} {dtype} ({', '.join(versions)})"


def save(fig, title, front, name):
    official = (f"; official: the best of every run on this GPU, timed in this call too ({front.official_file})"
                if front.official_file else "")
    fig.suptitle(f"{title}\nmeasured on {front.device}, commit {front.commit} "
                 f"(plots/data/{FRONT}.csv{official})", fontsize=11)
    fig.savefig(ROOT / "plots" / name, dpi=130, bbox_inches="tight")
    plt.close(fig)
    print(f"summary: plots/{name}")


def draw_over_eager(ax, chapters, eager, colors):
    """Left panel of the speed-up figure."""
    batches = set()
    for chapter in sorted(chapters):
        s1 = [r for r in timed(chapters[chapter]) if is_s1(r) and r["batch"] in eager]
        for dtype, points in fastest_lines(s1, "batch"):
            xs = [b for b, _ in points]
            ys = [eager[b]["ms_median"] / r["ms_median"] for b, r in points]
            ax.plot(xs, ys, color=colors[chapter], marker=MARKERS.get(dtype, "^"), lw=2,
                    label=f"{line_label(chapter, dtype, points)}: ×{sig(ys[-1])} at batch {xs[-1]:g}")
            batches.update(xs)
    log_axes(ax, sorted(batches), "batch")
    e = next(iter(eager.values()))
    ax.set_title(f"over 01's GPU eager baseline (v{e['version']:g} {e['name']}, {e['dtype']})\n"
                 "S1: d 2048, N 32, L 512", fontsize=10)
    ax.set_ylabel("speed-up (×, log scale)")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.12), fontsize=8, frameon=False)


def tick_shape(shape, width=11):
    """'S3 default form, b 8, L 8192' as lines of at most about width
    characters, broken at its commas first, so that the bars' labels do not
    run into each other."""
    lines = []
    for part in shape.split(", "):
        if lines and len(lines[-1]) + 2 + len(part) <= width:
            lines[-1] += ", " + part
        else:
            lines += textwrap.wrap(part, width)
    return "\n".join(lines)


def draw_over_official(ax, front, colors):
    """Right panel of the speed-up figure: the official kernel's best time of
    every run on the device over ours at each chapter's headline shape, where
    it was also timed in the same device call (the headline table's ×
    official), a bar a chapter."""
    bars = [(chapter, shape, o, r) for chapter, shape, r, o, same
            in headline_rows(front.chapters, front.official) if same]
    for i, (chapter, _, o, r) in enumerate(bars):
        ratio = o["ms_median"] / r["ms_median"]
        ax.bar(i, ratio, color=colors[chapter], width=0.7)
        ax.annotate(f"×{sig(ratio)}", (i, ratio), xytext=(0, 3), textcoords="offset points",
                    ha="center", fontsize=8)
    ax.set_xticks(range(len(bars)), [f"{c[:2]} v{r['version']:g} {r['dtype']}\n{tick_shape(shape)}"
                                     for c, shape, _, r in bars], fontsize=7)
    ax.set_yscale("log")
    ax.axhline(1, color="#333333", lw=1)
    ax.grid(True, axis="y", which="major", color="#dddddd")
    kernels = "; ".join(dict.fromkeys(OFFICIAL_NAMES[o["impl"]].replace("`", "") for _, _, o, _ in bars))
    ax.set_title("over the official kernel's best on this GPU (also timed in the same call),\n"
                 "at each headline shape", fontsize=10)
    without = [c[:2] for c in sorted(front.chapters) if c not in {b[0] for b in bars}]
    note = (f"\nno official time from the same call: chapter{'s' if len(without) > 1 else ''} {', '.join(without)}"
            if without else "")
    ax.set_xlabel(textwrap.fill("official: " + (kernels or "none timed in this run"), 90) + note, fontsize=8)


def draw_speedup(front, eager):
    fig, axes = plt.subplots(1, 2, figsize=(15, 6), gridspec_kw={"width_ratios": [1.1, 1]})
    colors = chapter_colors(front.chapters)
    draw_over_eager(axes[0], front.chapters, eager, colors)
    draw_over_official(axes[1], front, colors)
    fig.subplots_adjust(top=0.82, wspace=0.2)
    save(fig, "Speed-up of each chapter's fastest version", front, "summary_speedup.png")


# Panels of the memory figure: (title, chapters, which rows, x column, x label).
MEMORY_PANELS = (
    ("S1: d 2048, N 32, L 512", None, is_s1, "batch", "batch"),
    ("S3 batch 8: h 32, p 64, N 128, chunk 256, no z", (SSD, BIDIR),
     lambda r: is_s3(r) and r["batch"] == 8, "seqlen", "L (sequence length)"),
    ("S4 Mamba-2, one token: h 32, p 64, N 128", (DECODE,),
     lambda r: is_s4(r) and decode_form(r) == "m2", "batch", "batch"),
)


def official_peaks(official, rows, x):
    """[(label, [(x, peak MiB)])]: the official kernel's peak at the shapes of
    rows, one line per kernel and dtype."""
    lines = {}
    for r in rows:
        for o in official_kernel_rows(official, r):
            if o["peak_MiB"]:
                lines.setdefault((o["impl"], o["dtype"]), {})[r[x]] = o["peak_MiB"]
    return [(f"official {OFFICIAL_NAMES[impl].replace('`', '')} {dtype} peak", sorted(points.items()))
            for (impl, dtype), points in lines.items()]


def draw_memory(front):
    fig, axes = plt.subplots(1, len(MEMORY_PANELS), figsize=(18, 6))
    colors = chapter_colors(front.chapters)
    for ax, (title, only, pick, x, xlabel) in zip(axes, MEMORY_PANELS):
        drawn, xs = [], set()
        for chapter in sorted(front.chapters):
            if only and chapter not in only:
                continue
            rows = [r for r in timed(front.chapters[chapter]) if pick(r) and r["peak_mib"]]
            for dtype, points in fastest_lines(rows, x):
                ax.plot([v for v, _ in points], [r["peak_mib"] for _, r in points],
                        color=colors[chapter], marker=MARKERS.get(dtype, "^"), lw=2,
                        label=line_label(chapter, dtype, points))
                drawn += [r for _, r in points]
                xs.update(v for v, _ in points)
        for i, (name, points) in enumerate(official_peaks(front.official, drawn, x)):
            ax.plot(*zip(*points), color=OFFICIAL_COLORS[i % 2], linestyle="--", marker="o", mfc="none",
                    lw=1.2, label=name)
        if xs:
            log_axes(ax, sorted(xs), xlabel)
        ax.set_title(title, fontsize=10)
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.14), fontsize=7, frameon=False)
    axes[0].set_ylabel("peak MiB (inputs and outputs included, log scale)")
    fig.subplots_adjust(top=0.84, wspace=0.22)
    save(fig, "Peak device memory of each chapter's fastest version", front, "summary_memory.png")


def main():
    front = load_front()
    if front is None:
        print(f"summary: no plots/data/{FRONT}.csv (make front on a GPU); figures not drawn")
        return 0
    eager = eager_baseline(front.chapters)
    if eager:
        draw_speedup(front, eager)
    else:
        print(f"summary: no S1 rows of 01's GPU eager baseline (a 01 version named *eager*) "
              f"in plots/data/{FRONT}.csv; summary_speedup.png not drawn")
    draw_memory(front)
    return 0


if __name__ == "__main__":
    sys.exit(main())
