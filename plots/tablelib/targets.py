"""Each chapter's targets (docs/design.md §7, declared by its op's module in
ops/), met or not, with the number: the text between a README's targets markers. Targets are H200 times, so they
are read from the H200 rows (the chapter's CSV and the front page's run);
a speed-up over the official kernel only from a device call that timed both."""
from .data import short_device
from .markdown import label, markdown_table, provenance, sig
from .ops import spec
from .sets import fastest, official_match, same_call, timed

TARGET_DEVICE = "H200"
MIX_SEQS, MIX_TOKENS, LONGEST = 64, 65536, 8192  # the serving mix (SERVING_MIX in ops/scan/op_scan.c)


def verdict(ok):
    return "met" if ok else "**not met**"


def target_rows(chapter, chapters, front):
    """The chapter's H200 rows: its CSV's and the front page's run's."""
    rows = list(chapters.get(chapter, [])) + (list(front.chapters.get(chapter, [])) if front else [])
    return [r for r in timed(rows) if short_device(r["device"]) == TARGET_DEVICE]


def time_lines(chapter, rows, used):
    body = []
    for what, pick, dtypes, limit in spec(chapter).time_targets(chapter):
        best = fastest([r for r in rows if pick(r) and r["dtype"] in dtypes])
        if best is None:
            other = fastest([r for r in rows if pick(r)])
            if other is None:
                body.append([what, "not timed on an H200", "**not met**: no version timed"])
            else:
                used.append(other)
                body.append([what, f"no {' or '.join(dtypes)} version yet; the fastest, {label(other)} "
                             f"{other['dtype']}: {sig(other['ms_median'])} ms", "**not met**"])
            continue
        used.append(best)
        bound = limit(best) if callable(limit) else limit  # a number, or one of the row (a multiple of its floor)
        body.append([what, f"{sig(best['ms_median'])} ms ({label(best)} {best['dtype']}"
                     + (f", {sig(best['ms_median'] / best['floor_ms'])}× its floor" if callable(limit) else "") + ")",
                     verdict(best["ms_median"] <= bound)])
    return body


def official_lines(chapter, rows, official, used):
    """Never slower than the official kernel: the worst ratio over the shapes
    where one device call timed both, each shape at its best call (our
    fastest version of that call against the official kernel's best time
    over every run on the device, as × official is taken everywhere)."""
    body = []
    for what, pick, dtypes in spec(chapter).official_targets(chapter):
        shapes = {}
        for r in rows:
            if pick(r) and r["dtype"] in dtypes:
                shapes.setdefault((r["dtype"], r["batch"], r["seqlen"], r["bytes"], r["flags"]), []).append(r)
        worst = None  # over the shapes, each at its best device call: (ratio, ours, official)
        for group in shapes.values():
            best = None
            for commit in {r["commit"] for r in group}:
                mine = fastest([r for r in group if r["commit"] == commit])
                top, same = official_match(official, mine)
                if same is not None and (best is None or top["ms_median"] / mine["ms_median"] > best[0]):
                    best = (top["ms_median"] / mine["ms_median"], mine, top)
            if best is not None and (worst is None or best[0] < worst[0]):
                worst = best
        if worst is None:
            body.append([what, "the official kernel was never timed in the same call", "—"])
            continue
        ratio, mine, same = worst
        used.append(mine)
        seq = spec(chapter).SEQ
        body.append([what, f"least speed-up {sig(ratio)}× over the official kernel ({label(mine)} {mine['dtype']}, "
                     f"b {mine['batch']:g}, {seq} {mine['seqlen']:g}: {sig(mine['ms_median'])} against "
                     f"the official best {sig(same['ms_median'])} ms)", verdict(ratio >= 1.0)])
    return body


