"""Mamba-3 SISO (OP_MAMBA3, chapter 08): S6, its prefill and its step."""
import re

from ..data import CALL_COMMIT, SOURCE, number, read_text_rows, short_device
from ..markdown import label, markdown_table, sig
from ..sets import at, fastest, is_s6, is_s6_step, same_call

NAME = "mamba3"
HEADLINE = "S6 b 8, L 8192"


def summary_shapes():
    return ([(f"S6 b {batch}, L {seqlen}", at(is_s6, batch=batch, seqlen=seqlen))
             for batch in (1, 8) for seqlen in (2048, 8192)]
            + [(f"S6 step, batch {batch}", at(is_s6_step, batch=batch)) for batch in (1, 64, 256)])


def row_groups(rows):
    return [("S6", [r for r in rows if is_s6(r)]), ("S6 step", [r for r in rows if is_s6_step(r)]),
            ("Other shapes", [r for r in rows if not is_s6(r) and not is_s6_step(r)])]


def time_targets(chapter):
    return [("S6 b 8, L 8192, bf16, ≤ 0.45 ms", at(is_s6, batch=8, seqlen=8192), ("bf16",), 0.45),
            ("S6 b 8, L 2048, bf16, ≤ 0.12 ms", at(is_s6, batch=8, seqlen=2048), ("bf16",), 0.12),
            ("S6 b 1, L 8192, bf16, ≤ 0.10 ms", at(is_s6, batch=1, seqlen=8192), ("bf16",), 0.10),
            ("S6 b 1, L 2048, bf16, ≤ 0.04 ms", at(is_s6, batch=1, seqlen=2048), ("bf16",), 0.04),
            ("S6 step, fp32 state, batch 64, ≤ 0.040 ms", at(is_s6_step, batch=64), ("fp32",), 0.040),
            ("S6 step, fp32 state, batch 256, ≤ 1.15× its copy floor", at(is_s6_step, batch=256), ("fp32",),
             lambda r: 1.15 * r["floor_ms"]),
            ("S6 step, batch 1, in a CUDA graph, ≤ 0.004 ms",
             lambda r: is_s6_step({**r, "flags": r["flags"].replace("+loop+graph", "")}) and r["batch"] == 1
             and r["flags"].endswith("+loop+graph"), ("fp32",), 0.004)]


def serving(chapter):
    return True


def official_targets(chapter):
    return [("never slower than the official kernel (S6, bf16)", is_s6, ("bf16",)),
            ("never slower than the official step (fp32 state)", is_s6_step, ("fp32",))]


def target_notes(chapter):
    return ["The official Mamba-3 kernels are bf16: a prefill comparison takes this chapter's bf16 version "
            "timed in the same device call. The official step keeps its state in fp32 whatever its I/O, as "
            "version 7 does, so a step comparison takes this chapter's fastest step of any I/O dtype with an fp32 state. The "
            "official kernels' times: the table under Results."]


def serving_rectangle(chapter):
    """The serving mix's tokens as a rectangle: S6 b 8, L 8192 (65,536 tokens)."""
    return "S6 b 8, L 8192", at(is_s6, batch=8, seqlen=8192)


def fp32_state(r):
    """Whether a row's version keeps the SSM state in fp32 (versions 8 and 9 keep it in 16 bits)."""
    return "state16" not in r["name"] and "state_bf16" not in r["name"]


