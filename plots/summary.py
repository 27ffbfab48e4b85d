#!/usr/bin/env python3
"""The headline figures at S1 (d 2048, N 32, L 512, batch 1..16), drawn from
every CSV in plots/data that has S1 rows, one line per chapter and dtype
following the fastest version at each batch:

  plots/summary_speedup.png  speedup over 01's GPU eager baseline vs batch
  plots/summary_memory.png   peak MiB vs batch

The official Mamba-1 scan (selective_scan_fn and selective_scan_ref) is drawn
as labelled dashed lines when plots/data holds the official timings.
Needs matplotlib: python3 -m pip install matplotlib (or Debian's
python3-matplotlib). Usage: python3 plots/summary.py
"""
import sys

sys.dont_write_bytecode = True  # importing tables.py leaves no __pycache__ in plots/

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullLocator  # noqa: E402

from tables import (OFFICIAL_DEVICE, OFFICIAL_NAMES, ROOT, best_by_batch,  # noqa: E402
                    devices_and_commits, eager_baseline, load_data, official_s1)

MARKERS = {"fp32": "o", "fp16": "s", "bf16": "D"}
OFFICIAL_STYLE = {"official_cuda_fwd": ("#333333", "--"),   # (color, line style)
                  "official_eager_ref": ("#999999", ":")}


def dtype_order(dtype):
    return (dtype != "fp32", dtype)


def stages(chapters):
    """[(chapter, dtype, [(batch, row)])]: the fastest S1 row at each batch,
    for every chapter and dtype, in chapter order, fp32 first."""
    lines = []
    for chapter in sorted(chapters):
        best = best_by_batch(chapters[chapter])
        for dtype in sorted({d for d, _ in best}, key=dtype_order):
            lines.append((chapter, dtype, sorted(
                ((b, r) for (d, b), r in best.items() if d == dtype), key=lambda p: p[0])))
    return lines


def officials(official):
    """[(impl, dtype, [(batch, ms, peak MiB)])]: the official scan at S1."""
    ref = official_s1(official)
    lines = []
    for impl in OFFICIAL_NAMES:
        for dtype in sorted({d for i, d, _ in ref if i == impl}, key=dtype_order):
            lines.append((impl, dtype, sorted(
                (b, *ref[(i, d, b)]) for i, d, b in ref if i == impl and d == dtype)))
    return lines


def stage_style(chapter, dtype, points, chapters):
    """Color by chapter, marker by dtype; the label names the versions used."""
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    versions = dict.fromkeys(f"v{r['version']:g}" for _, r in points)
    return dict(color=colors[chapters.index(chapter) % len(colors)],
                marker=MARKERS.get(dtype, "^"), lw=2,
                label=f"{chapter} {dtype} ({', '.join(versions)})")


def official_style(impl, dtype):
    color, line = OFFICIAL_STYLE[impl]
    name = OFFICIAL_NAMES[impl].replace("`", "")
    return dict(color=color, linestyle=line, marker=MARKERS.get(dtype, "^"), mfc="none",
                lw=1.5, label=f"official {name} {dtype} ({OFFICIAL_DEVICE})")


def new_figure():
    fig, ax = plt.subplots(figsize=(9, 5.5))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch")
    ax.grid(True, which="major", color="#dddddd")
    return fig, ax


def finish(fig, ax, title, batches, measured, name):
    ax.set_xticks(batches, [f"{b:g}" for b in batches])
    ax.xaxis.set_minor_locator(NullLocator())
    devices, commits = devices_and_commits(measured)
    ax.set_title(f"{title}\nmeasured on {', '.join(devices) or 'an unrecorded device'}, "
                 f"commit {', '.join(commits) or 'unrecorded'}", fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    path = ROOT / "plots" / name
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
    print(f"summary: plots/{name}")


def draw_speedup(lines, refs, eager):
    """Speedup = 01 eager ms / ms at the same batch."""
    fig, ax = new_figure()
    chapters = list(dict.fromkeys(c for c, _, _ in lines))
    batches, measured = set(), []
    for chapter, dtype, points in lines:
        points = [(b, r) for b, r in points if b in eager]
        if not points:
            continue
        xs = [b for b, _ in points]
        ys = [eager[b]["ms_median"] / r["ms_median"] for b, r in points]
        ax.plot(xs, ys, **stage_style(chapter, dtype, points, chapters))
        ax.annotate(f"×{ys[-1]:.3g}", (xs[-1], ys[-1]), xytext=(6, 0),
                    textcoords="offset points", va="center", fontsize=8)
        batches.update(xs)
        measured += [r for _, r in points]
    for impl, dtype, points in refs:
        points = [(b, ms) for b, ms, _ in points if b in eager]
        if points:
            ax.plot([b for b, _ in points], [eager[b]["ms_median"] / ms for b, ms in points],
                    **official_style(impl, dtype))
    ax.set_ylabel("speedup over 01 eager (×, log scale)")
    e = next(iter(eager.values()))
    finish(fig, ax, "Speedup over 01's GPU eager baseline "
           f"(v{e['version']:g} {e['name']}, {e['dtype']}) at S1: d 2048, N 32, L 512",
           sorted(batches), measured, "summary_speedup.png")


def draw_memory(lines, refs):
    fig, ax = new_figure()
    chapters = list(dict.fromkeys(c for c, _, _ in lines))
    batches, measured = set(), []
    for chapter, dtype, points in lines:
        points = [(b, r) for b, r in points if r["peak_mib"]]
        if points:
            ax.plot([b for b, _ in points], [r["peak_mib"] for _, r in points],
                    **stage_style(chapter, dtype, points, chapters))
            batches.update(b for b, _ in points)
            measured += [r for _, r in points]
    for impl, dtype, points in refs:
        points = [(b, mib) for b, _, mib in points if mib and b in batches]
        if points:
            ax.plot(*zip(*points), **official_style(impl, dtype))
    ax.set_ylabel("peak MiB (inputs and outputs included, log scale)")
    finish(fig, ax, "Peak memory of each chapter's fastest version at S1: d 2048, N 32, L 512",
           sorted(batches), measured, "summary_memory.png")


def main():
    chapters, official = load_data()
    lines = [line for line in stages(chapters) if line[2]]
    if not lines:
        print("summary: no S1 rows (d 2048, N 32, L 512) in plots/data; no summary figures")
        return 0
    refs = officials(official)
    eager = eager_baseline(chapters)
    if eager:
        draw_speedup(lines, refs, eager)
    else:
        print("summary: no S1 rows of 01's GPU eager baseline (a 01 version named *eager*) "
              "in plots/data; summary_speedup.png not drawn")
    draw_memory(lines, refs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
