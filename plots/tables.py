#!/usr/bin/env python3
"""Rewrites the results tables of the README files from plots/data/*.csv.

<chapter>/README.md, between the lines <!-- results:begin --> and
<!-- results:end -->: every row of plots/data/<chapter>.csv.
README.md, between <!-- summary:begin --> and <!-- summary:end -->: each
chapter's fastest version at S1 (d 2048, N 32, L 512) batch 1 and 16, its
speedup over chapter 01's GPU eager baseline, and the official times when
plots/data holds them. README.md, between <!-- ssd:begin --> and
<!-- ssd:end -->: the fastest SSD version at S3's target shapes against the
official mamba_chunk_scan_combined. 06_bidirectional/README.md between
<!-- targets:begin --> and <!-- targets:end -->, and README.md between
<!-- bidir:begin --> and <!-- bidir:end -->: the bidirectional S3 rows, fused
against "twice" and the causal 05, with the chapter's targets. 05_ssd_mamba2/README.md, between
<!-- crossover:begin --> and <!-- crossover:end -->: 03's scan against 05 on
one problem at N 16, 64, 128 (plots/data/05_crossover_03.csv). README.md,
between <!-- decode:begin --> and <!-- decode:end -->: the fastest decode
step at S4 against the official selective_state_update. A README
without both markers is left as it is, and a second run changes nothing.
Standard library only; summary.py and ssd.py reuse the readers below.

Usage: python3 plots/tables.py   (from anywhere; paths are relative to the repo)
"""
import csv
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "plots" / "data"

CHAPTER_COLUMNS = (
    "chapter,version,name,dtype,batch,dim,heads,headdim,groups,dstate,seqlen,chunk,"
    "flags,ms_median,ms_min,bytes,exps,flops,gbps,bw_gbps,exp_rate,floor_ms,"
    "time_over_floor,peak_mib,workspace_mib,rel_l2_err,device,commit").split(",")
OFFICIAL_COLUMNS = ("op,impl,dtype,batch,dim_or_heads,N,L,ms_median,peak_MiB,"
                    "bytes_min,GBps_effective").split(",")
TEXT_COLUMNS = {"chapter", "name", "dtype", "flags", "device", "commit", "op", "impl"}
# What makes two rows the same measurement: a later row replaces an earlier one.
CONFIG_COLUMNS = ("version", "name", "dtype", "batch", "dim", "heads", "headdim",
                  "groups", "dstate", "seqlen", "chunk", "flags")

OFFICIAL_NAMES = {  # impl -> the official function it times
    "official_cuda_fwd": "`selective_scan_fn` (CUDA)",
    "official_eager_ref": "`selective_scan_ref` (eager)",
    "official_triton_chunk_scan_combined": "`mamba_chunk_scan_combined` (Triton)",
    "official_eager_ssd_minimal": "`ssd_minimal_discrete` (eager)",
    "official_triton": "`selective_state_update` (Triton)",
}
OFFICIAL_DEVICE = "H200"  # the GPU the official timings were taken on
SOURCE = "_file"  # an official row's file name in plots/data


# ---------------------------------------------------------------- reading

def number(text):
    """The float in text, or None (empty, 'nan', not a number)."""
    try:
        x = float(text)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def read_rows(path, columns):
    """The rows of a CSV whose header holds every name in columns, numbers
    converted; None when the header does not."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or not set(columns) <= set(reader.fieldnames):
            return None
        rows = []
        for raw in reader:
            rows.append({k: (v.strip() if k in TEXT_COLUMNS or v is None else number(v))
                         for k, v in raw.items() if k is not None})
        return rows


def load_data(data_dir=DATA):
    """({chapter: rows}, official rows) from every CSV in data_dir. A chapter
    is a file in the harness's schema, named by its file name; a repeated
    measurement keeps its last row. Official rows come from files in the
    official timings' schema."""
    chapters, official = {}, []
    for path in sorted(Path(data_dir).glob("*.csv")):
        if path.stem in (STATE_VS_KV, STATE_PRECISION, TUNING):  # not chapter rows: decode.py, precision_section
            continue
        rows = read_rows(path, CHAPTER_COLUMNS)
        if rows is not None:
            latest = {}
            for r in rows:
                latest[tuple(r[k] for k in CONFIG_COLUMNS)] = r
            chapters[path.stem] = list(latest.values())
            continue
        rows = read_rows(path, OFFICIAL_COLUMNS)
        if rows is not None:
            official += [dict(r, **{SOURCE: path.name}) for r in rows]
            continue
        print(f"tables: {path}: unknown header, skipped", file=sys.stderr)
    return chapters, official


