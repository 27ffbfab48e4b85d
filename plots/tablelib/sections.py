"""The sections beside a chapter's rows: its fastest versions against the
official kernel wherever that was timed, 06's bidirectional targets, 05's
crossover against 03, and 07's 16-bit-state accuracy."""
from .data import CALL_COMMIT, CROSSOVER, SOURCE, STATE_PRECISION, load_front, number, read_state_precision
from .markdown import (device_cell, devices_in_words, integer, label, markdown_table, mib, provenance,
                       several_devices, sig)
from .sets import (BIDIR, BIDIR_TWICE, DECODE, OFFICIAL_NAMES, SSD, decode_form, fastest,
                   is_crossover, is_s3, is_s3_hydra, main_device, official_comparisons, official_match,
                   set_name, timed)

NOT_SAME_CALL = "not timed in the same run"


def times_official(o, same, ours):
    """The × official cell: the official kernel's best time over all runs (o)
    over ours, given only where the official kernel was also timed in our
    row's device call (same)."""
    if o is None:
        return "—"
    return sig(o["ms_median"] / ours["ms_median"]) if same else NOT_SAME_CALL


def official_note_short(matches, runs="[RESULTS.md](RESULTS.md)"):
    """official_note for a README: the kernels and what the two columns mean,
    the runs themselves listed where runs says."""
    kernels = dict.fromkeys(OFFICIAL_NAMES[o["impl"]] for o, _, _ in matches)
    return (f"official ms: the best time of mamba_ssm's {', '.join(kernels)} over every stored run on the "
            f"row's device (the runs: {runs}); × official divides it by ours, given only "
            "where the same device call timed both.")


def official_note(matches):
    """The lines under a table with official times: the kernels, the devices
    and files they come from, and which of our commits each file shares a
    device call with. matches: [(best official row, same-call official row
    or None, our row)], each official row of our row's device."""
    files, kernels, devices = {}, {}, {}
    for o, same, ours in matches:
        files.setdefault(o[SOURCE], set())
        if same:
            files.setdefault(same[SOURCE], set()).add(ours["commit"])
        kernels[OFFICIAL_NAMES[o["impl"]]] = True
        devices[o["device"]] = True
    parts = []
    for name, commits in files.items():
        call = CALL_COMMIT.search(name)
        if commits:
            where = f"the device call of our rows at commit {', '.join(sorted(commits))}"
        elif call:
            where = f"the device call at commit {call.group(1)}, which timed none of our rows compared here"
        else:
            where = "no commit recorded: no row of ours shares its device call"
        parts.append(f"`plots/data/{name}` ({where})")
    runs = "all these runs on our row's device" if len(devices) > 1 else "all these runs"
    return (f"Official: mamba_ssm's {', '.join(kernels)} on {devices_in_words(devices)}: "
            + ", ".join(parts) + f". official ms is the official kernel's best time over {runs}; "
            "× official divides it by ours and is given only where the official kernel was also timed "
            "in our row's device call.")


def copy_share(r):
    """The row's GB/s over the copy rate probed in the same run."""
    return sig(100.0 * r["gbps"] / r["bw_gbps"]) + "%" if r["gbps"] and r["bw_gbps"] else "—"


def graph_step(rows, best):
    """The fastest step of the token loop captured in a CUDA graph with the
    shape, bytes and device of a one-token row, as 'ms (version dtype)', or '—'."""
    graph = fastest([r for r in rows if r["flags"].endswith("+loop+graph")
                     and decode_form(r) == decode_form(best) and r["batch"] == best["batch"]
                     and r["bytes"] == best["bytes"] and r["device"] == best["device"]])
    return f"{sig(graph['ms_median'])} ({label(graph)} {graph['dtype']})" if graph else "—"


def official_table(chapter, rows, official):
    """The lines of the table of every shape where the official kernel was
    timed: its time and our fastest version there that moves the same kind
    of data (same dtype; same bytes for the decode step), one line per
    device both were timed on (with a device column where there are
    several), or [] if none."""
    found = official_comparisons(rows, official)
    if not found:
        return []
    decode = chapter == DECODE
    devices = several_devices([best for _, _, best in found])
    body = []
    for o, same, best in found:
        body.append([set_name(best), best["dtype"]] + ([device_cell(best)] if devices else [])
                    + [integer(best["batch"]), integer(best["dstate"]),
                       integer(best["seqlen"]), sig(o["ms_median"]), label(best), sig(best["ms_median"]),
                       times_official(o, same, best), sig(best["time_over_floor"])]
                    + ([copy_share(best), graph_step(rows, best)] if decode else []))
    header = (["set", "dtype"] + (["device"] if devices else [])
              + ["batch", "N", "T" if decode else "L", "official ms", "fastest version",
                 "ms", "× official", "time/floor"]
              + (["of copy rate", "ms per step in a CUDA graph"] if decode else []))
    what = ("the fastest version that moves the same bytes (an fp32 state against its fp32 rows, "
            "an fp16 state against its fp16 rows), one token, L2 flushed" if decode else
            "the fastest version of the dtype")
    where = (("At every shape and device where the official kernel was timed: its time on that device "
              f"and, beside it, {what} on the same device.") if devices else
             f"At every shape where the official kernel was timed: its time and, beside it, {what}.")
    return ([where, ""]
            + markdown_table(header, "ll" + ("l" if devices else "") + "rrrrlrrr" + ("rl" if decode else ""),
                             body)
            + ["", official_note(found)])


TARGET_SHAPES = ((1, 512), (8, 8192))  # (batch, L) of S3's speed targets


