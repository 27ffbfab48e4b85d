"""A chapter's results: every row of plots/data/<chapter>.csv in
<chapter>/RESULTS.md, grouped by benchmark set, and the short table of its
fastest versions in its README."""
from .data import DATA
from .markdown import (BOUND_NOTE, device_cell, integer, label, markdown_table, mib, provenance,
                       several_devices, sig)
from .data import short_device
from .sections import graph_step, official_note_short, official_table, times_official
from .sets import (BIDIR, DECODE, DTYPE_ORDER, LOOP_STEPS, by_device, decode_form, fastest,
                   floor_bound, is_crossover, is_loop, is_s1, is_s2, is_s3, is_s3_hydra, is_s3_z,
                   is_s4, official_match, summary_shapes, timed)

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
    value (d, heads, groups, chunk, flags) that differs between its rows and
    for the device where they come from several (each version's rows of one
    device together, in the order the devices first appear); seq names the
    seqlen column (T, tokens per launch, for decode)."""
    varying = [(col, name) for col, name in SHAPE_COLUMNS
               if col not in ("dstate", "seqlen") and len({r[col] for r in rows}) > 1]
    devices = [d for d, _ in by_device(rows)] if several_devices(rows) else []
    header = (["version", "name", "dtype"] + (["device"] if devices else []) + [name for _, name in varying] +
              ["batch", "N", seq, "ms median", "GB/s", "floor ms", "time/floor",
               "peak MiB", "workspace MiB"])
    align = ("rll" + ("l" if devices else "") + "".join("l" if c == "flags" else "r" for c, _ in varying)
             + "rrrrrrrrr")
    rows = sorted(rows, key=lambda r: (
        r["version"] or 0, r["dtype"], devices.index(r["device"]) if devices else 0,
        *[str(r[c]) for c, _ in varying], r["dstate"] or 0, r["batch"] or 0, r["seqlen"] or 0))
    body = [[integer(r["version"]), r["name"], r["dtype"]] + ([device_cell(r)] if devices else []) +
            [r[c] if c == "flags" else integer(r[c]) for c, _ in varying] +
            [integer(r["batch"]), integer(r["dstate"]), integer(r["seqlen"]),
             sig(r["ms_median"]), sig(r["gbps"]), sig(r["floor_ms"]),
             sig(r["time_over_floor"]), mib(r["peak_mib"]), mib(r["workspace_mib"])]
            for r in rows]
    return markdown_table(header, align, body)


def row_groups(chapter, rows):
    """[(title, rows)]: the chapter's rows by benchmark set, in reading order."""
    if chapter == DECODE:
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
        return groups
    if chapter == BIDIR:
        return [("S3, default form", [r for r in rows if is_s3(r)]),
                ("S3, Hydra form", [r for r in rows if is_s3_hydra(r)]),
                ("Other shapes", [r for r in rows if not is_s3(r) and not is_s3_hydra(r)])]
    if any(is_s3(r) for r in rows):
        return [("S3", [r for r in rows if is_s3(r)]),
                ("S3 with z", [r for r in rows if is_s3_z(r)]),
                ("Crossover", [r for r in rows if is_crossover(r) and not is_s3(r)]),
                ("Other shapes", [r for r in rows if not is_s3(r) and not is_s3_z(r)
                                  and not is_crossover(r)])]
    return [("S1", [r for r in rows if is_s1(r)]),
            ("S2", [r for r in rows if is_s2(r) and not is_s1(r)]),
            ("Other shapes", [r for r in rows if not is_s1(r) and not is_s2(r)])]


