#!/usr/bin/env python3
"""The front page's speed-up and memory figures, drawn from plots/data:

  plots/summary_speedup.png  left: each chapter's fastest version at S1 (d 2048,
                             N 32, L 512) over 01's GPU eager baseline vs batch;
                             right: our fastest version over the official kernel
                             at every shape where both were timed in the same
                             device call
  plots/summary_memory.png   peak MiB of each chapter's fastest version: at S1
                             vs batch (01-04), at S3 batch 8 vs L (05, 06's
                             default form), at S4 Mamba-2 vs batch (07), with
                             the official kernels' peaks at the same shapes

Every comparison is within one device: a ratio's two times, a line's points
(the device most of the chapter's rows were timed on where the line has rows
there, else its own, named in its label), an official peak and our row.
Needs matplotlib: python3 -m pip install matplotlib (or Debian's
python3-matplotlib). Usage: python3 plots/summary.py
"""
import sys

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ssd import MARKERS, log_axes  # noqa: E402
from tablelib.data import CROSSOVER, ROOT, SOURCE, load_data  # noqa: E402
from tablelib.markdown import sig  # noqa: E402
from tablelib.sets import (BIDIR, DECODE, DTYPE_ORDER, OFFICIAL_NAMES, SSD,  # noqa: E402
                           decode_form, device_suffix, devices_and_commits,
                           eager_baseline, fastest, is_s1, is_s3, is_s4, main_device,
                           official_comparisons, official_kernel_rows, one_device, timed)

OFFICIAL_COLORS = ("#333333", "#999999")
BARS_AT_WIDTH = 7  # bars the speed-up figure's right panel holds at its narrowest


def chapter_colors(chapters):
    """{chapter: color}, one color a chapter in chapter order, the same in every panel."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    drawn = sorted(c for c in chapters if c != CROSSOVER)
    return {c: cycle[i % len(cycle)] for i, c in enumerate(drawn)}


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


def save(fig, title, measured, name):
    devices, commits = devices_and_commits(measured)
    fig.suptitle(f"{title}\nmeasured on {', '.join(devices) or 'an unrecorded device'}, "
                 f"commits {', '.join(commits) or 'unrecorded'}", fontsize=11)
    fig.savefig(ROOT / "plots" / name, dpi=130, bbox_inches="tight")
    plt.close(fig)
    print(f"summary: plots/{name}")


def draw_over_eager(ax, chapters, eager, colors):
    """Left panel of the speed-up figure: rows of the eager baseline's device
    only; returns the rows drawn."""
    measured, batches = [], set()
    device = next(iter(eager.values()))["device"]
    for chapter in sorted(chapters):
        s1 = [r for r in timed(chapters[chapter])
              if is_s1(r) and r["batch"] in eager and r["device"] == device]
        for dtype, points in fastest_lines(s1, "batch"):
            xs = [b for b, _ in points]
            ys = [eager[b]["ms_median"] / r["ms_median"] for b, r in points]
            ax.plot(xs, ys, color=colors[chapter], marker=MARKERS.get(dtype, "^"), lw=2,
                    label=f"{line_label(chapter, dtype, points)}: ×{sig(ys[-1])} at batch {xs[-1]:g}")
            batches.update(xs)
            measured += [r for _, r in points]
    log_axes(ax, sorted(batches), "batch")
    e = next(iter(eager.values()))
    ax.set_title(f"over 01's GPU eager baseline (v{e['version']:g} {e['name']}, {e['dtype']})\n"
                 "S1: d 2048, N 32, L 512", fontsize=10)
    ax.set_ylabel("speed-up (×, log scale)")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.12), fontsize=8, frameon=False)
    return measured


def official_bars(chapters, official):
    """([(chapter, official row, our row)], chapters without one): one bar per
    shape and device where our fastest version and the official kernel were
    timed in the same device call, with the official kernel's best row over
    all runs on that device."""
    bars, without = [], []
    for chapter in sorted(chapters):
        if chapter == CROSSOVER:
            continue
        same = [(o, r) for o, is_same, r in official_comparisons(chapters[chapter], official) if is_same]
        bars += [(chapter, o, r) for o, r in same]
        if not same:
            without.append(chapter[:2])
    return bars, without


def bar_title(bars):
    """The right panel's title: the kernels, and the files the best official
    times come from, by device (a line each where there are several)."""
    if not bars:
        return "over the official kernel timed in the same device call"
    kernels = ", ".join(dict.fromkeys(OFFICIAL_NAMES[o["impl"]].replace("`", "") for _, o, _ in bars))
    files = {}  # {official device: {file: True}}
    for _, o, _ in bars:
        files.setdefault(o["device"], {})[o[SOURCE]] = True
    best = [f"{device}, best from {', '.join(names)}" for device, names in files.items()]
    if len(best) == 1:
        return (f"over the official kernel's best time of all runs, where it was also timed in the same "
                f"device call\n{kernels} ({best[0]})")
    return (f"over the official kernel's best time of all runs on the bar's device, where it was also "
            f"timed in the same device call\n{kernels}\n" + "\n".join(best))


def draw_over_official(ax, bars, without, colors):
    """Right panel of the speed-up figure: the official kernel's best time
    over ours, a bar per (chapter, official row, our row) of bars, hatched
    and named on another device than most bars'; returns the rows drawn."""
    home = main_device([r for _, _, r in bars])
    several = len({r["device"] for _, _, r in bars}) > 1
    for i, (chapter, o, r) in enumerate(bars):
        ratio = o["ms_median"] / r["ms_median"]
        ax.bar(i, ratio, color=colors[chapter], width=0.7, hatch=None if r["device"] == home else "//")
        ax.annotate(f"×{sig(ratio)}", (i, ratio), xytext=(0, 3), textcoords="offset points",
                    ha="center", fontsize=8)
    ax.set_xticks(range(len(bars)),
                  [f"{c[:2]} v{r['version']:g} {r['dtype']}\n" + (f"{o['device']}\n" if several else "")
                   + f"b {r['batch']:g}, L {r['seqlen']:g}" for c, o, r in bars], fontsize=7)
    ax.set_yscale("log")
    ax.axhline(1, color="#333333", lw=1)
    ax.grid(True, axis="y", which="major", color="#dddddd")
    ax.set_title(bar_title(bars), fontsize=9 if several else 10)
    ax.set_xlabel("no official time from the same call: chapters " + ", ".join(without), fontsize=9)
    return [r for _, _, r in bars]


