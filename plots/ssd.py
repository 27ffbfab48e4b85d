#!/usr/bin/env python3
"""The figures of chapter 05 (Mamba-2's SSD), drawn from plots/data:

  plots/05_ssd_mamba2_seqlen.png     ms vs L at S3 (L up to 16384), batch 1 and 8:
                                     one line per landmark version, the fastest
                                     version's floor dotted, the official
                                     mamba_chunk_scan_combined dashed
  plots/05_ssd_mamba2_memory.png     workspace MiB vs L at S3 batch 8 (the chunk
                                     states of the unfused versions, the layout
                                     copies of 03 through the mapping, the fused
                                     kernel's state ring), inputs + outputs grey
  plots/05_ssd_mamba2_scaling.png    the versions timed at L 2^20: ms and peak MiB
                                     against L at batch 1 and against batch at
                                     L 8192, the first one's floor dotted
  plots/05_ssd_mamba2_crossover.png  03's tuned scan against 05's landmark versions
                                     on one problem (d = h·p = 2048, batch 8,
                                     L 4096) at N 16, 64, 128, with 03's floor and
                                     the floor of 05's fastest version; a 05
                                     version not timed on 03's device drawn from
                                     its own, named and dashed
  plots/05_ssd_mamba2_all_<what>.png the appendix of a figure above that keeps to
                                     the landmarks: every version

A figure draws at most 8 versions: where it has rows of more, the chapter's
landmark versions (plots/landmarks.py), each in the color and marker it
keeps in every figure of the chapter; its appendix draws them all.

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

from landmarks import dropped, pick, style  # noqa: E402
from tablelib.data import ROOT, load_data, short_device  # noqa: E402
from tablelib.ops import chapter_of  # noqa: E402
from tablelib.ops.ssd import CROSSOVER  # noqa: E402
from tablelib.sets import (DTYPE_ORDER, OFFICIAL_NAMES, device_suffix,  # noqa: E402
                           devices_and_commits, fastest, is_crossover, is_s3, main_device,
                           official_ssd, one_device, one_device_note, timed)

CHAPTER = chapter_of("ssd")  # the chapter this script draws (its op's first)
MARKERS = {"fp32": "o", "fp16": "s", "bf16": "D"}  # the reference lines' (official kernels') hollow markers
TRITON = "official_triton_chunk_scan_combined"
S3_MAX_L = 16384  # S3's longest L: the seqlen figure's; the scaling figure draws the longer ones
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


def plot_version(ax, chapter, r0, xs, ys, label, linestyle="-", **extra):
    """One version's line in the color and marker it keeps across its chapter's figures."""
    kw = style(chapter, r0["version"])
    kw.update(extra)
    return ax.plot(xs, ys, linestyle=linestyle, label=label, **kw)


def plot_versions(ax, chapter, here, vs, home, x="seqlen", y="ms_median", what="", widen=False):
    """Each version of vs (versions()) over x in rows `here`, in its own style,
    labelled as the ladder names it (what: a word after the dtype). widen:
    the earlier versions drawn thicker, so that versions of equal times stay
    visible one over the other."""
    for i, (version, vname, dtype) in enumerate(vs):
        pts = series(here, version, x)
        if pts:
            r0 = pts[0][1]
            below = len(vs) - 1 - i if widen else 0
            extra = {"lw": 2 + 0.5 * below, "ms": 6 + 0.75 * below} if widen else {}
            plot_version(ax, chapter, r0, [p for p, _ in pts], [r[y] for _, r in pts],
                         f"v{version:g} {vname} {dtype}{what}{device_suffix(r0, home)}", line_style(r0, home),
                         **extra)


def main_and_all(chapter, what, rows, draw):
    """Draws plots/<chapter>_<what>.png by draw(rows, name, note) from the rows
    of at most 8 versions (landmarks.pick) and, where that leaves a version
    out, plots/<chapter>_all_<what>.png from all of them (an appendix left
    from an earlier run is removed where none is needed)."""
    appendix = f"{chapter}_all_{what}.png"
    if dropped(rows, chapter):
        draw(pick(rows, chapter), f"{chapter}_{what}.png", f"landmark versions (every version: plots/{appendix})")
        draw(rows, appendix, "every version")
    else:
        draw(rows, f"{chapter}_{what}.png", "")
        (ROOT / "plots" / appendix).unlink(missing_ok=True)


def seqlen_and_memory(chapter, rows, draw_seqlen, draw_memory):
    """S3's two figures of a chapter (05 and 06), each with main_and_all:
    plots/<chapter>_seqlen.png by draw_seqlen(rows, name, note) from the rows
    at batch 1 and 8 up to S3_MAX_L, and plots/<chapter>_memory.png by
    draw_memory from the default form's rows (sets.is_s3) at batch 8, where
    there are any."""
    main_and_all(chapter, "seqlen", [r for r in rows if r["batch"] in (1, 8) and r["seqlen"] <= S3_MAX_L],
                 draw_seqlen)
    batch8 = [r for r in rows if is_s3(r) and r["batch"] == 8]
    if batch8:
        main_and_all(chapter, "memory", batch8, draw_memory)


def titled(title, note):
    """The figure title with a note under it: which versions the figure draws."""
    return f"{title}\n{note}" if note else title


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
    text = (f"{title}\nmeasured on {', '.join(devices) or 'an unrecorded device'}, "
            f"commit {', '.join(commits) or 'unrecorded'}{note}")
    extra = text.count("\n") - 1  # lines past two: each raised by its height, about 0.22 inch,
    fig.suptitle(text, fontsize=11, y=0.98 + 0.22 * extra / fig.get_figheight())  # clear of the panels' titles
    write(fig, name)


def write(fig, name):
    """Writes the figure to plots/<name>, closes it and says so."""
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


def draw_seqlen(rows, official, home, name, note):
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    vs = versions(rows)
    for ax, batch in zip(axes, (1, 8)):
        here = [r for r in rows if r["batch"] == batch]
        plot_versions(ax, CHAPTER, here, vs, home)
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
    save(fig, titled("05: time vs L at S3 (h 32, p 64, N 128, chunk 256, no z)", note), rows, name)


def draw_memory(here, home, name, note):
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for i, (version, vname, dtype) in enumerate(versions(here)):
        pts = [(x, r) for x, r in series(here, version, "seqlen") if r["workspace_mib"]]
        if pts:
            r0 = pts[0][1]
            plot_version(ax, CHAPTER, r0, [x for x, _ in pts], [r["workspace_mib"] for _, r in pts],
                         f"v{version:g} {vname} {dtype} workspace{device_suffix(r0, home)}", line_style(r0, home),
                         lw=max(1.2, 4.5 - 0.5 * i))  # thinner on top: equal workspaces stay visible
    inputs_outputs(ax, here, lambda mine: (fastest([r for r in mine if r["device"] == home]) or fastest(mine))["version"])
    save(fig, titled("05: workspace vs L at S3, batch 8", note), here, name)


def inputs_outputs(ax, here, version_of):
    """The memory figures' dashed lines, a dtype each: the inputs and outputs
    (peak less workspace) of the version version_of(rows of the dtype) picks;
    then the axes, against L, and the legend."""
    for dtype in sorted({r["dtype"] for r in here}, key=DTYPE_ORDER.index):
        mine = [r for r in here if r["dtype"] == dtype]
        pts = series(mine, version_of(mine), "seqlen")
        ax.plot([x for x, _ in pts], [r["peak_mib"] - r["workspace_mib"] for _, r in pts],
                color="#999999", linestyle="--", marker=MARKERS.get(dtype, "^"), mfc="none",
                label=f"inputs + outputs {dtype}")
    log_axes(ax, sorted({r["seqlen"] for r in here}), "L (sequence length)")
    ax.set_ylabel("MiB (log scale)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)


SCALING_L = 1 << 20  # a line of the scaling figure: a version timed at batch 1 and this L
SCALING_BATCH_L = 8192  # the L of its batch sweep


def draw_scaling(chapter, forms, title, name):
    """Time and peak memory of each line (label, dtype, rows) of each form
    [(form or None, lines)] against L at batch 1 (left) and against batch at
    SCALING_BATCH_L (right): a row of time panels per form, then a row of
    memory panels per form, each form's first line's floor dotted. A form
    gets panels of its own, so that a version appears once in each."""
    n = len(forms)
    fig, axes = plt.subplots(2 * n, 2, figsize=(13, 4.75 * 2 * n), squeeze=False)
    fig.subplots_adjust(top=1 - 1.0 / fig.get_figheight(), hspace=0.3 if n == 1 else 0.4)  # an inch for the title
    measured = []
    sweeps = (("seqlen", lambda r: r["batch"] == 1, "L (sequence length), batch 1"),
              ("batch", lambda r: r["seqlen"] == SCALING_BATCH_L, f"batch, L {SCALING_BATCH_L}"))
    for k, (form, lines) in enumerate(forms):
        time_row, memory_row = axes[k], axes[n + k]
        for col, (x, at, xlabel) in enumerate(sweeps):
            xs = set()
            for i, (label, dtype, rows) in enumerate(lines):
                pts = sorted(((r[x], r) for r in rows if at(r)), key=lambda p: p[0])
                if len(pts) < 2:
                    continue
                px = [p for p, _ in pts]
                plot_version(time_row[col], chapter, rows[0], px, [r["ms_median"] for _, r in pts], label)
                plot_version(memory_row[col], chapter, rows[0], px, [r["peak_mib"] for _, r in pts], label)
                if i == 0:
                    time_row[col].plot(px, [r["floor_ms"] for _, r in pts], color="#777777",
                                       linestyle=":", lw=1.5, label=f"floor of {label}")
                xs |= set(px)
                measured += [r for _, r in pts]
            for ax in (time_row[col], memory_row[col]):
                log_axes(ax, sorted(xs) or [1], xlabel)
        for row, what in ((time_row, "time"), (memory_row, "peak memory")):
            if form:
                for ax in row:
                    ax.set_title(f"{what}, {form} form", fontsize=10)
        time_row[0].set_ylabel("ms (median, L2 flushed, log scale)")
        memory_row[0].set_ylabel("peak device memory, MiB (log scale)")
        time_row[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
        if form:
            memory_row[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    save(fig, title, measured, name)


def scaling_lines(rows, suffix=lambda r: ""):
    """[(label, dtype, rows)] of the versions timed at batch 1 and L SCALING_L, fastest there first:
    a line per version and device (the rows of the device of its row at SCALING_L), its label
    ended by suffix(its first row)."""
    long = sorted((r for r in rows if r["batch"] == 1 and r["seqlen"] == SCALING_L), key=lambda r: r["ms_median"])
    lines = []
    for r in long:
        mine = [o for o in rows if o["version"] == r["version"] and o["device"] == r["device"]]
        lines.append((f"v{r['version']:g} {r['name']} {r['dtype']}{suffix(mine[0])}", r["dtype"], mine))
    return lines


def scaling_home(rows):
    """The device most of the rows the scaling figure draws were timed on (those at
    batch 1 or at L SCALING_BATCH_L): a line from another device names its device."""
    return main_device([r for r in rows if r["batch"] == 1 or r["seqlen"] == SCALING_BATCH_L])


def draw_scalings(chapter, forms, title):
    """The scaling figure of the rows of each form [(form or None, rows)], from
    at most 8 versions (landmarks.pick over all forms), and its appendix."""
    lines = {form: scaling_lines(rows) for form, rows in forms}
    timed_there = [r for form, rows in forms for _, _, line in lines[form] for r in line]
    if not timed_there:
        return
    home = scaling_home(timed_there)

    def draw(picked, name, note):
        keep = {r["version"] for r in picked}
        drawn = [(form, scaling_lines([r for r in rows if r["version"] in keep],
                                      lambda r: device_suffix(r, home))) for form, rows in forms]
        draw_scaling(chapter, drawn, titled(title, note), name)

    main_and_all(chapter, "scaling", timed_there, draw)


def draw_crossover(scan, ssd, home, name, note):
    """03's scan (rows of home) and 05's versions (each from one device: home
    where it has rows there, else its own, named and dashed) against N, with
    03's floor and the floor of 05's fastest version at the largest N."""
    fig, ax = plt.subplots(figsize=(9, 5.5))
    measured = []
    rows = sorted(timed(scan), key=lambda r: r["dstate"])
    if rows:
        r0 = rows[0]
        ns = [r["dstate"] for r in rows]
        ax.plot(ns, [r["ms_median"] for r in rows], color="black", marker="h", ms=8, lw=2.5,
                label=f"03 v{r0['version']:g} {r0['name']} {r0['dtype']}{device_suffix(r0, home)}")
        ax.plot(ns, [r["floor_ms"] for r in rows], color="black", linestyle=":", lw=1.5,
                label=f"floor of 03 v{r0['version']:g}{device_suffix(r0, home)}")
        measured += rows
    for version, vname, dtype in versions(ssd):
        mine = sorted((r for r in ssd if r["version"] == version), key=lambda r: r["dstate"])
        r0 = mine[0]
        plot_version(ax, CHAPTER, r0, [r["dstate"] for r in mine], [r["ms_median"] for r in mine],
                     f"05 v{version:g} {vname} {dtype}{device_suffix(r0, home)}", line_style(r0, home))
        measured += mine
    top = max((r["dstate"] for r in ssd), default=None)
    best = fastest([r for r in ssd if r["dstate"] == top])
    if best:
        mine = sorted((r for r in ssd if r["version"] == best["version"]), key=lambda r: r["dstate"])
        ax.plot([r["dstate"] for r in mine], [r["floor_ms"] for r in mine], color="#777777", linestyle=":",
                lw=1.5, label=f"floor of 05 v{best['version']:g} {best['dtype']}{device_suffix(best, home)}")
    log_axes(ax, sorted({r["dstate"] for r in measured}), "N (state size)")
    ax.set_ylabel("ms (median, L2 flushed, log scale)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    save(fig, titled("03's scan against 05's SSD on one problem: d = h·p = 2048, batch 8, L 4096", note),
         measured, name)


def home_and_lines(rows):
    """The device most of rows were timed on, and the rows drawn as lines:
    each version's from one device, that one where it has rows (one_device)."""
    home = main_device(rows)
    return home, one_device(rows, home)


