#!/usr/bin/env python3
"""The figures of chapter 07 (the decode step), drawn from plots/data:

  plots/07_decode_kernel_bandwidth.png   GB/s vs batch at S4, one token, L2
                                         flushed: one line per GPU version, the
                                         copy rate probed in the same run, and the
                                         official selective_state_update (fp32 state)
  plots/07_decode_kernel_loop.png        ms per step vs batch in the 256-step token
                                         loop (state hot in L2): launched one by one
                                         (left) against captured in a CUDA graph (right)
  plots/07_decode_kernel_tokens.png      ms per token vs T tokens per launch at
                                         batch 8: the state's bytes shared by T tokens
  plots/07_decode_kernel_slots_drafts.png a server's cases, Mamba-2: T draft tokens in
                                         one launch that also writes the state after
                                         each (L2 flushed) against T single steps in a
                                         CUDA graph, at batch 1 and 64; and one step of
                                         batch 64 on its own states against the same
                                         batch in a pool of 1024 slots (CUDA graph)
  plots/07_decode_kernel_state_vs_kv.png what a sequence keeps per layer: the
                                         recurrent state against a KV cache of the same
                                         width, vs L (plots/data/07_decode_kernel_state_vs_kv.csv)
  plots/07_decode_kernel_state_precision.png  y's error against the token index for a
                                         state stored in fp32, 16 or 8 bits
                                         (plots/data/07_decode_kernel_state_precision.csv)
  plots/07_decode_kernel_all_<what>.png  the appendix of the bandwidth, loop and
                                         tokens figures, which keep to the landmark
                                         versions: every version

A figure draws at most 8 versions: where it has rows of more, the chapter's
landmark versions (plots/landmarks.py), each in the color and marker it
keeps in every figure of the chapter; its appendix draws them all.
Each version's line is drawn from one device (see sets.one_device), the
official step from the devices of the lines beside it.
Needs matplotlib: python3 -m pip install matplotlib (or Debian's
python3-matplotlib). Usage: python3 plots/decode.py
"""
import sys

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from landmarks import style  # noqa: E402
from ssd import (colors, line_style, log_axes, main_and_all, plot_version, save, series, titled,  # noqa: E402
                 versions, write)
from tablelib.data import load_data, read_text_rows, short_device  # noqa: E402

from tablelib.ops import chapter_of  # noqa: E402
from tablelib.sets import (LOOP_STEPS, OFFICIAL_NAMES, decode_form, device_suffix,  # noqa: E402
                           devices_and_commits, fastest, is_loop, is_s4, main_device, official_decode,
                           one_device, timed)

DECODE = chapter_of("decode")  # the chapter this script draws (its op's first)
STATE_VS_KV = f"{DECODE}_state_vs_kv"  # what a sequence keeps, state against KV cache (make bench)
STATE_PRECISION = f"{DECODE}_state_precision"  # y's error by how the state is stored (make bench, CPU)

FORMS = (("m2", "Mamba-2: h 32, p 64, N 128, no z"), ("m1", "Mamba-1: d 2048, N 16, z"))


def two_panels():
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5))
    fig.subplots_adjust(top=0.84)  # room for the two-line title above the panels' own
    return fig, axes


def draw_official(ax, official, here, home, form):
    """The official decode step with an fp32 state as GB/s: our fp32 rows'
    bytes (the same tensors) over its time, on each device of here (home,
    the figure's main device, dashed; another dash-dotted)."""
    for device in devices_and_commits(here)[0]:
        ref = official_decode(official, short_device(device))
        bytes_at = {r["batch"]: r["bytes"] for r in here if r["dtype"] == "fp32" and r["device"] == device}
        pts = sorted((b, bytes_at[b] / (ms * 1e-3) / 1e9) for (f, d, b), ms in ref.items()
                     if f == form and d == "fp32" and b in bytes_at)
        if pts:
            ax.plot(*zip(*pts), color="#333333", linestyle="--" if device == home else "-.", marker="o",
                    mfc="none", lw=1.5,
                    label=f"official {OFFICIAL_NAMES['official_triton'].replace('`', '')} fp32 "
                          f"({short_device(device)})")


