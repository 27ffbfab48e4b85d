#!/usr/bin/env python3
"""The figures of chapter 05 (Mamba-2's SSD), drawn from plots/data:

  plots/05_ssd_mamba2_seqlen.png     ms vs L at S3, batch 1 and 8: one line per
                                     version, the fastest version's floor dotted,
                                     the official mamba_chunk_scan_combined dashed
  plots/05_ssd_mamba2_memory.png     workspace MiB vs L at S3 batch 8 (the chunk
                                     states of the unfused versions, the layout
                                     copies of 03 through the mapping, the fused
                                     kernel's state ring), inputs + outputs grey
  plots/05_ssd_mamba2_scaling.png    the versions timed at L 2^20: ms and peak MiB
                                     against L at batch 1 and against batch at
                                     L 8192, the first one's floor dotted
  plots/05_ssd_mamba2_crossover.png  03's tuned scan against 05 on one problem
                                     (d = h·p = 2048, batch 8, L 4096) at N 16,
                                     64, 128, with both floors

S3: h 32, p 64, N 128, g 1, chunk 256, D + dt_bias + softplus, no z. Each
version's line is drawn from one device: the one most rows were timed on
where the version was timed there, else its own, named in its label and
drawn dashed beside that device's official times (see sets.one_device).
Needs matplotlib: python3 -m pip install matplotlib (or Debian's
python3-matplotlib). Usage: python3 plots/ssd.py
"""
import sys

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullLocator  # noqa: E402

from tablelib.data import CROSSOVER, ROOT, load_data, short_device  # noqa: E402
from tablelib.sets import (DTYPE_ORDER, OFFICIAL_NAMES, device_suffix,  # noqa: E402
                           devices_and_commits, fastest, is_crossover, is_s3, main_device,
                           official_ssd, one_device, one_device_note, timed)

CHAPTER = "05_ssd_mamba2"
MARKERS = {"fp32": "o", "fp16": "s", "bf16": "D"}
TRITON = "official_triton_chunk_scan_combined"
OTHER_DEVICE = (0, (4, 1.5))  # the dashes of a version drawn from another device than the main one


def versions(rows):
    """[(version, name, dtype)] in version order."""
    return sorted({(r["version"], r["name"], r["dtype"]) for r in rows})


def line_style(r, home):
    """A version's line style: solid on home (the figure's main device), dashed on another."""
    return "-" if r["device"] == home else OTHER_DEVICE


def series(rows, version, x):
    """[(x, row)] of one version, sorted by x."""
    return sorted(((r[x], r) for r in rows if r["version"] == version), key=lambda p: p[0])


def colors():
    return plt.rcParams["axes.prop_cycle"].by_key()["color"]


def compact(x):
    """A power-of-two axis' tick label: 512, 8K, 64K, 1M."""
    for unit, suffix in ((1 << 20, "M"), (1 << 10, "K")):
        if x >= unit and x % unit == 0:
            return f"{x // unit:g}{suffix}"
    return f"{x:g}"


def log_axes(ax, xs, xlabel):
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(xs, [compact(x) for x in xs])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(xlabel)
    ax.grid(True, which="major", color="#dddddd")


def save(fig, title, measured, name):
    devices, commits = devices_and_commits(measured)
    note = one_device_note(measured)
    fig.suptitle(f"{title}\nmeasured on {', '.join(devices) or 'an unrecorded device'}, "
                 f"commit {', '.join(commits) or 'unrecorded'}{note}", fontsize=11,
                 y=1.02 if note else 0.98)  # a third line stays clear of the panels' titles
    fig.savefig(ROOT / "plots" / name, dpi=130, bbox_inches="tight")
    plt.close(fig)
    print(f"figure: plots/{name}")


def draw_official(ax, official, here, home, batch):
    """The official SSD forward at the batch, dashed: on home (the figure's
    main device) in fp16 and fp32, dash-dotted on another device in the
    dtypes of our lines drawn from it."""
    for device in [home] + [d for d in devices_and_commits(here)[0] if d != home]:
        ref = official_ssd(official, short_device(device))
        dtypes = ("fp16", "fp32") if device == home else sorted(
            {r["dtype"] for r in here if r["device"] == device}, key=DTYPE_ORDER.index)
        for dtype in dtypes:
            pts = sorted((L, ms) for (impl, d, b, L), ms in ref.items()
                         if impl == TRITON and d == dtype and b == batch)
            if pts:
                ax.plot(*zip(*pts), color="#333333", linestyle="--" if device == home else "-.",
                        marker=MARKERS[dtype], mfc="none", lw=1.5,
                        label=f"official {OFFICIAL_NAMES[TRITON].replace('`', '')} {dtype} "
                              f"({short_device(device)})")


