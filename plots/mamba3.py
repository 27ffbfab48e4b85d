#!/usr/bin/env python3
"""The figures of chapter 08 (Mamba-3 SISO), drawn from plots/data:

  plots/08_mamba3_prefill.png      ms vs L at S6 (L 2048 and 8192), batch 1 and 8:
                                   one line per GPU version, and the official
                                   mamba3_siso_combined with z (bf16) timed in the
                                   same device call, dashed
  plots/08_mamba3_step.png         ms vs batch (1, 64, 256) of S6's decode step:
                                   one line per GPU version, the copy floor of
                                   an fp32 and a 16-bit state dotted, and the
                                   official mamba3_siso_step (fp32 state) timed
                                   in the same device call, dashed
  plots/08_mamba3_angle_drift.png  the angle state θ summed in fp32 four ways:
                                   |θ − θ_fp64| against the steps summed
                                   (plots/data/08_mamba3_angle_drift.csv, CPU)
  plots/08_mamba3_all_prefill.png  where the prefill figure keeps to the landmark
                                   versions (plots/landmarks.py): its appendix,
                                   every version

S6: h 32, g 1, p 64, N 128, z and D (sets.is_s6); the shape in the title is read
from the rows. The official line comes from the official file of the same
device call as the drawn rows (official_<device>_..._<commit>.csv, see
sets.same_call), on the device most of the rows were timed on; without one the
figure is drawn without it. Each version's line is drawn from one device (see
sets.one_device).
Needs matplotlib: python3 -m pip install matplotlib (or Debian's
python3-matplotlib). Usage: python3 plots/mamba3.py
"""
import sys

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ssd import MARKERS, colors, log_axes, main_and_all, plot_versions, save, titled, versions, write  # noqa: E402
from tablelib.data import SOURCE, load_data, number, read_text_rows, short_device  # noqa: E402
from tablelib.ops import chapter_of  # noqa: E402
from tablelib.ops.mamba3 import ANGLE_DRIFT  # noqa: E402
from tablelib.ops.mamba3 import fp32_state  # noqa: E402
from tablelib.sets import OFFICIAL_NAMES, is_s6, is_s6_step, main_device, one_device, same_call, timed  # noqa: E402

MAMBA3 = chapter_of("mamba3")  # the chapter this script draws (its op's first)
OFFICIAL_FWD = "official_triton_mamba3_combined_z"  # the official prefill with z, as S6's rows
OFFICIAL_STEP = "official_triton_mamba3_step"       # the official step (fp32 state), as S6's step rows
PREFILL_BATCHES = (1, 8)  # S6's prefill: batch 1 and 8 (a panel each), L 2048 and 8192
PREFILL_LS = (2048, 8192)


def official_prefill(official, rows, home):
    """{(batch, L): official row} of the official prefill with z on home's
    device, timed in the same device call as one of our rows at that point
    (the last such row in file order)."""
    device = short_device(home)
    picked = {}
    for o in official:
        if (o["op"] != "mamba3_siso_fwd" or o["impl"] != OFFICIAL_FWD or o["device"] != device
                or o["ms_median"] is None):
            continue
        if any(same_call(o, r) and r["batch"] == o["batch"] and r["seqlen"] == o["L"] for r in rows):
            picked[(o["batch"], o["L"])] = o
    return picked


def shape_text(rows):
    """S6's shape as the rows give it: 'h 32, p 64, N 128, g 1, chunk 64' (a value
    each where the rows agree, the set of them where they do not)."""
    parts = []
    for key, name in (("heads", "h"), ("headdim", "p"), ("dstate", "N"), ("groups", "g"), ("chunk", "chunk")):
        values = sorted({r[key] for r in rows if r[key] is not None})
        if values:
            parts.append(f"{name} {'/'.join(f'{v:g}' for v in values)}")
    return ", ".join(parts)


def draw_prefill(rows, official, home, name, note):
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    vs = versions(rows)
    sources = set()
    for ax, batch in zip(axes, PREFILL_BATCHES):
        here = [r for r in rows if r["batch"] == batch]
        plot_versions(ax, MAMBA3, here, vs, home, widen=True)
        ref = sorted(((L, o) for (b, L), o in official.items() if b == batch), key=lambda p: p[0])
        if ref:
            dtypes = sorted({o["dtype"] for _, o in ref})
            ax.plot([L for L, _ in ref], [o["ms_median"] for _, o in ref], color="black", linestyle="--",
                    marker=MARKERS.get(dtypes[0], "^"), mfc="none", lw=1.5,
                    label=f"official {OFFICIAL_NAMES[OFFICIAL_FWD].replace('`', '')}, {'/'.join(dtypes)} "
                          f"({short_device(home)}, same call)")
            sources |= {o[SOURCE] for _, o in ref}
        log_axes(ax, sorted({r["seqlen"] for r in here}) or [1], "L (sequence length)")
        ax.set_title(f"batch {batch:g}")
    axes[0].set_ylabel("ms (median, L2 flushed, log scale)")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    title = f"08: S6 prefill time vs L ({shape_text(rows)}, z + D)"
    if sources:
        title += f"\nofficial kernel: plots/data/{', '.join(sorted(sources))}"
    save(fig, titled(title, note), rows, name)