# ---------------------------------------------------------------- selecting

DEFAULT_FLAGS = "z+D+bias+softplus"  # the benchmark sets' flags, as the harness writes them


def is_s1(r):
    """Benchmark set S1: d 2048, N 32, L 512 (batch 1..16), G 1, default flags."""
    return (r["dim"] == 2048 and r["groups"] == 1 and r["flags"] == DEFAULT_FLAGS
            and r["dstate"] == 32 and r["seqlen"] == 512)


def is_s2(r):
    """Benchmark set S2: d 2048, N 16, L 512..65536 at batch 1 and 8, G 1,
    default flags."""
    return (r["dim"] == 2048 and r["groups"] == 1 and r["flags"] == DEFAULT_FLAGS
            and r["dstate"] == 16)


SSD_FLAGS = "D+bias+softplus"  # S3's flags: no z
CROSSOVER = "05_crossover_03"  # plots/data file of 03 run at 05's crossover shapes


def is_s3(r, flags=SSD_FLAGS):
    """Benchmark set S3: h 32, p 64, N 128, g 1, chunk 256, D + dt_bias +
    softplus, no z (L 512..16384, batch 1 and 8)."""
    return (r["heads"] == 32 and r["headdim"] == 64 and r["dstate"] == 128
            and r["groups"] == 1 and r["chunk"] == 256 and r["flags"] == flags)


def is_s3_z(r):
    """S3 with z gating."""
    return is_s3(r, "z+" + SSD_FLAGS)


BIDIR = "06_bidirectional"


def is_s3_hydra(r):
    """S3 in the Hydra form of the bidirectional scan (chapter 06)."""
    return is_s3(r, SSD_FLAGS + "+hydra")


def is_crossover(r):
    """The crossover problem: d = h·p = 2048, batch 8, L 4096, no z, any N
    (05 as h 32, p 64, chunk 256; 03 on the Mamba-1 layout)."""
    return (r["dim"] == 2048 and r["batch"] == 8 and r["seqlen"] == 4096
            and r["groups"] == 1 and r["flags"] == SSD_FLAGS
            and (r["heads"] in (0, None) or (r["heads"] == 32 and r["chunk"] == 256)))


DECODE = "07_decode_kernel"
STATE_VS_KV = "07_decode_kernel_state_vs_kv"  # plots/data file of 07's computed state-vs-KV-cache table
STATE_PRECISION = "07_decode_kernel_state_precision"  # 07's accuracy of a 16-bit state over a long decode (CPU)
TUNING = "04_fp16_half2_tuning"  # 04's plan and tile sweeps (versions 5 and 8), read by people, not tables


def decode_form(r):
    """'m2' (heads > 0) or 'm1'."""
    return "m2" if r["heads"] else "m1"


def is_s4(r):
    """Benchmark set S4, one token per launch, L2 flushed: Mamba-2 h 32, p 64,
    N 128, g 1, no z; Mamba-1 d 2048, N 16, z given (batch 1..256)."""
    if r["seqlen"] != 1 or "loop" in r["flags"]:
        return False
    if decode_form(r) == "m2":
        return (r["heads"] == 32 and r["headdim"] == 64 and r["dstate"] == 128
                and r["groups"] == 1 and r["flags"] == SSD_FLAGS)
    return r["dim"] == 2048 and r["dstate"] == 16 and r["flags"] == DEFAULT_FLAGS


def is_loop(r):
    """The token loop: one token per step, in place, state hot in L2."""
    return "+loop" in r["flags"]


def official_decode(official):
    """{(form, dtype, batch): ms} of the official Triton decode step at S4."""
    return {("m1" if r["op"] == "decode_mamba1" else "m2", r["dtype"], r["batch"]): r["ms_median"]
            for r in official
            if r["op"] in ("decode_mamba1", "decode_mamba2") and r["impl"] == "official_triton"
            and r["ms_median"] is not None}


def official_ssd(official):
    """{(impl, dtype, batch, L): ms} of the official SSD forward at S3."""
    return {(r["impl"], r["dtype"], r["batch"], r["L"]): r["ms_median"]
            for r in official
            if r["op"] == "ssd_fwd" and r["impl"] in OFFICIAL_NAMES
            and r["dim_or_heads"] == 32 and r["N"] == 128 and r["ms_median"] is not None}