def draw_seqlen(rows, official, home):
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    vs = versions(rows)
    for ax, batch in zip(axes, (1, 8)):
        here = [r for r in rows if r["batch"] == batch]
        for i, (version, name, dtype) in enumerate(vs):
            pts = series(here, version, "seqlen")
            if pts:
                r0 = pts[0][1]
                ax.plot([x for x, _ in pts], [r["ms_median"] for _, r in pts],
                        color=colors()[i % len(colors())], marker=MARKERS.get(dtype, "^"),
                        linestyle=line_style(r0, home), lw=2,
                        label=f"v{version:g} {name} {dtype}{device_suffix(r0, home)}")
        best = fastest([r for r in here if r["device"] == home])
        if best:
            pts = series(here, best["version"], "seqlen")
            ax.plot([x for x, _ in pts], [r["floor_ms"] for _, r in pts], color="#777777",
                    linestyle=":", lw=1.5, label=f"floor of v{best['version']:g} {best['dtype']}")
        draw_official(ax, official, here, home, batch)
        log_axes(ax, sorted({r["seqlen"] for r in here}), "L (sequence length)")
        ax.set_title(f"batch {batch}")
    axes[0].set_ylabel("ms (median, L2 flushed, log scale)")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    save(fig, "05: time vs L at S3 (h 32, p 64, N 128, chunk 256, no z)", rows,
         f"{CHAPTER}_seqlen.png")


