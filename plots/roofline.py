#!/usr/bin/env python3
"""The front page's roofline figure, drawn from the front page's run alone
(plots/data/front.csv, see tablelib.data.load_front: one device, one commit):

  plots/roofline.png  each chapter's fastest version at its headline shape (the
                      rows of the README's headline table) against its floor,
                      as time / floor: one line per chapter, the floor at 1,
                      its terms (bytes over the probed copy rate, exps over the
                      probed exp2 rate, and FLOPs over the tensor-core rate
                      where they set it) as shares of it, and the measured time

Every number is a column of front.csv (bytes, bw_gbps, exps, exp_rate,
floor_ms, ms_median, time_over_floor); without that file nothing is drawn
(`make front` on a GPU writes it). Needs matplotlib: python3 -m pip install
matplotlib (or Debian's python3-matplotlib). Usage: python3 plots/roofline.py
"""
import sys

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from tablelib.data import FRONT, ROOT, load_front  # noqa: E402
from tablelib.markdown import label, sig  # noqa: E402
from tablelib.sets import floor_bound, floor_terms, headline_rows  # noqa: E402

FLOOR_STYLE = {  # floor term -> (marker, color, legend label)
    "bytes": ("s", "#1f77b4", "bytes / copy rate"),
    "exp2": ("^", "#ff7f0e", "exps / exp2 rate"),
    "tensor": ("D", "#2ca02c", "FLOPs / tensor-core rate (where it sets the floor)"),
}
SHOWN = 0.01  # floor terms under this share of the floor are left out
NAME = "roofline.png"


def draw(found, front):
    fig, ax = plt.subplots(figsize=(11, 0.75 * len(found) + 2))
    labelled, shares = set(), [1.0]
    for y, (chapter, shape, r, _, _) in enumerate(found):
        floor = r["floor_ms"]
        terms = {term: ms / floor for term, ms in floor_terms(r).items() if ms >= SHOWN * floor}
        bound = floor_bound(r)
        if bound == "tensor":
            terms["tensor"] = 1.0
        shares += terms.values()
        ax.plot([1.0, r["time_over_floor"]], [y, y], color="#bbbbbb", lw=3, zorder=1)
        for term, share in terms.items():
            marker, color, text = FLOOR_STYLE[term]
            ax.scatter(share, y, marker=marker, s=70, color=color, zorder=2,
                       edgecolors="black" if term == bound else "none",
                       label=None if term in labelled else text)
            labelled.add(term)
        ax.scatter(r["time_over_floor"], y, marker="o", s=90, color="black", zorder=3,
                   label=None if "time" in labelled else "measured median time")
        labelled.add("time")
        ax.annotate(f"{sig(r['time_over_floor'])}×: {sig(r['ms_median'])} ms over a "
                    f"{sig(floor)} ms {bound} floor",
                    (max(r["time_over_floor"], 1.0), y), xytext=(10, 0),
                    textcoords="offset points", va="center", fontsize=9)
    ax.axvline(1.0, color="black", lw=1)
    ax.set_yticks(range(len(found)), [f"{chapter}\n{label(r)} {r['dtype']}, {shape}"
                                      for chapter, shape, r, _, _ in found], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    worst = max(r["time_over_floor"] for _, _, r, _, _ in found)
    ax.set_xlim(min(shares) / 2, worst * 40)  # room on the right for the labels
    ax.set_xlabel("time / floor (log scale). The floor is the largest of its terms, outlined in black; "
                  f"terms under {SHOWN:.0%} of it are not drawn")
    ax.grid(True, axis="x", which="major", color="#dddddd")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.12), ncol=2, fontsize=8, frameon=False)
    ax.set_title("Each chapter's fastest version at its headline shape against its floor\n"
                 f"measured on {front.device}, floors from the rates probed in the same run; "
                 f"commit {front.commit} (plots/data/{FRONT}.csv)", fontsize=10)
    fig.savefig(ROOT / "plots" / NAME, dpi=130, bbox_inches="tight")
    plt.close(fig)
    print(f"roofline: plots/{NAME}")


def main():
    front = load_front()
    if front is None:
        print(f"roofline: no plots/data/{FRONT}.csv (make front on a GPU); {NAME} not drawn")
        return 0
    found = [f for f in headline_rows(front.chapters, front.official) if f[2]["floor_ms"]]
    if not found:
        print(f"roofline: no rows with a floor at the chapters' headline shapes in plots/data/{FRONT}.csv; "
              f"{NAME} not drawn")
        return 0
    draw(found, front)
    return 0


if __name__ == "__main__":
    sys.exit(main())