def fastest(rows):
    """The row with the smallest median time, or None."""
    rows = timed(rows)
    return min(rows, key=lambda r: r["ms_median"]) if rows else None


def timed(rows):
    return [r for r in rows if r["ms_median"] is not None and r["ms_median"] > 0]


def label(r):
    return f"v{r['version']:g} {r['name']}"


def best_by_batch(rows):
    """{(dtype, batch): fastest S1 row}."""
    best = {}
    for r in timed(rows):
        if is_s1(r):
            key = (r["dtype"], r["batch"])
            if key not in best or r["ms_median"] < best[key]["ms_median"]:
                best[key] = r
    return best


def eager_baseline(chapters):
    """{batch: S1 row} of chapter 01's GPU eager baseline (the 01 version whose
    name contains "eager"; the lowest-numbered one if several do), or {}."""
    for chapter in sorted(chapters):
        if chapter.startswith("01_"):
            rows = [r for r in timed(chapters[chapter]) if is_s1(r) and "eager" in r["name"]]
            if rows:
                first = min(r["version"] for r in rows)
                return {r["batch"]: r for r in rows if r["version"] == first}
    return {}


def official_s1(official):
    """{(impl, dtype, batch): ms, peak MiB} of the official Mamba-1 scan at S1."""
    return {(r["impl"], r["dtype"], r["batch"]): (r["ms_median"], r["peak_MiB"])
            for r in official
            if r["op"] == "mamba1_scan_fwd" and r["impl"] in OFFICIAL_NAMES
            and r["dim_or_heads"] == 2048 and r["N"] == 32 and r["L"] == 512
            and r["ms_median"] is not None}


def devices_and_commits(rows):
    devices = list(dict.fromkeys(r["device"] for r in rows if r["device"]))
    commits = list(dict.fromkeys(r["commit"] for r in rows if r["commit"]))
    return devices, commits


# ---------------------------------------------------------------- formatting

def sig(x, digits=3):
    """x to `digits` significant digits, never in exponent form; '—' if None."""
    if x is None:
        return "—"
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


def mib(x):
    return "—" if x is None else f"{x:.1f}"


def integer(x):
    return "—" if x is None else f"{x:g}"