def official_section(chapter, chapters, official):
    """The text between 08's official markers: the official kernels' times on
    an H200 (bf16), beside this chapter's fastest version of the same device
    call (bf16 for the prefill; for the step any I/O dtype with an fp32
    state, as the official step keeps), and their ratio."""
    rows = [r for r in chapters.get(chapter, []) if r["ms_median"] is not None]
    body, sources, ours, best = [], set(), set(), {}  # best: shape -> (our row, official row), the call of our fastest
    official_best = {}  # shape -> the official kernel's best time of every stored run on an H200
    for o in official:
        if o["op"] not in ("mamba3_siso_fwd", "mamba3_siso_step") or o["impl"].endswith("combined"):
            continue
        step = o["op"] == "mamba3_siso_step"
        shape = f"S6 step, batch {o['batch']:g}" if step else f"S6 b {o['batch']:g}, L {o['L']:g}"
        if short_device(o["device"]) == "H200":
            official_best[shape] = min(official_best.get(shape, o["ms_median"]), o["ms_median"])
        pick = at(is_s6_step, batch=o["batch"]) if step else at(is_s6, batch=o["batch"], seqlen=o["L"])
        mine = fastest([r for r in rows if pick(r) and short_device(r["device"]) == o["device"] and same_call(o, r)
                        and (fp32_state(r) if step else r["dtype"] == "bf16")])
        if mine is None:
            continue
        if shape in best and best[shape][0]["ms_median"] <= mine["ms_median"]:
            continue  # a call with a faster version of ours at this shape
        best[shape] = (mine, o)
    for shape, (mine, o) in best.items():
        top = official_best.get(shape, o["ms_median"])
        body.append([shape, sig(o["ms_median"]), f"{sig(mine['ms_median'])} ({label(mine)} {mine['dtype']})",
                     sig(o["ms_median"] / mine["ms_median"]), sig(top), sig(top / mine["ms_median"])])
        sources.add(o[SOURCE])
        ours.add(mine["commit"])
    if not body:
        return ("The official Mamba-3 kernels were not timed in the same device call as this chapter's bf16 "
                "versions yet (`make official` with OFFICIAL_OPS=mamba3_siso_fwd,mamba3_siso_step).")
    calls = sorted(m.group(1) for m in (CALL_COMMIT.search(f) for f in sources) if m)
    body.sort(key=lambda row: (not row[0].startswith("S6 b"), [int(x) for x in re.findall(r"\d+", row[0])]))
    lines = markdown_table(["shape", "official ms", "this chapter's fastest, ms", "× official", "official best ms",
                            "× official best"], "lrrrrr", body)
    lines += ["", f"Source: {', '.join(f'`plots/data/{f}`' for f in sorted(sources))} (the official kernels, "
              f"timed in the device call at commit {', '.join(calls)}) and `plots/data/{chapter}.csv` (commit "
              f"{', '.join(sorted(ours))}): each row from the same call as its official time, the call with this "
              "chapter's fastest version at the shape. The prefill rows are "
              "bf16 both, with z; the step rows have no z, and both steps keep an fp32 state (the official "
              "step's I/O is bf16). × official: that call's official time over ours (above 1: ours is faster); "
              "× official best: the official kernel's best time of every stored run on an H200 (RESULTS.md lists "
              "the runs) over ours, as the targets take it."]
    return "\n".join(lines)


ANGLE_DRIFT = "08_mamba3_angle_drift"  # the angle state summed four ways in fp32 (CPU), this op's table


def angles_section(chapter, chapters, official):
    """The text between 08's angles markers: plots/data/08_mamba3_angle_drift.csv."""
    del chapter, chapters, official  # a CPU computation of its own
    rows = read_text_rows(ANGLE_DRIFT)
    if rows is None:
        return f"No plots/data/{ANGLE_DRIFT}.csv yet (`make bench` writes it)."
    steps = list(dict.fromkeys(r["steps"] for r in rows))
    body = [[way] + [f"{number(r['angle_error_rad']):.1e}" for r in rows if r["way"] == way]
            for way in dict.fromkeys(r["way"] for r in rows)]
    lines = markdown_table(["θ summed in fp32 as"] + [f"{int(s):,} steps" for s in steps], "l" + "r" * len(steps), body)
    return "\n".join(lines + ["", f"The largest |θ − θ_fp64| in radians over the lesson's angles; computed on the CPU "
                                   f"(`plots/data/{ANGLE_DRIFT}.csv`, `08_mamba3/lessons.c`)."])


EXTRA_BLOCKS = {"official": official_section, "angles": angles_section}