def results_file(chapter, rows, official):
    """The text of <chapter>/RESULTS.md: the official comparison, then every
    row by benchmark set, each group with the devices and commits of its rows."""
    source = f"plots/data/{chapter}.csv"
    seq = "T" if chapter == DECODE else "L"
    lines = [f"# {chapter}: all results, generated by `make plots` from `{source}` (do not edit)", "",
             "Every measured row, by benchmark set; `plots/tables.py` rewrites this file from the CSV. "
             "The chapter and its summary table: [README.md](README.md).", ""]
    figures = sorted(DATA.parent.glob(f"{chapter}_*.png"))
    if figures:
        lines += ["Figures drawn from the same CSV: " +
                  ", ".join(f"[{f.stem[len(chapter) + 1:]}](../plots/{f.name})" for f in figures)
                  + ".", ""]
    compared = official_table(chapter, rows, official)
    if compared:
        lines += ["## Against the official kernel", ""] + compared + [""]
    for name, group in row_groups(chapter, rows):
        if group:
            shape = shape_line(group, seq)
            title = f"{name}: {shape}" if shape else name
            lines += [f"## {title} ({len(group)} rows)", ""] + chapter_rows_table(group, seq)
            lines += ["", provenance(group, source), ""]
    return "\n".join(lines)


SUMMARY_DEVICE = "H200"  # a README's summary shows this device's rows where it has any


def summary_rows(chapter, rows, official):
    """[(shape, our fastest row, official row, same call?)]: the fastest
    version of each dtype at each of the chapter's summary shapes, on the
    H200 where the chapter has H200 rows, else on each device."""
    if any(short_device(r["device"]) == SUMMARY_DEVICE for r in rows):
        rows = [r for r in rows if short_device(r["device"]) == SUMMARY_DEVICE]
    found = []
    for shape, pick in summary_shapes(chapter):
        here = [r for r in timed(rows) if pick(r)]
        for dtype in sorted({r["dtype"] for r in here}, key=DTYPE_ORDER.index):
            for _, mine in by_device([r for r in here if r["dtype"] == dtype]):
                best = fastest(mine)
                found.append((shape, best, *official_match(official, best)))
    return found


def chapter_summary(chapter, rows, official):
    """The text between a chapter README's results markers: the fastest
    version of each dtype at a few shapes, and the link to RESULTS.md."""
    found = summary_rows(chapter, rows, official)
    if not found:
        return (f"No rows at this chapter's summary shapes in `plots/data/{chapter}.csv` yet. "
                "Full tables: [RESULTS.md](RESULTS.md)")
    compared = any(o is not None for _, _, o, _ in found)
    decode = chapter == DECODE
    devices = several_devices([best for _, best, _, _ in found])
    header = (["shape", "dtype"] + (["device"] if devices else [])
              + ["fastest version", "ms", "floor ms", "bound", "time/floor", "peak MiB"])
    header += ["official ms", "× official"] if compared else []
    header += ["ms per step in a CUDA graph"] if decode else []
    body = []
    for shape, best, o, same in found:
        body.append([shape, best["dtype"]] + ([device_cell(best)] if devices else [])
                    + [label(best), sig(best["ms_median"]), sig(best["floor_ms"]),
                       floor_bound(best) or "—", sig(best["time_over_floor"]), mib(best["peak_mib"])]
                    + ([sig(o["ms_median"]) if o else "—", times_official(o, same, best)]
                       if compared else [])
                    + ([graph_step(rows, best)] if decode else []))
    align = "ll" + ("l" if devices else "") + "lrrlrr" + ("rr" if compared else "") + ("l" if decode else "")
    sets = {}
    for shape, best, _, _ in found:
        sets.setdefault(shape.split(" b ")[0].rstrip(","), []).append(best)
    seq = "T" if decode else "L"
    each = "each dtype on each device" if devices else "each dtype"
    lines = [f"**The fastest version of {each} at a few shapes**", ""]
    lines += markdown_table(header, align, body) + [""]
    lines.append("; ".join(f"{name}: {shape_line(group, seq)}" for name, group in sets.items())
                 + ". " + BOUND_NOTE)
    if compared:
        lines += ["", official_note_short([(o, same, best) for _, best, o, same in found if o is not None])]
    lines += ["", provenance([best for _, best, _, _ in found], f"plots/data/{chapter}.csv"),
              "", "Full tables: [RESULTS.md](RESULTS.md)"]
    return "\n".join(lines)