def draw_step(rows, official, home):
    """S6's step, ms against the batch: a line per version, the copy floor of
    each state width, and the official step of the same device call as our
    fp32-state rows."""
    fig, ax = plt.subplots(figsize=(10, 5.5))
    plot_versions(ax, MAMBA3, rows, versions(rows), home, x="batch")
    device = short_device(home)
    for label, style, mine in (("fp32 state", ":", [r for r in rows if fp32_state(r) and r["dtype"] == "fp32"]),
                               ("16-bit state", "-.", [r for r in rows if not fp32_state(r)])):
        floor = {}
        for r in mine:
            if r["floor_ms"]:
                floor[r["batch"]] = min(floor.get(r["batch"], r["floor_ms"]), r["floor_ms"])
        if floor:
            ax.plot(sorted(floor), [floor[b] for b in sorted(floor)], color="grey", linestyle=style, lw=1.5,
                    label=f"copy floor, {label}")
    ref = {o["batch"]: o for o in official
           if o["op"] == "mamba3_siso_step" and o["impl"] == OFFICIAL_STEP and o["device"] == device
           and o["ms_median"] is not None
           and any(same_call(o, r) and r["batch"] == o["batch"] and fp32_state(r) for r in rows)}
    sources = sorted({o[SOURCE] for o in ref.values()})
    if ref:
        ax.plot(sorted(ref), [ref[b]["ms_median"] for b in sorted(ref)], color="black", linestyle="--", marker="^",
                mfc="none", lw=1.5, label=f"official {OFFICIAL_NAMES[OFFICIAL_STEP].replace('`', '')}, fp32 state "
                                          f"({device}, same call)")
    log_axes(ax, sorted({r["batch"] for r in rows}), "batch (sequences, one token each)")
    ax.set_ylabel("ms a step (median, L2 flushed, log scale)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    title = f"08: S6's decode step vs batch ({shape_text(rows)}, S 32, D, the four states in)"
    if sources:
        title += f"\nofficial kernel: plots/data/{', '.join(sources)}"
    save(fig, title, rows, f"{MAMBA3}_step.png")


def draw_angle_drift():
    """|θ − θ_fp64| against the steps summed, a line per way of summing θ in
    fp32 (plots/data/<ANGLE_DRIFT>.csv, computed on the CPU)."""
    rows = read_text_rows(ANGLE_DRIFT)
    if rows is None:
        print(f"mamba3: no plots/data/{ANGLE_DRIFT}.csv; angle drift figure not drawn")
        return
    rows = [r for r in rows if number(r["steps"]) and number(r["angle_error_rad"]) and number(r["angle_error_rad"]) > 0]
    if not rows:
        print(f"mamba3: no positive errors in plots/data/{ANGLE_DRIFT}.csv; angle drift figure not drawn")
        return
    fig, ax = plt.subplots(figsize=(9, 5.5))
    palette = colors()
    markers = ("o", "s", "D", "^", "v", "p", "X", "*")
    for i, way in enumerate(dict.fromkeys(r["way"] for r in rows)):
        mine = sorted((number(r["steps"]), number(r["angle_error_rad"])) for r in rows if r["way"] == way)
        ax.plot(*zip(*mine), color=palette[i % len(palette)], marker=markers[i % len(markers)], lw=2, label=way)
    log_axes(ax, sorted({number(r["steps"]) for r in rows}), "steps summed")
    ax.set_ylabel("largest |θ − θ_fp64| over the angles, radians (log scale)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False, title="θ summed in fp32 as")
    ax.set_title("08: the angle state θ summed in fp32, against the same sum in fp64\n"
                 f"computed by build/{MAMBA3} on the CPU (plots/data/{ANGLE_DRIFT}.csv, {MAMBA3}/lessons.c)",
                 fontsize=11)
    write(fig, f"{MAMBA3}_angle_drift.png")


def main():
    chapters, official = load_data()
    rows = [r for r in timed(chapters.get(MAMBA3, [])) if is_s6(r) and r["batch"] in PREFILL_BATCHES
            and r["seqlen"] in PREFILL_LS]
    if not rows:
        print(f"mamba3: no S6 rows in plots/data/{MAMBA3}.csv; prefill figure not drawn")
    else:
        home = main_device(rows)
        rows = one_device(rows, home)
        ref = official_prefill(official, [r for r in rows if r["device"] == home], home)
        if not ref:
            print(f"mamba3: no official {OFFICIAL_FWD} rows of the same device call as plots/data/{MAMBA3}.csv "
                  "(official_<device>_..._<commit>.csv); prefill figure drawn without them")
        main_and_all(MAMBA3, "prefill", rows, lambda picked, name, note: draw_prefill(picked, ref, home, name, note))
    steps = [r for r in timed(chapters.get(MAMBA3, [])) if is_s6_step(r) and r["version"] >= 7]
    if not steps:
        print(f"mamba3: no S6 step rows of versions 7 on in plots/data/{MAMBA3}.csv; step figure not drawn")
    else:
        home = main_device(steps)
        draw_step(one_device(steps, home), official, home)
    draw_angle_drift()
    return 0


if __name__ == "__main__":
    sys.exit(main())
