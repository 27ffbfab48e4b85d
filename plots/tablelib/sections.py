"""The sections beside a chapter's rows: its fastest versions against the
official kernel wherever that was timed, and the notes under such tables.
An operation's own blocks live in its module (ops/)."""
from .data import CALL_COMMIT, SOURCE
from .ops import spec
from .markdown import (device_cell, devices_in_words, integer, label, markdown_table, mib, provenance,
                       several_devices, sig)
from .sets import OFFICIAL_NAMES, decode_form, fastest, official_comparisons, set_name

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
    decode = spec(chapter).SEQ == "T"  # the decode step: bytes moved, the copy rate, the token loop
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