def draw_bandwidth(rows, official, home, name, note):
    fig, axes = two_panels()
    for ax, (form, title) in zip(axes, FORMS):
        here = [r for r in rows if decode_form(r) == form]
        for version, vname, dtype in versions(here):
            pts = series(here, version, "batch")
            plot_version(ax, DECODE, pts[0][1], [x for x, _ in pts], [r["gbps"] for _, r in pts],
                         f"v{version:g} {vname} {dtype}{device_suffix(pts[0][1], home)}", line_style(pts[0][1], home))
        if here:
            probed = [r for r in here if r["device"] == home] or here  # the main device's rate
            ax.axhline(max(r["bw_gbps"] for r in probed), color="#777777", linestyle=":", lw=1.5,
                       label=f"copy rate (probed){device_suffix(probed[0], home)}")
            draw_official(ax, official, here, home, form)
            log_axes(ax, sorted({r["batch"] for r in here}), "batch")
        ax.set_title(title)
    axes[0].set_ylabel("GB/s (state read + written and the token's tensors, log scale)")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    save(fig, titled("07: one decode step at S4, L2 flushed", note), rows, name)


def draw_loop(rows, home, name, note):
    """A row of panels per form, launched one by one (left) and in a CUDA graph
    (right) on one y axis: a version's line appears once in each panel."""
    fig, axes = plt.subplots(2, 2, figsize=(13, 10.5), sharey="row")
    fig.subplots_adjust(top=1 - 1.0 / fig.get_figheight(), hspace=0.35)  # an inch for the title
    measured = []
    for row, (form, title) in zip(axes, FORMS):
        here = [r for r in rows if decode_form(r) == form]
        for ax, graph in zip(row, (False, True)):
            for version, vname, dtype in versions(here):
                pts = series([r for r in here if r["flags"].endswith("+graph") == graph], version, "batch")
                if pts:
                    plot_version(ax, DECODE, pts[0][1], [x for x, _ in pts], [r["ms_median"] for _, r in pts],
                                 f"v{version:g} {vname} {dtype}{device_suffix(pts[0][1], home)}",
                                 line_style(pts[0][1], home))
                    measured += [r for _, r in pts]
            if here:
                log_axes(ax, sorted({r["batch"] for r in here}), "batch")
            ax.set_title(f"{title}\n{'in a CUDA graph' if graph else 'launched one by one'}", fontsize=10)
        row[0].set_ylabel("ms per step (median, log scale)")
        row[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    save(fig, titled(f"07: the token loop, {LOOP_STEPS} steps in place, state hot in L2", note), measured, name)


def draw_tokens(rows, home, name, note):
    fig, axes = two_panels()
    measured = []
    for ax, (form, title) in zip(axes, FORMS):
        here = [r for r in rows if decode_form(r) == form]
        for version, vname, dtype in versions(here):
            pts = series(here, version, "seqlen")
            if len(pts) > 1:
                plot_version(ax, DECODE, pts[0][1], [x for x, _ in pts], [r["ms_median"] / x for x, r in pts],
                             f"v{version:g} {vname} {dtype}{device_suffix(pts[0][1], home)}",
                             line_style(pts[0][1], home))
                measured += [r for _, r in pts]
        if here:
            log_axes(ax, sorted({r["seqlen"] for r in here}), "T (tokens per launch)")
        ax.set_title(f"{title}, batch 8")
    axes[0].set_ylabel("ms per token (median, L2 flushed, log scale)")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    save(fig, titled("07: T tokens per launch, the state read and written once", note), measured, name)


def tokens_line(rows, r):
    """Whether r's version has more than one T at batch 8 in r's form: a line of the tokens figure."""
    return len({o["seqlen"] for o in rows if o["version"] == r["version"] and decode_form(o) == decode_form(r)
                and not is_loop(o) and o["batch"] == 8}) > 1


def state_dtype(r):
    """How a row's version stores the state: its dtype says so where it is 8-bit, its name where 16-bit."""
    if r["dtype"] in ("int8", "e4m3"):
        return r["dtype"]
    return "bf16" if "state_bf16" in r["name"] else "fp16" if "state16" in r["name"] else "fp32"


def fastest_per_state(rows, at):
    """The rows of the fastest version of each state dtype, fastest at the row picked by at."""
    best = {}
    for r in rows:
        if at(r) and (state_dtype(r) not in best or r["ms_median"] < best[state_dtype(r)]["ms_median"]):
            best[state_dtype(r)] = r
    keep = {(b["version"], b["device"]) for b in best.values()}
    return [r for r in rows if (r["version"], r["device"]) in keep]


def draw_slots_drafts(rows, home):
    """rows: every device's; each series from one device (one_device by version and batch).
    Per state dtype, the fastest version: at T 8 for the draft tokens, in the pool for the slots."""
    drafts = [r for r in rows if decode_form(r) == "m2" and "+states" in r["flags"]]
    pool = [r for r in rows if "+slots" in r["flags"] and r["flags"].endswith("+graph") and r["batch"] == 64]
    if not drafts and not pool:
        return
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.6))
    fig.subplots_adjust(top=0.84, wspace=0.3)
    measured = []
    graph_step = {(decode_form(r), r["version"], r["batch"], r["device"]): r for r in rows
                  if r["flags"].endswith("+loop+graph") and "+slots" not in r["flags"]}
    drafts = one_device(drafts, home, key=lambda r: (r["version"], r["batch"]))
    home = main_device(drafts + pool) or home  # a label names its device where it is not this one
    for ax, batch in zip(axes[:2], (1, 64)):
        here = fastest_per_state([r for r in drafts if r["batch"] == batch], lambda r: r["seqlen"] == 8)
        for version, name, dtype in versions(here):
            pts = series(here, version, "seqlen")
            look = style(DECODE, version)
            suffix = device_suffix(pts[0][1], home)
            ax.plot([x for x, _ in pts], [r["ms_median"] for _, r in pts], **look,
                    label=f"v{version:g} {name} ({state_dtype(pts[0][1])} state): one launch{suffix}")
            step = graph_step.get(("m2", version, batch, pts[0][1]["device"]))
            if step:  # the version's own yardstick: its color and marker, hollow, dashed
                ax.plot([x for x, _ in pts], [x * step["ms_median"] for x, _ in pts], color=look["color"],
                        marker=look["marker"], mfc="none", linestyle="--", lw=1.2,
                        label=f"v{version:g}: T single steps in a CUDA graph{suffix}")
                measured.append(step)
            measured += [r for _, r in pts]
        if here:
            log_axes(ax, sorted({r["seqlen"] for r in here}), "T (draft tokens)")
        ax.set_title(f"speculative decoding, Mamba-2, batch {batch}")
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.13), fontsize=8, frameon=False)  # below: clear of the lines
    axes[0].set_ylabel("ms (median, log scale)")
    ax = axes[2]
    bars = []
    for form, label in (("m2", "Mamba-2"), ("m1", "Mamba-1")):
        here = fastest_per_state(one_device([r for r in pool if decode_form(r) == form], home), lambda r: True)
        for version, name, dtype in versions(here):
            slots = fastest([r for r in here if r["version"] == version])
            own = graph_step.get((form, version, 64, slots["device"])) if slots else None
            if slots and own:
                bars.append((f"{label}\nv{version:g}, {state_dtype(slots)}{device_suffix(slots, home)}", own, slots))
    for k, (label, own, slots) in enumerate(bars):
        ax.bar(k - 0.2, own["ms_median"], 0.4, color=colors()[0], label="one state a row" if k == 0 else None)
        ax.bar(k + 0.2, slots["ms_median"], 0.4, color=colors()[1],
               label="a pool of 1024 slots, 43 rows named, 21 padding" if k == 0 else None)
        measured += [own, slots]
    ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=8)
    ax.set_ylabel("ms per step at batch 64 (median, CUDA graph, in place)")
    ax.set_title("state slots, batch 64")
    if bars:
        ax.set_ylim(0, 1.3 * max(max(own["ms_median"], slots["ms_median"]) for _, own, slots in bars))
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    save(fig, "07: a server's decode (Mamba-2: h 32, p 64, N 128, no z; Mamba-1: d 2048, N 16, z), "
              "the fastest version of each state dtype", measured, f"{DECODE}_slots_drafts.png")