def draw_speedup(chapters, official, eager):
    bars, without = official_bars(chapters, official)
    right = max(1, len(bars) / BARS_AT_WIDTH)  # the right panel widens past BARS_AT_WIDTH bars
    fig, axes = plt.subplots(1, 2, figsize=(15 * (1.1 + right) / 2.1, 6),
                             gridspec_kw={"width_ratios": [1.1, right]})
    colors = chapter_colors(chapters)
    measured = draw_over_eager(axes[0], chapters, eager, colors)
    measured += draw_over_official(axes[1], bars, without, colors)
    lines = bar_title(bars).count("\n")  # the title's lines past its first two push the panels down
    fig.subplots_adjust(top=0.82 - 0.04 * max(0, lines - 1), wspace=0.2)
    save(fig, "Speed-up of each chapter's fastest version", measured, "summary_speedup.png")


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
    rows, one line per kernel, dtype and device (our row's), from the last
    file that has it."""
    lines = {}
    for r in rows:
        found = [o for o in official_kernel_rows(official, r) if o["peak_MiB"]]
        if found:
            o = found[-1]
            line = lines.setdefault((o["impl"], o["dtype"], o["device"]), {"files": {}, "points": {}})
            line["points"][r[x]] = o["peak_MiB"]
            line["files"][o[SOURCE]] = True
    return [(f"official {OFFICIAL_NAMES[impl].replace('`', '')} {dtype} peak "
             f"({device}, {', '.join(line['files'])})", sorted(line["points"].items()))
            for (impl, dtype, device), line in lines.items()]


def draw_memory(chapters, official):
    fig, axes = plt.subplots(1, len(MEMORY_PANELS), figsize=(18, 6))
    colors = chapter_colors(chapters)
    measured = []
    for ax, (title, only, pick, x, xlabel) in zip(axes, MEMORY_PANELS):
        drawn, xs = [], set()
        for chapter in sorted(chapters):
            if chapter == CROSSOVER or (only and chapter not in only):
                continue
            rows = [r for r in timed(chapters[chapter]) if pick(r) and r["peak_mib"]]
            home = main_device(rows)
            for dtype, points in fastest_lines(one_device(rows, home, lambda r: r["dtype"]), x):
                ax.plot([v for v, _ in points], [r["peak_mib"] for _, r in points],
                        color=colors[chapter], marker=MARKERS.get(dtype, "^"), lw=2,
                        label=line_label(chapter, dtype, points) + device_suffix(points[0][1], home))
                drawn += [r for _, r in points]
                xs.update(v for v, _ in points)
        for i, (name, points) in enumerate(official_peaks(official, drawn, x)):
            ax.plot(*zip(*points), color=OFFICIAL_COLORS[i % 2], linestyle="--", marker="o", mfc="none",
                    lw=1.2, label=name)
        if xs:
            log_axes(ax, sorted(xs), xlabel)
        ax.set_title(title, fontsize=10)
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.14), fontsize=7, frameon=False)
        measured += drawn
    axes[0].set_ylabel("peak MiB (inputs and outputs included, log scale)")
    fig.subplots_adjust(top=0.84, wspace=0.22)
    save(fig, "Peak device memory of each chapter's fastest version", measured, "summary_memory.png")


def main():
    chapters, official = load_data()
    if not chapters:
        print("summary: no benchmark data in plots/data; no summary figures")
        return 0
    eager = eager_baseline(chapters)
    if eager:
        draw_speedup(chapters, official, eager)
    else:
        print("summary: no S1 rows of 01's GPU eager baseline (a 01 version named *eager*) "
              "in plots/data; summary_speedup.png not drawn")
    draw_memory(chapters, official)
    return 0


if __name__ == "__main__":
    sys.exit(main())