def recipe_target(measured, verdict, fused, official):
    """06's default form against the official recipe (Hydra's: one
    mamba_chunk_scan_combined on the batch doubled with flipped copies) at
    b 8, L 8192, against the recipe's best of every run on that device: the
    fastest fused row where the recipe was timed in its device call, else the
    front page's run, the one device call that times every chapter."""
    what = ("against the official recipe (one `mamba_chunk_scan_combined` call on the batch doubled with "
            "flipped copies; target ≥ 3.5×)")
    ours, where = fused, "in its device call"
    best, same = official_match(official, ours)
    if same is None:
        front = load_front()
        ours = front and fastest([r for r in timed(front.chapters.get(BIDIR, [])) if r["dtype"] == "fp16"
                                  and is_s3(r) and r["batch"] == 8 and r["seqlen"] == 8192])
        best, same = official_match(front.official, ours) if ours else (None, None)
        where = "in the front page's run"
    if same is None:
        return what + ": not timed"
    measured.append(ours)
    ratio = best["ms_median"] / ours["ms_median"]
    return (f"{what}: {sig(ratio)}× ({label(ours)} {sig(ours['ms_median'])} ms {where}, "
            f"the recipe {sig(same['ms_median'])} ms in the same call, its best {sig(best['ms_median'])}; "
            f"{verdict(ratio >= 3.5)})")


def bidir_section(chapters, official):
    """06's S3 rows in fp16: the fastest fused version against 05 run twice
    and against the causal 05 at the same shape, both forms, and the
    chapter's targets at b 8, L 8192 (docs/design.md §7: the default form at
    most 1.4x the fastest causal 05 time, Hydra within 10% of the default
    form, at least 3.5x faster than the official recipe)."""
    rows = [r for r in timed(chapters.get(BIDIR, [])) if r["dtype"] == "fp16"]
    device = main_device(rows)  # every time compared is of one device: 06's own
    rows = [r for r in rows if r["device"] == device]
    ssd = [r for r in timed(chapters.get(SSD, [])) if is_s3(r) and r["device"] == device]
    causal_best = [r for r in ssd if r["dtype"] == "fp16"]
    body, measured, best_at = [], [], {}
    for form, pick in (("default", is_s3), ("Hydra", is_s3_hydra)):
        for batch, seqlen in TARGET_SHAPES:
            here = [r for r in rows if pick(r) and r["batch"] == batch and r["seqlen"] == seqlen]
            twice = fastest([r for r in here if r["name"] == BIDIR_TWICE])
            fused = fastest([r for r in here if r["name"] != BIDIR_TWICE])
            causal = fastest([r for r in causal_best if r["batch"] == batch and r["seqlen"] == seqlen])
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
             "pass of 05's fastest fp16 version at the same shape.", ""]
    lines += markdown_table(["form", "batch", "L", "fastest fused version", "ms", "twice ms",
                             "× faster than twice", "fastest causal 05 ms", "× causal", "peak MiB twice",
                             "peak MiB fused"], "lrrlrrrrrrr", body)
    d, hy = best_at.get(("default", 8, 8192)), best_at.get(("Hydra", 8, 8192))
    if d:
        fused, twice, causal = d
        verdict = lambda ok: "met" if ok else "**not met**"
        targets = []
        best = fastest([r for r in causal_best if r["batch"] == 8 and r["seqlen"] == 8192])
        if best:
            ratio = fused["ms_median"] / best["ms_median"]
            targets.append(f"{sig(ratio)}× the fastest causal 05 ({label(best)}, {sig(best['ms_median'])} ms; "
                           f"target ≤ 1.4×: {verdict(ratio <= 1.4)})")
            measured.append(best)
        if hy:
            extra = hy[0]["ms_median"] / fused["ms_median"] - 1
            targets.append(f"Hydra {extra * 100:+.1f}% of the default form (target within 10%: "
                           f"{verdict(extra <= 0.10)})")
        targets.append(recipe_target(measured, verdict, fused, official))
        lines += ["", "Targets, fp16, batch 8, L 8192: " + "; ".join(targets) + ". Against 05 run twice: "
                  f"{sig(twice['ms_median'] / fused['ms_median'])}× faster."]
    lines += ["", provenance(measured, f"plots/data/{BIDIR}.csv, 05_ssd_mamba2.csv")]
    return "\n".join(lines)


def crossover_section(chapters):
    """The text between 05's crossover markers: 03's tuned scan and 05's
    versions on one problem at each N, all on the device 03's rows were
    mostly timed on."""
    scan = [r for r in chapters.get(CROSSOVER, []) if is_crossover(r)]
    device = main_device(scan)
    scan = [r for r in scan if r["device"] == device]
    ssd = [r for r in chapters.get(SSD, []) if is_crossover(r) and r["device"] == device]
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


def precision_section():
    """The text between 07's precision markers: plots/data/07_decode_kernel_state_precision.csv."""
    rows = read_state_precision()
    if rows is None:
        return f"No plots/data/{STATE_PRECISION}.csv yet (`make bench` writes it)."
    body = [[r["state_dtype"], r["state_bytes"], r["tokens"], f"{number(r['y_rel_l2']):.2e}",
             f"{number(r['final_state_rel_l2']):.2e}"] for r in rows]
    return "\n".join(markdown_table(["state stored as", "bytes per element", "tokens", "y rel. L2 (all tokens)",
                                      "final state rel. L2"], "lrrrr", body) +
                     ["", f"Computed on the CPU (`plots/data/{STATE_PRECISION}.csv`): decode_step_cpu, fp32 "
                          "arithmetic, against the fp64 oracle."])