def main():
    chapters, official = load_data()
    rows = [r for r in timed(chapters.get(CHAPTER, [])) if is_s3(r)]
    if not rows:
        print(f"ssd: no S3 rows in plots/data/{CHAPTER}.csv; no chapter 05 figures")
        return 0
    home, lines = home_and_lines(rows)
    seqlen_and_memory(CHAPTER, lines,
                      lambda picked, name, note: draw_seqlen(picked, official, home, name, note),
                      lambda picked, name, note: draw_memory(picked, home, name, note))
    # Each version's scaling line from the device of its row at batch 1 and the
    # longest L (the fastest first), named where it is not the device most of
    # the drawn rows were timed on (as 06's figure).
    draw_scalings(CHAPTER, [(None, rows)], "05: scaling at S3 (h 32, p 64, N 128, chunk 256, no z)")
    # 03 against 05 on the device 03's rows were timed on; a 05 version timed
    # there drawn from it, one timed elsewhere only from its own device, named.
    scan = [r for r in chapters.get(CROSSOVER, []) if is_crossover(r)]
    device = main_device(scan)
    scan = [r for r in scan if r["device"] == device]
    ssd = one_device([r for r in timed(chapters[CHAPTER]) if is_crossover(r)], device)
    if scan and ssd:
        main_and_all(CHAPTER, "crossover", ssd,
                     lambda picked, name, note: draw_crossover(scan, picked, device, name, note))
    else:
        print(f"ssd: no crossover rows (plots/data/{CROSSOVER}.csv); crossover figure not drawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
