#!/usr/bin/env python3
"""The figures of chapter 06 (bidirectional Mamba-2), drawn from plots/data:

  plots/06_bidirectional_seqlen.png  ms vs L at S3 (L up to 16384), batch 1 and
                                     8, default and Hydra form: one line per
                                     version, and one causal pass of 05's
                                     fastest fp16 version (at batch 8, L 8192)
                                     dashed
  plots/06_bidirectional_memory.png  peak MiB vs L at S3 batch 8, default form:
                                     the flipped copies and two outputs of
                                     "twice" against the fused versions
  plots/06_bidirectional_scaling.png the versions timed at L 2^20: ms and peak MiB
                                     against L at batch 1 and against batch at
                                     L 8192, a row of panels per form
  plots/06_bidirectional_all_<what>.png  where a figure above keeps to the
                                     landmark versions (plots/landmarks.py): its
                                     appendix, every version

S3: h 32, p 64, N 128, g 1, chunk 256, D + dt_bias + softplus, no z. Each
version's line is drawn from one device (see sets.one_device), and 05's causal
pass from the device 06's rows were mostly timed on.
Needs matplotlib: python3 -m pip install matplotlib (or Debian's
python3-matplotlib). Usage: python3 plots/bidir.py
"""
import sys

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ssd import (MARKERS, S3_MAX_L, draw_scalings, home_and_lines, inputs_outputs, line_style,  # noqa: E402
                 log_axes, plot_version, plot_versions, save, seqlen_and_memory, series, titled, versions)
from tablelib.data import load_data, short_device  # noqa: E402
from tablelib.ops import chapter_of  # noqa: E402
from tablelib.sets import CAUSAL, device_suffix, is_s3, is_s3_hydra, timed  # noqa: E402

BIDIR = chapter_of("bidir")  # the chapter this script draws (its op's first)


def causal_rows(ssd, home):
    """One causal pass of 05 at S3 in fp16 on home: the rows of the version
    fastest at batch 8, L 8192 there (05's fused kernel where that shape was
    not timed)."""
    here = [r for r in ssd if is_s3(r) and r["dtype"] == "fp16" and r["device"] == home]
    at = [r for r in here if r["batch"] == 8 and r["seqlen"] == 8192]
    name = min(at, key=lambda r: r["ms_median"])["name"] if at else CAUSAL
    return [r for r in here if r["name"] == name]


def draw_seqlen(rows, causal, home, name, note):
    fig, axes = plt.subplots(2, 2, figsize=(13, 10), sharey=True)
    vs = versions(rows)
    for row_axes, (form, pick) in zip(axes, (("default", is_s3), ("Hydra", is_s3_hydra))):
        for ax, batch in zip(row_axes, (1, 8)):
            here = [r for r in rows if pick(r) and r["batch"] == batch]
            plot_versions(ax, BIDIR, here, vs, home)
            pts = sorted((r["seqlen"], r["ms_median"]) for r in causal if r["batch"] == batch)
            if pts:
                on = f" ({short_device(home)})" if len({r["device"] for r in rows}) > 1 else ""
                ax.plot(*zip(*pts), color="#333333", linestyle="--", marker=MARKERS["fp16"], mfc="none",
                        lw=1.5, label=f"05 {causal[0]['name']} fp16, one causal pass{on}")
            log_axes(ax, sorted({r["seqlen"] for r in here}) or [512], "L (sequence length)")
            ax.set_title(f"{form} form, batch {batch}")
        row_axes[0].set_ylabel("ms (median, L2 flushed, log scale)")
    axes[0][1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    save(fig, titled("06: time vs L at S3 (h 32, p 64, N 128, chunk 256, no z)", note), rows + causal, name)


def draw_memory(here, home, name, note):
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for version, vname, dtype in versions(here):
        pts = series(here, version, "seqlen")
        r0 = pts[0][1]
        plot_version(ax, BIDIR, r0, [x for x, _ in pts], [r["peak_mib"] for _, r in pts],
                     f"v{version:g} {vname} {dtype} peak{device_suffix(r0, home)}", line_style(r0, home))
    inputs_outputs(ax, here, lambda mine: min(r["version"] for r in mine))
    save(fig, titled("06: peak device memory vs L at S3, batch 8, default form", note), here, name)


def main():
    chapters, _ = load_data()
    rows = [r for r in timed(chapters.get(BIDIR, [])) if is_s3(r) or is_s3_hydra(r)]
    if not rows:
        print(f"bidir: no S3 rows in plots/data/{BIDIR}.csv; no chapter 06 figures")
        return 0
    home, lines = home_and_lines(rows)
    causal = causal_rows(timed(chapters.get(chapter_of("ssd"), [])), home)
    causal = [r for r in causal if r["seqlen"] <= S3_MAX_L]
    seqlen_and_memory(BIDIR, lines,
                      lambda picked, name, note: draw_seqlen(picked, causal, home, name, note),
                      lambda picked, name, note: draw_memory(picked, home, name, note))
    # A version's scaling rows may come from another device than its other
    # rows: each line from the device of its row at batch 1 and the longest L,
    # named where it is not the device most of the drawn rows were timed on.
    draw_scalings(BIDIR, [(form, [r for r in rows if pick(r)])
                          for form, pick in (("default", is_s3), ("Hydra", is_s3_hydra))],
                  "06: scaling at S3 (h 32, p 64, N 128, chunk 256, no z)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