def draw_memory(rows, home):
    here = [r for r in rows if r["batch"] == 8]
    if not here:
        return
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for i, (version, name, dtype) in enumerate(versions(here)):
        pts = [(x, r) for x, r in series(here, version, "seqlen") if r["workspace_mib"]]
        if pts:
            r0 = pts[0][1]
            ax.plot([x for x, _ in pts], [r["workspace_mib"] for _, r in pts],
                    color=colors()[i % len(colors())], marker=MARKERS.get(dtype, "^"),
                    linestyle=line_style(r0, home),
                    lw=max(1.5, 5 - 1.2 * i),  # thinner on top: equal workspaces stay visible
                    label=f"v{version:g} {name} {dtype} workspace{device_suffix(r0, home)}")
    for dtype in sorted({r["dtype"] for r in here}):
        mine = [r for r in here if r["dtype"] == dtype]
        best = fastest([r for r in mine if r["device"] == home]) or fastest(mine)
        pts = series(mine, best["version"], "seqlen")
        ax.plot([x for x, _ in pts], [r["peak_mib"] - r["workspace_mib"] for _, r in pts],
                color="#999999", linestyle="--", marker=MARKERS.get(dtype, "^"), mfc="none",
                label=f"inputs + outputs {dtype}")
    log_axes(ax, sorted({r["seqlen"] for r in here}), "L (sequence length)")
    ax.set_ylabel("MiB (log scale)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    save(fig, "05: workspace vs L at S3, batch 8", here, f"{CHAPTER}_memory.png")


SCALING_L = 1 << 20  # a line of the scaling figure: a version timed at batch 1 and this L
SCALING_BATCH_L = 8192  # the L of its batch sweep


def draw_scaling(lines, title, name):
    """Time (top) and peak memory (bottom) of each line [(label, dtype, rows)]
    against L at batch 1 (left) and against batch at SCALING_BATCH_L (right),
    the first line's floor dotted."""
    fig, axes = plt.subplots(2, 2, figsize=(13, 9.5))
    measured = []
    sweeps = (("seqlen", lambda r: r["batch"] == 1, "L (sequence length), batch 1"),
              ("batch", lambda r: r["seqlen"] == SCALING_BATCH_L, f"batch, L {SCALING_BATCH_L}"))
    for col, (x, pick, xlabel) in enumerate(sweeps):
        xs = set()
        for i, (label, dtype, rows) in enumerate(lines):
            pts = sorted(((r[x], r) for r in rows if pick(r)), key=lambda p: p[0])
            if len(pts) < 2:
                continue
            style = dict(color=colors()[i % len(colors())], marker=MARKERS.get(dtype, "^"), lw=2, label=label)
            axes[0][col].plot([p for p, _ in pts], [r["ms_median"] for _, r in pts], **style)
            axes[1][col].plot([p for p, _ in pts], [r["peak_mib"] for _, r in pts], **style)
            if i == 0:
                axes[0][col].plot([p for p, _ in pts], [r["floor_ms"] for _, r in pts], color="#777777",
                                  linestyle=":", lw=1.5, label=f"floor of {label}")
            xs |= {p for p, _ in pts}
            measured += [r for _, r in pts]
        for ax in axes[:, col]:
            log_axes(ax, sorted(xs) or [1], xlabel)
    axes[0][0].set_ylabel("ms (median, L2 flushed, log scale)")
    axes[1][0].set_ylabel("peak device memory, MiB (log scale)")
    axes[0][1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    save(fig, title, measured, name)


def scaling_lines(rows):
    """[(label, dtype, rows)] of the versions timed at batch 1 and L SCALING_L, fastest there first:
    a line per version and device (the rows of the device of its row at SCALING_L)."""
    long = sorted((r for r in rows if r["batch"] == 1 and r["seqlen"] == SCALING_L), key=lambda r: r["ms_median"])
    return [(f"v{r['version']:g} {r['name']} {r['dtype']}", r["dtype"],
             [o for o in rows if o["version"] == r["version"] and o["device"] == r["device"]]) for r in long]


def scaling_home(lines):
    """The device most of the rows that scaling lines [(label, dtype, rows)] draw were timed
    on: a line from another device names its device (device_suffix)."""
    return main_device([r for _, _, rows in lines for r in rows
                        if r["batch"] == 1 or r["seqlen"] == SCALING_BATCH_L])


def draw_crossover(scan, ssd):
    fig, ax = plt.subplots(figsize=(9, 5.5))
    lines = [(scan, "03 ", "#1f77b4")]
    lines += [([r for r in ssd if r["version"] == v], "05 ", colors()[(i + 1) % len(colors())])
              for i, v in enumerate(sorted({r["version"] for r in ssd}))]
    measured = []
    for rows, chapter, color in lines:
        rows = sorted(timed(rows), key=lambda r: r["dstate"])
        if not rows:
            continue
        r0 = rows[0]
        ns = [r["dstate"] for r in rows]
        ax.plot(ns, [r["ms_median"] for r in rows], color=color,
                marker=MARKERS.get(r0["dtype"], "^"), lw=2,
                label=f"{chapter}v{r0['version']:g} {r0['name']} {r0['dtype']}")
        if r0["name"] in ("scan_fused_tuned", "ssd_fused_mma"):
            ax.plot(ns, [r["floor_ms"] for r in rows], color=color, linestyle=":", lw=1.5,
                    label=f"{chapter}{r0['name']} floor")
        measured += rows
    log_axes(ax, sorted({r["dstate"] for r in measured}), "N (state size)")
    ax.set_ylabel("ms (median, L2 flushed, log scale)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    save(fig, "03's scan against 05's SSD on one problem: d = h·p = 2048, batch 8, L 4096",
         measured, f"{CHAPTER}_crossover.png")


def main():
    chapters, official = load_data()
    rows = [r for r in timed(chapters.get(CHAPTER, [])) if is_s3(r)]
    if not rows:
        print(f"ssd: no S3 rows in plots/data/{CHAPTER}.csv; no chapter 05 figures")
        return 0
    home = main_device(rows)
    every_device = rows
    rows = one_device(rows, home)
    draw_seqlen(rows, official, home)
    draw_memory(rows, home)
    # Each version's scaling line from the device of its row at batch 1 and the
    # longest L (the fastest first), named where it is not the device most of
    # the drawn rows were timed on (as 06's figure).
    found = scaling_lines(every_device)
    home_of_lines = scaling_home(found)
    lines = [(f"{label}{device_suffix(rows_[0], home_of_lines)}", dtype, rows_) for label, dtype, rows_ in found]
    if lines:
        draw_scaling(lines, "05: scaling at S3 (h 32, p 64, N 128, chunk 256, no z)", f"{CHAPTER}_scaling.png")
    scan = [r for r in chapters.get(CROSSOVER, []) if is_crossover(r)]
    device = main_device(scan)  # 03 against 05 on one device: the one 03's rows were timed on
    scan = [r for r in scan if r["device"] == device]
    ssd = [r for r in chapters[CHAPTER] if is_crossover(r) and r["device"] == device]
    if scan and ssd:
        draw_crossover(scan, ssd)
    else:
        print(f"ssd: no crossover rows (plots/data/{CROSSOVER}.csv); crossover figure not drawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