def markdown_table(header, align, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def provenance(rows, source):
    """Where the rows come from, and what their floor means."""
    devices, commits = devices_and_commits(rows)
    text = (f"Measured on {', '.join(devices) or 'an unrecorded device'}, "
            f"commit{'s' if len(commits) > 1 else ''} {', '.join(commits) or 'unrecorded'} "
            f"(`{source}`). floor ms = max(bytes / copy rate, exps / exp2 rate, "
            f"FLOPs / matrix rate), with the rates the run probed.")
    if any(r["time_over_floor"] is not None and r["time_over_floor"] < 1 for r in rows):
        text += (" A time/floor below 1 beats the exp2 (MUFU) floor: some of that "
                 "version's exponentials are computed off the MUFU.")
    return text


# ---------------------------------------------------------------- chapter tables

SHAPE_COLUMNS = (  # (column, how the shape line names it)
    ("dim", "d"), ("heads", "heads"), ("headdim", "headdim"), ("groups", "groups"),
    ("chunk", "chunk"), ("dstate", "N"), ("seqlen", "L"), ("flags", "flags"))


def shape_line(rows, seq="L"):
    """The configuration columns every row shares, e.g. 'd 2048, N 32, L 512'
    (seq names the seqlen column)."""
    parts = []
    for col, name in SHAPE_COLUMNS:
        name = seq if col == "seqlen" else name
        values = {r[col] for r in rows}
        if len(values) == 1:
            (v,) = values
            if isinstance(v, str) and v:
                parts.append(v)
            elif v and not (col == "groups" and v == 1):
                parts.append(f"{name} {v:g}")
    return ", ".join(parts)


def chapter_rows_table(rows, seq="L"):
    """The table of one group of rows, with a column for any configuration
    value (d, heads, groups, chunk, flags) that differs between its rows;
    seq names the seqlen column (T, tokens per launch, for decode)."""
    varying = [(col, name) for col, name in SHAPE_COLUMNS
               if col not in ("dstate", "seqlen") and len({r[col] for r in rows}) > 1]
    header = (["version", "name", "dtype"] + [name for _, name in varying] +
              ["batch", "N", seq, "ms median", "GB/s", "floor ms", "time/floor",
               "peak MiB", "workspace MiB"])
    align = "rll" + "".join("l" if c == "flags" else "r" for c, _ in varying) + "rrrrrrrrr"
    rows = sorted(rows, key=lambda r: (
        r["version"] or 0, r["dtype"], *[str(r[c]) for c, _ in varying],
        r["dstate"] or 0, r["batch"] or 0, r["seqlen"] or 0))
    body = [[integer(r["version"]), r["name"], r["dtype"]] +
            [r[c] if c == "flags" else integer(r[c]) for c, _ in varying] +
            [integer(r["batch"]), integer(r["dstate"]), integer(r["seqlen"]),
             sig(r["ms_median"]), sig(r["gbps"]), sig(r["floor_ms"]),
             sig(r["time_over_floor"]), mib(r["peak_mib"]), mib(r["workspace_mib"])]
            for r in rows]
    return markdown_table(header, align, body)


def chapter_section(chapter, rows, official):
    """The text between a chapter README's results markers: S1 rows first,
    then S2 and any other shapes, each further group folded. An SSD chapter
    starts with its fastest versions against the official times, then S3, S3
    with z and the crossover shapes."""
    if any(r["chapter"] == DECODE for r in rows):
        groups = []
        for form, name in (("m2", "Mamba-2"), ("m1", "Mamba-1")):
            mine = [r for r in rows if decode_form(r) == form]
            groups += [(f"S4 {name}, one token, L2 flushed", [r for r in mine if is_s4(r)]),
                       (f"Token loop {name}, {LOOP_STEPS} steps in place, state hot in L2",
                        [r for r in mine if is_loop(r)]),
                       (f"Tokens per launch {name}",
                        [r for r in mine if not is_loop(r) and r["batch"] == 8]),
                       (f"Other shapes {name}",
                        [r for r in mine if not is_loop(r) and not is_s4(r) and r["batch"] != 8])]
        lines = decode_official_table(rows, official) + [""]
        open_first = False
        seq = "T"
    elif chapter == BIDIR:
        groups = [("S3, default form", [r for r in rows if is_s3(r)]),
                  ("S3, Hydra form", [r for r in rows if is_s3_hydra(r)]),
                  ("Other shapes", [r for r in rows if not is_s3(r) and not is_s3_hydra(r)])]
        lines = []
        open_first = True
        seq = "L"
    elif any(is_s3(r) for r in rows):
        groups = [("S3", [r for r in rows if is_s3(r)]),
                  ("S3 with z", [r for r in rows if is_s3_z(r)]),
                  ("Crossover", [r for r in rows if is_crossover(r) and not is_s3(r)]),
                  ("Other shapes", [r for r in rows if not is_s3(r) and not is_s3_z(r)
                                    and not is_crossover(r)])]
        lines = ssd_official_table(rows, official) + [""]
        open_first = False  # every group folded below the official table
        seq = "L"
    else:
        groups = [("S1", [r for r in rows if is_s1(r)]),
                  ("S2", [r for r in rows if is_s2(r) and not is_s1(r)]),
                  ("Other shapes", [r for r in rows if not is_s1(r) and not is_s2(r)])]
        lines = []
        open_first = True
        seq = "L"
    for name, group in groups:
        if not group:
            continue
        title = f"{name}: {shape_line(group, seq)}" if shape_line(group, seq) else name
        if open_first:
            open_first = False
            lines += [f"**{title}**", ""] + chapter_rows_table(group, seq) + [""]
        else:
            lines += [f"<details><summary>{title} ({len(group)} rows)</summary>", ""]
            lines += chapter_rows_table(group, seq) + ["", "</details>", ""]
    lines.append(provenance(rows, f"plots/data/{chapter}.csv"))
    return "\n".join(lines)


# ---------------------------------------------------------------- summary table

def summary_section(chapters, official):
    """The text between the top-level README's summary markers."""
    eager = eager_baseline(chapters)
    ref = official_s1(official)
    has_official = bool(ref)
    header = ["chapter", "dtype", "batch", "fastest version", "ms", "× 01 eager"]
    align = "llrlrr"
    if has_official:
        header.append("× official CUDA")
        align += "r"
    header.append("time/floor")
    align += "r"

    body, measured = [], []
    for chapter in sorted(chapters):
        best = best_by_batch(chapters[chapter])
        for dtype, batch in sorted(best, key=lambda k: (k[0] != "fp32", k[0], k[1])):
            if batch not in (1, 16):
                continue
            r = best[(dtype, batch)]
            measured.append(r)
            ms = r["ms_median"]
            row = [chapter, dtype, integer(batch), label(r), sig(ms),
                   sig(eager[batch]["ms_median"] / ms) if batch in eager else "—"]
            if has_official:
                o = ref.get(("official_cuda_fwd", dtype, batch))
                row.append(sig(o[0] / ms) if o else "—")
            row.append(sig(r["time_over_floor"]))
            body.append(row)
    if not body:
        return "No S1 rows (d 2048, N 32, L 512) in plots/data yet."
    for (impl, dtype, batch), (ms, _) in sorted(
            ref.items(), key=lambda kv: (kv[0][0], kv[0][1] != "fp32", kv[0][1], kv[0][2])):
        if batch in (1, 16):
            body.append([f"official {OFFICIAL_NAMES[impl]}", dtype, integer(batch), "—",
                         sig(ms),
                         sig(eager[batch]["ms_median"] / ms) if batch in eager else "—",
                         sig(ref[("official_cuda_fwd", dtype, batch)][0] / ms)
                         if ("official_cuda_fwd", dtype, batch) in ref else "—",
                         "—"])

    lines = ["**S1**: d 2048, N 32, L 512; the fastest version of each chapter at batch 1 "
             "and 16.", ""]
    lines += markdown_table(header, align, body) + [""]
    if eager:
        e = next(iter(eager.values()))
        lines.append(f"× 01 eager: the time of 01's GPU eager baseline ({label(e)}, "
                     f"{e['dtype']}) at the same batch over the row's time.")
    else:
        lines.append("× 01 eager: no S1 rows of 01's eager baseline in plots/data.")
    lines += ["", provenance(measured, "plots/data/*.csv")]
    if has_official:
        devices, _ = devices_and_commits(measured)
        note = (f"Official rows: mamba_ssm's own forward on an {OFFICIAL_DEVICE}, "
                f"from {', '.join(sorted({f'`plots/data/{r[SOURCE]}`' for r in official}))}.")
        if any(OFFICIAL_DEVICE not in d for d in devices):
            note += " Ours ran on another GPU model: × official compares across devices."
        lines += ["", note]
    return "\n".join(lines)


# ---------------------------------------------------------------- SSD tables

def ssd_official_table(rows, official):
    """Each (dtype, batch, L) the official SSD forward was timed at: its time
    and the fastest S3 row of ours."""
    ref = official_ssd(official)
    body = []
    for (impl, dtype, batch, seqlen), ms in sorted(
            ref.items(), key=lambda kv: (kv[0][1] != "fp16", kv[0][2], kv[0][3], kv[0][0])):
        if impl != "official_triton_chunk_scan_combined":
            continue
        best = fastest([r for r in rows if is_s3(r) and r["dtype"] == dtype
                        and r["batch"] == batch and r["seqlen"] == seqlen])
        if best is None:
            continue
        body.append([dtype, integer(batch), integer(seqlen), sig(ms), label(best),
                     sig(best["ms_median"]), sig(ms / best["ms_median"]),
                     sig(best["time_over_floor"])])
    if not body:
        return ["No S3 rows at the official timings' shapes in plots/data yet."]
    return ([f"**S3 against the official {OFFICIAL_NAMES['official_triton_chunk_scan_combined']}** "
             f"(its times on an {OFFICIAL_DEVICE}; ours: the fastest version of the dtype)", ""] +
            markdown_table(["dtype", "batch", "L", "official ms", "fastest version", "ms",
                            "× official", "time/floor"], "lrrrlrrr", body))


TARGET_SHAPES = ((1, 512), (8, 8192))  # (batch, L) of S3's speed targets


def ssd_summary_section(chapters, official):
    """The text between the top-level README's ssd markers: each SSD
    chapter's fastest version per dtype at S3's target shapes."""
    ref = official_ssd(official)
    body, measured = [], []
    for chapter in sorted(c for c in chapters if c != BIDIR):  # 06 is no causal SSD: its own block
        rows = [r for r in chapters[chapter] if is_s3(r)]
        for dtype in sorted({r["dtype"] for r in rows}, key=lambda d: (d != "fp16", d)):
            for batch, seqlen in TARGET_SHAPES:
                best = fastest([r for r in rows if r["dtype"] == dtype
                                and r["batch"] == batch and r["seqlen"] == seqlen])
                if best is None:
                    continue
                measured.append(best)
                o = ref.get(("official_triton_chunk_scan_combined", dtype, batch, seqlen))
                body.append([chapter, dtype, integer(batch), integer(seqlen), label(best),
                             sig(best["ms_median"]), sig(o), sig(o / best["ms_median"]) if o else "—",
                             sig(best["time_over_floor"])])
    if not body:
        return "No S3 rows (h 32, p 64, N 128, chunk 256) in plots/data yet."
    lines = ["**S3**: h 32, p 64, N 128, g 1, chunk 256, D, dt_bias, softplus, no z; the fastest "
             "version of each dtype at batch 1, L 512 and batch 8, L 8192.", ""]
    lines += markdown_table(["chapter", "dtype", "batch", "L", "fastest version", "ms",
                             f"official {OFFICIAL_NAMES['official_triton_chunk_scan_combined']} ms",
                             "× official", "time/floor"], "llrrlrrrr", body)
    lines += ["", provenance(measured, "plots/data/*.csv"),
              "", f"Official times: mamba_ssm on an {OFFICIAL_DEVICE} "
              "(fp32 inputs run its products in TF32)."]
    return "\n".join(lines)


BIDIR_TWICE = "bidir_twice_fused_mma"  # 05's fused kernel run twice on flipped copies: the 1x
CAUSAL = "ssd_fused_mma"               # 05's fused causal kernel: what one direction costs


def bidir_section(chapters):
    """06's S3 rows in fp16: the fastest fused version against 05 run twice
    and against the causal 05 at the same shape, both forms, and the
    chapter's targets at b 8, L 8192 (default form: <= 1.5x causal, >= 1.4x
    faster than twice; Hydra within 10% of the default form)."""
    rows = [r for r in timed(chapters.get(BIDIR, [])) if r["dtype"] == "fp16"]
    causal_rows = [r for r in timed(chapters.get("05_ssd_mamba2", [])) if is_s3(r) and r["name"] == CAUSAL]
    body, measured, best_at = [], [], {}
    for form, pick in (("default", is_s3), ("Hydra", is_s3_hydra)):
        for batch, seqlen in TARGET_SHAPES:
            here = [r for r in rows if pick(r) and r["batch"] == batch and r["seqlen"] == seqlen]
            twice = fastest([r for r in here if r["name"] == BIDIR_TWICE])
            fused = fastest([r for r in here if r["name"] != BIDIR_TWICE])
            causal = fastest([r for r in causal_rows if r["batch"] == batch and r["seqlen"] == seqlen])
            if fused is None or twice is None:
                continue
            best_at[(form, batch, seqlen)] = (fused, twice, causal)
            measured += [x for x in (fused, twice, causal) if x]
            body.append([form, integer(batch), integer(seqlen), label(fused), sig(fused["ms_median"]),
                         sig(twice["ms_median"]), sig(twice["ms_median"] / fused["ms_median"]),
                         sig(causal["ms_median"]) if causal else "—",
                         sig(fused["ms_median"] / causal["ms_median"]) if causal else "—",
                         mib(twice["peak_mib"]), mib(fused["peak_mib"])])
    if not body:
        return "No fp16 S3 rows of 06 in plots/data yet."
    lines = ["**S3, fp16** (h 32, p 64, N 128, g 1, chunk 256, D, dt_bias, softplus, no z): the fastest "
             "fused version against 05's fused kernel run twice on flipped copies and against one causal "
             "pass of 05's fused kernel at the same shape.", ""]
    lines += markdown_table(["form", "batch", "L", "fastest fused version", "ms", "twice ms",
                             "× faster than twice", "causal 05 ms", "× causal", "peak MiB twice",
                             "peak MiB fused"], "lrrlrrrrrrr", body)
    d, hy = best_at.get(("default", 8, 8192)), best_at.get(("Hydra", 8, 8192))
    if d:
        fused, twice, causal = d
        verdict = lambda ok: "met" if ok else "**not met**"
        targets = [f"vs twice {sig(twice['ms_median'] / fused['ms_median'])}× faster (target ≥ 1.4×: "
                   f"{verdict(twice['ms_median'] / fused['ms_median'] >= 1.4)})"]
        if causal:
            ratio = fused["ms_median"] / causal["ms_median"]
            targets.append(f"{sig(ratio)}× causal 05 (target ≤ 1.5×: {verdict(ratio <= 1.5)})")
        if hy:
            extra = hy[0]["ms_median"] / fused["ms_median"] - 1
            targets.append(f"Hydra {extra * 100:+.1f}% of the default form (target within 10%: "
                           f"{verdict(extra <= 0.10)})")
        lines += ["", "Targets, default form, fp16, batch 8, L 8192: " + "; ".join(targets) + "."]
    lines += ["", provenance(measured, f"plots/data/{BIDIR}.csv, 05_ssd_mamba2.csv")]
    return "\n".join(lines)


def crossover_section(chapters):
    """The text between 05's crossover markers: 03's tuned scan and 05's
    versions on one problem at each N."""
    scan = [r for r in chapters.get(CROSSOVER, []) if is_crossover(r)]
    ssd = [r for r in chapters.get("05_ssd_mamba2", []) if is_crossover(r)]
    fused = [r for r in ssd if r["name"] == "ssd_fused_mma"]
    via = [r for r in ssd if r["name"] == "ssd_via_scan_fused_tuned"]
    body = []
    for n in sorted({r["dstate"] for r in scan} & {r["dstate"] for r in fused}):
        s = fastest([r for r in scan if r["dstate"] == n])
        f = fastest([r for r in fused if r["dstate"] == n])
        v = fastest([r for r in via if r["dstate"] == n])
        body.append([integer(n), sig(s["ms_median"]), sig(s["floor_ms"]),
                     sig(s["exps"] / s["bytes"]),
                     sig(f["ms_median"]), sig(f["floor_ms"]), sig(f["flops"] / f["bytes"]),
                     sig(v["ms_median"]) if v else "—", sig(s["ms_median"] / f["ms_median"])])
    if not body:
        return "No crossover rows in plots/data yet (`make bench` with 05 writes them)."
    first = fastest(scan)
    lines = markdown_table(
        ["N", f"03 {label(first)} {first['dtype']} ms", "03 floor ms", "03 exps/byte",
         f"05 ssd_fused_mma {fastest(fused)['dtype']} ms", "05 floor ms", "05 FLOPs/byte", "05 via 03 ms",
         "03 / 05 fused"], "rrrrrrrrr", body)
    return "\n".join(lines + ["", provenance(scan + fused + via,
                                              f"plots/data/{CROSSOVER}.csv, 05_ssd_mamba2.csv")])


# ---------------------------------------------------------------- decode tables

LOOP_STEPS = 256  # steps of the token loop (LOOP_STEPS in common/driver.c)


def copy_share(r):
    """The row's GB/s over the copy rate probed in the same run."""
    return sig(100.0 * r["gbps"] / r["bw_gbps"]) + "%" if r["gbps"] and r["bw_gbps"] else "—"


def decode_official_table(rows, official):
    """Each (form, batch) the official fp32 decode step was timed at: its time
    and the fastest fp32-state version of ours, one token, L2 flushed, and the
    same version's step inside the CUDA-graph token loop."""
    ref = official_decode(official)
    body = []
    for (form, dtype, batch), ms in sorted(ref.items(), key=lambda kv: (kv[0][0] != "m2", kv[0][2])):
        if dtype != "fp32":
            continue
        here = [r for r in rows if decode_form(r) == form and r["batch"] == batch and r["dtype"] == "fp32"]
        best = fastest([r for r in here if is_s4(r)])
        if best is None:
            continue
        graph = fastest([r for r in here if r["flags"].endswith("+loop+graph")])
        body.append([form, integer(batch), sig(ms), label(best) + " " + best["dtype"],
                     sig(best["ms_median"]), sig(ms / best["ms_median"]), copy_share(best),
                     sig(best["time_over_floor"]),
                     f"{sig(graph['ms_median'])} ({label(graph)} {graph['dtype']})" if graph else "—"])
    if not body:
        return ["No S4 rows at the official timings' shapes in plots/data yet."]
    return ([f"**S4 against the official {OFFICIAL_NAMES['official_triton']}** (fp32 state; its "
             f"times on an {OFFICIAL_DEVICE}, L2 flushed; ours: the fastest fp32 version, one token, "
             "L2 flushed)", ""] +
            markdown_table(["form", "batch", "official ms", "fastest version", "ms", "× official",
                            "of copy rate", "time/floor", "ms per step in a CUDA graph"],
                           "lrrlrrrrl", body))


def decode_summary_section(chapters, official):
    """The text between the top-level README's decode markers."""
    rows = chapters.get(DECODE, [])
    ref = official_decode(official)
    body, measured = [], []
    for form, name in (("m2", "Mamba-2 h 32, p 64, N 128"), ("m1", "Mamba-1 d 2048, N 16")):
        for batch in (1, 64):
            here = [r for r in rows if decode_form(r) == form and r["batch"] == batch
                    and r["dtype"] == "fp32"]
            best = fastest([r for r in here if is_s4(r)])
            if best is None:
                continue
            graph = fastest([r for r in here if r["flags"].endswith("+loop+graph")])
            measured += [best] + ([graph] if graph else [])
            o = ref.get((form, "fp32", batch))
            body.append([name, integer(batch), label(best) + " " + best["dtype"], sig(best["ms_median"]),
                         copy_share(best), sig(o), sig(o / best["ms_median"]) if o else "—",
                         sig(graph["ms_median"]) if graph else "—"])
    if not body:
        return "No S4 rows in plots/data yet."
    lines = ["**S4** (decode, one token, fp32 I/O and state): the fastest version with L2 flushed, and "
             f"the fastest step in a {LOOP_STEPS}-step token loop captured in a CUDA graph (state hot in L2).", ""]
    lines += markdown_table(["form", "batch", "fastest version", "ms", "of copy rate",
                             f"official {OFFICIAL_NAMES['official_triton']} ms", "× official",
                             "ms per step, CUDA graph"], "lrlrrrrr", body)
    lines += ["", provenance(measured, f"plots/data/{DECODE}.csv"),
              "", f"Official times: mamba_ssm on an {OFFICIAL_DEVICE}, fp32 state."]
    return "\n".join(lines)


def precision_section():
    """The text between 07's precision markers: plots/data/07_decode_kernel_state_precision.csv."""
    path = DATA / f"{STATE_PRECISION}.csv"
    if not path.is_file():
        return "No plots/data/07_decode_kernel_state_precision.csv yet (`make bench` writes it)."
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    body = [[r["state_dtype"], r["state_bytes"], r["tokens"], f"{number(r['y_rel_l2']):.2e}",
             f"{number(r['final_state_rel_l2']):.2e}"] for r in rows]
    return "\n".join(markdown_table(["state stored as", "bytes per element", "tokens", "y rel. L2 (all tokens)",
                                      "final state rel. L2"], "lrrrr", body) +
                     ["", f"Computed on the CPU (`plots/data/{STATE_PRECISION}.csv`): decode_step_cpu, fp32 "
                          "arithmetic, against the fp64 oracle."])


# ---------------------------------------------------------------- rewriting

def replace_between(path, begin, end, body):
    """Puts body between the lines `begin` and `end` of the file at path.
    Returns what happened: 'updated', 'unchanged' or 'no markers'."""
    text = path.read_text(encoding="utf-8")
    b = re.search(r"^" + re.escape(begin) + r"[ \t]*$", text, re.M)
    e = re.search(r"^" + re.escape(end) + r"[ \t]*$", text, re.M)
    if not b or not e or e.start() < b.end():
        return "no markers"
    new = text[:b.end()] + "\n" + body + "\n" + text[e.start():]
    if new == text:
        return "unchanged"
    path.write_text(new, encoding="utf-8")
    return "updated"


def rewrite(readme, marker, body, label):
    """Puts body between <!-- marker:begin --> and <!-- marker:end --> of readme."""
    what = replace_between(readme, f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->", body)
    print(f"tables: {label} {what}")


def main():
    chapters, official = load_data()
    if not chapters:
        print("tables: no benchmark data in plots/data; READMEs left as they are")
        return 0
    # Sections beyond the results table, by chapter: (marker, how to make its text).
    extra = {"05_ssd_mamba2": [("crossover", lambda: crossover_section(chapters))],
             BIDIR: [("targets", lambda: bidir_section(chapters))],
             DECODE: [("precision", precision_section)]}
    for chapter, rows in sorted(chapters.items()):
        if chapter == CROSSOVER:  # 03's rows at 05's shapes: 05's crossover table
            continue
        readme = ROOT / chapter / "README.md"
        if not readme.is_file():
            print(f"tables: {chapter}/README.md not found, skipped")
            continue
        rewrite(readme, "results", chapter_section(chapter, rows, official), f"{chapter}/README.md")
        for marker, section in extra.get(chapter, []):
            rewrite(readme, marker, section(), f"{chapter}/README.md {marker}")
    readme = ROOT / "README.md"
    if readme.is_file():
        rewrite(readme, "summary", summary_section(chapters, official), "README.md")
        rewrite(readme, "ssd", ssd_summary_section(chapters, official), "README.md ssd")
        rewrite(readme, "bidir", bidir_section(chapters), "README.md bidir")
        rewrite(readme, "decode", decode_summary_section(chapters, official), "README.md decode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