def draw_state_vs_kv():
    rows = read_text_rows(STATE_VS_KV)
    if rows is None:
        print(f"decode: no plots/data/{STATE_VS_KV}.csv; state-vs-KV figure not drawn")
        return
    rows = [{k: float(v) for k, v in r.items()} for r in rows]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    ls = [r["seqlen"] for r in rows]
    width = rows[0]["width"]
    ax.plot(ls, [r["kv_cache_mib"] for r in rows], color="#333333", marker="o", lw=2,
            label=f"transformer KV cache, width {width:g}, fp16 K and V")
    ax.plot(ls, [r["mamba2_state_mib"] for r in rows], color=colors()[0], marker="s", lw=2,
            label="Mamba-2 state, h 32, p 64, N 128, fp32")
    ax.plot(ls, [r["mamba1_state_mib"] for r in rows], color=colors()[1], marker="D", lw=2,
            label="Mamba-1 state, d 2048, N 16, fp32")
    log_axes(ax, ls, "L (tokens so far)")
    ax.set_xticks(ls, [f"{x / 1024:g}k" for x in ls])
    ax.set_ylabel("MiB per sequence and layer (log scale)")
    ax.legend(loc="upper left", fontsize=9, frameon=False)
    ax.set_title("What one sequence keeps per layer between tokens\n"
                 f"computed by build/{DECODE} (plots/data/{STATE_VS_KV}.csv)", fontsize=11)
    write(fig, f"{DECODE}_state_vs_kv.png")