def serving_lines(chapter, rows, official, used):
    """The serving mix: packed ≤ 1.15× the same tokens as one sequence, ≥ 5×
    faster than padding to the longest request (fastest packed version, rows
    of its device call)."""
    packed = fastest([r for r in rows if "packed" in r["flags"] and r["batch"] == 1
                      and r["seqlen"] == MIX_TOKENS])
    if packed is None:
        return [["serving mix", "not timed on an H200", "**not met**: no version timed"]] if spec(chapter).serving(chapter) else []
    plain = "+".join(f for f in packed["flags"].split("+") if not f.startswith("packed"))
    same = [r for r in rows if r["version"] == packed["version"] and r["commit"] == packed["commit"]
            and r["dtype"] == packed["dtype"] and r["flags"] == plain]
    one = fastest([r for r in same if r["batch"] == 1 and r["seqlen"] == MIX_TOKENS])
    padded = fastest([r for r in same if r["batch"] == MIX_SEQS and r["seqlen"] == LONGEST])
    used.append(packed)
    body = []
    name = f"{label(packed)} {packed['dtype']}"
    if one:
        used.append(one)
        ratio = packed["ms_median"] / one["ms_median"]
        body.append(["serving mix packed ≤ 1.15× one sequence of its tokens",
                     f"{sig(ratio)}× ({name}: {sig(packed['ms_median'])} against {sig(one['ms_median'])} ms)",
                     verdict(ratio <= 1.15)])
    if hasattr(spec(chapter), "serving_rectangle"):
        where, pick = spec(chapter).serving_rectangle(chapter)
        rect = fastest([r for r in rows if r["version"] == packed["version"] and r["commit"] == packed["commit"]
                        and r["dtype"] == packed["dtype"] and pick(r)])
        if rect:
            used.append(rect)
            ratio = packed["ms_median"] / rect["ms_median"]
            body.append([f"serving mix packed ≤ 1.15× the same tokens as a rectangle ({where})",
                         f"{sig(ratio)}× ({name}: {sig(packed['ms_median'])} against {sig(rect['ms_median'])} ms)",
                         verdict(ratio <= 1.15)])
            if one and getattr(spec(chapter), "SERVING_ONE_VS_RECTANGLE", False):
                ratio = one["ms_median"] / rect["ms_median"]
                body.append([f"the mix's tokens as one sequence ≤ 1.15× the same tokens as a rectangle ({where})",
                             f"{sig(ratio)}× ({name}: {sig(one['ms_median'])} against {sig(rect['ms_median'])} ms)",
                             verdict(ratio <= 1.15)])
    if padded:
        used.append(padded)
        ratio = padded["ms_median"] / packed["ms_median"]
        body.append(["serving mix packed ≥ 5× faster than padded to the longest request",
                     f"{sig(ratio)}× ({name}: padded {sig(padded['ms_median'])} against packed "
                     f"{sig(packed['ms_median'])} ms)", verdict(ratio >= 5.0)])
    if spec(chapter).NAME == "ssd":  # the official SSD times the serving mix too (seq_idx)
        # Claimed only where the same call timed it; measured against its best of every run.
        runs = [o for o in official if o["op"] == "ssd_packed" and o["impl"] == "official_seq_idx"
                and o["dtype"] == packed["dtype"] and o["device"] == TARGET_DEVICE and o["ms_median"]]
        same = [o for o in runs if same_call(o, packed)]
        want = getattr(spec(chapter), "SEQ_IDX_TARGET", 3.0)
        what = f"serving mix ≥ {want:g}× faster than the official SSD with `seq_idx`"
        if same:
            best = min(o["ms_median"] for o in runs)
            ratio = best / packed["ms_median"]
            body.append([what, f"{sig(ratio)}× ({name}: {sig(packed['ms_median'])} ms against the official best "
                         f"{sig(best)} ms; {sig(same[0]['ms_median'])} in the same call)", verdict(ratio >= want)])
        else:
            body.append([what, "the official kernel was never timed in the same call", "—"])
    return body


def targets_section(chapter, chapters, official, front):
    """The text between a README's targets markers."""
    op = spec(chapter)
    if op.no_target(chapter):
        return op.no_target(chapter)
    if hasattr(op, "targets_section"):
        return op.targets_section(chapter, chapters, official, front)
    rows = target_rows(chapter, chapters, front)
    used = []
    body = (time_lines(chapter, rows, used) + official_lines(chapter, rows, official, used)
            + (serving_lines(chapter, rows, official, used) if op.serving(chapter) else []))
    if not body:
        return "No targets are set for this chapter."
    lines = [f"The targets of [docs/design.md §7](../docs/design.md#7-benchmark-shapes-and-targets), "
             f"against the fastest version timed on an {TARGET_DEVICE}:", ""]
    lines += markdown_table(["target", "measured", "met"], "lll", body)
    for note in op.target_notes(chapter):
        lines += ["", note]
    lines += ["", provenance(used, f"plots/data/{chapter}.csv, plots/data/front.csv", floors=False) if used else ""]
    return "\n".join(lines).rstrip()
