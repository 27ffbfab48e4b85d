#!/usr/bin/env python3
"""The serving figure of each chapter that timed the serving mix (64 requests
of 17 to 8192 tokens, 65,536 in all), drawn from plots/data:

  plots/<chapter>_serving.png   ms of each version that took the mix packed:
                                packed on one row, the same tokens as one
                                sequence, the batch padded to the longest
                                request (64 x 8192); for the SSD, the official
                                mamba_chunk_scan_combined with seq_idx (with and
                                without the per-sequence final states), as one
                                sequence and padded, timed in the same device call

Each bar group is one version's rows of one device call (one commit and
device); a version timed in several calls is drawn from its latest packed
row. Needs matplotlib: python3 -m pip install matplotlib (or Debian's
python3-matplotlib). Usage: python3 plots/serving.py
"""
import sys

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from landmarks import PALETTE  # noqa: E402
from ssd import write  # noqa: E402
from tablelib.data import load_data, short_device  # noqa: E402
from tablelib.ops import chapter_of  # noqa: E402
from tablelib.sets import same_call as official_same_call, timed  # noqa: E402

SSD = chapter_of("ssd")  # the official varlen path is the SSD's alone
MIX_SEQS, MIX_TOKENS, LONGEST = 64, 65536, 8192
OFFICIAL = (("official_seq_idx", "official, seq_idx"),
            ("official_seq_idx_varlen_states", "official, seq_idx + final states"),
            ("official_one_sequence", "official, one sequence"),
            ("official_padded", "official, padded"))


def packed(r):
    return "packed" in (r["flags"] or "") and r["batch"] == 1 and r["seqlen"] == MIX_TOKENS


def same_config(a, b):
    """Rows of one device call and one configuration but their batch and L."""
    keys = ("version", "device", "commit", "dtype", "dim", "heads", "headdim", "dstate", "groups", "chunk")
    return all(a[k] == b[k] for k in keys)


def bars(rows, official, r):
    """[(label, ms)] of version r's serving rows in r's device call."""
    flags = (r["flags"] or "").split("+")
    plain = "+".join(f for f in flags if not f.startswith("packed"))
    out = [("packed", r["ms_median"])]
    for label, batch, seqlen in (("one sequence", 1, MIX_TOKENS), ("padded", MIX_SEQS, LONGEST)):
        for o in rows:
            if same_config(o, r) and o["batch"] == batch and o["seqlen"] == seqlen and o["flags"] == plain:
                out.append((label, o["ms_median"]))
    for impl, label in OFFICIAL if r["chapter"] == SSD else ():  # the official varlen path is the SSD's alone
        for o in official:
            if (o["op"] == "ssd_packed" and o["impl"] == impl and o["dtype"] == r["dtype"]
                    and o["device"] == short_device(r["device"]) and official_same_call(o, r) and o["ms_median"] is not None):
                out.append((label, o["ms_median"]))
    return out


def draw(chapter, rows, official):
    latest = {}
    for r in rows:
        if packed(r):
            latest[(r["version"], r["device"])] = r
    groups = [(r, bars(rows, official, r)) for _, r in sorted(latest.items())]
    if not groups:
        print(f"serving: no serving rows in plots/data/{chapter}.csv; no serving figure")
        return
    labels = list(dict.fromkeys(label for _, b in groups for label, _ in b))
    colors = PALETTE  # a color per kind of bar (labels), the same in each group
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.5 * len(groups) * len(labels)))
    y, ticks, named = 0.0, [], set()  # named: the labels already in the legend
    for r, b in groups:
        have = dict(b)
        ticks.append((y + (len(labels) - 1) / 2, f"v{r['version']:g} {r['name']} {r['dtype']}\n"
                      f"({short_device(r['device'])}, {r['commit']})"))
        for i, label in enumerate(labels):
            if label in have:
                ax.barh(y + i, have[label], color=colors[i % len(colors)], label=None if label in named else label)
                named.add(label)
                ax.text(have[label], y + i, f" {have[label]:.3g}", va="center", fontsize=8)
        y += len(labels) + 1
    ax.set_yticks([t for t, _ in ticks], [n for _, n in ticks], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(ms for _, b in groups for _, ms in b) * 1.12)
    ax.set_xlabel("ms (median, L2 flushed)")
    handles, names = ax.get_legend_handles_labels()
    ax.legend(handles, names, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    devices = sorted({short_device(r["device"]) for r, _ in groups})
    fig.suptitle(f"{chapter[:2]}: the serving mix, 64 requests of 17 to 8192 tokens (65,536), "
                 f"each from its own state\nmeasured on {', '.join(devices)}", fontsize=10)
    write(fig, f"{chapter}_serving.png")


def main():
    chapters, official = load_data()
    for chapter in sorted(chapters):  # every chapter that timed the serving mix (its packed rows)
        if any(packed(r) for r in chapters[chapter]):
            draw(chapter, timed(chapters[chapter]), official)
    return 0


if __name__ == "__main__":
    sys.exit(main())