def draw_state_precision():
    """y's error against the token index for each way of storing the state
    (plots/data/<STATE_PRECISION>.csv, windows of 64 tokens)."""
    rows = read_text_rows(STATE_PRECISION)
    if rows is None:
        print(f"decode: no plots/data/{STATE_PRECISION}.csv; state precision figure not drawn")
        return
    fig, ax = plt.subplots(figsize=(10, 5.5))
    stores = list(dict.fromkeys(r["state"] for r in rows))
    palette = colors()
    for i, name in enumerate(stores):
        mine = [r for r in rows if r["state"] == name]
        ax.plot([float(r["token_to"]) for r in mine], [float(r["y_rel_l2"]) for r in mine],
                color=palette[i % len(palette)], lw=1.8, linestyle="--" if "stochastic" in name else "-",
                label=f"{name} ({float(mine[0]['bytes_per_value']):.2f} bytes a value)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("token (the end of each window: 1, 2, 4, ..., 64, then every 64)")
    ax.set_ylabel("y rel. L2 error over the window (log scale)")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=9, frameon=False)
    ax.set_title("A Mamba-2 decode state stored between tokens: y's error against the fp64 oracle\n"
                 f"computed by build/{DECODE} on the CPU (plots/data/{STATE_PRECISION}.csv)", fontsize=11)
    write(fig, f"{DECODE}_state_precision.png")


def main():
    chapters, official = load_data()
    rows = timed(chapters.get(DECODE, []))
    if not rows:
        print(f"decode: no rows in plots/data/{DECODE}.csv; no chapter 07 figures")
        return 0
    home = main_device(rows)
    draw_slots_drafts(rows, home)
    rows = one_device(rows, home)
    main_and_all(DECODE, "bandwidth", [r for r in rows if is_s4(r)],
                 lambda picked, name, note: draw_bandwidth(picked, official, home, name, note))
    main_and_all(DECODE, "loop", [r for r in rows if is_loop(r) and "+slots" not in r["flags"]],  # slots: their own figure
                 lambda picked, name, note: draw_loop(picked, home, name, note))
    main_and_all(DECODE, "tokens", [r for r in rows if not is_loop(r) and r["batch"] == 8 and tokens_line(rows, r)],
                 lambda picked, name, note: draw_tokens(picked, home, name, note))
    draw_state_vs_kv()
    draw_state_precision()
    return 0


if __name__ == "__main__":
    sys.exit(main())
