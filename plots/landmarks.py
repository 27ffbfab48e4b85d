#!/usr/bin/env python3
"""The landmark versions of each chapter, and the look of a version's line.

A chapter figure draws at most 8 versions, so that each one gets its own
color and its own marker. Where a figure has rows of more versions than that,
it draws the chapter's landmarks only: the first GPU version, each version
that changes the method, and the fastest version of each dtype. The figure's
appendix, plots/<chapter>_all_<what>.png, draws every version.

A version looks the same in every figure of its chapter: a landmark takes the
color and marker of its place in LANDMARKS (filled markers, thick line); any
other version a pair of color and marker that no landmark of the chapter
takes (hollow markers, thin line).

Each chapter names its landmarks in its README, in a line
"<!-- landmarks: 4 5 7 ... (why) -->" beside the ladder, and plots/draw.sh reads
that line and PALETTE, GNUPLOT_POINTS and GNUPLOT_OPEN_POINTS with awk, so
that the gnuplot figures need no Python: keep each of those tuples on one line.

Usage: python3 plots/landmarks.py [CHAPTER]  prints the chapter's landmark
versions, space-separated (every chapter's, one a line, without CHAPTER).
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A chapter README's line "<!-- landmarks: 4 5 7 (why): ... -->" names its landmark versions.
LANDMARK_LINE = re.compile(r"^<!-- landmarks: ([0-9 ]+)", re.M)


def read_landmarks():
    """{chapter: (versions...)} from each chapter README's landmarks line."""
    found = {}
    for readme in sorted(ROOT.glob("[0-9][0-9]_*/README.md")):
        match = LANDMARK_LINE.search(readme.read_text(encoding="utf-8"))
        if match:
            found[readme.parent.name] = tuple(int(v) for v in match.group(1).split())
    return found


LANDMARKS = read_landmarks()
MAX_SERIES = 8  # versions a figure draws before it keeps to the landmarks
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
MARKERS = ("o", "s", "D", "^", "v", "p", "X", "*")  # matplotlib's, one per color of PALETTE
GNUPLOT_POINTS = (7, 5, 13, 9, 11, 15, 2, 3)  # the same shapes in gnuplot, filled where they can be
GNUPLOT_OPEN_POINTS = (6, 4, 12, 8, 10, 14, 1, 3)  # their hollow forms (x and * have none: + and *)


def versions_of(rows):
    return sorted({r["version"] for r in rows})


def pick(rows, chapter):
    """The rows a chapter figure draws: all of them where they hold at most
    MAX_SERIES versions, else those of the chapter's landmark versions."""
    if len(versions_of(rows)) <= MAX_SERIES or chapter not in LANDMARKS:
        return list(rows)
    return [r for r in rows if r["version"] in LANDMARKS[chapter]]


def dropped(rows, chapter):
    """Whether pick(rows, chapter) leaves a version out: the figure then has an appendix."""
    return len(versions_of(pick(rows, chapter))) < len(versions_of(rows))


def slot(chapter, version):
    """(color index, marker index, landmark?) of a version's line in its chapter."""
    marks = LANDMARKS.get(chapter)
    if marks is None:  # a chapter without landmarks: every version in version order
        i = int(version) - 1
        return i % 8, i % 8, True
    if version in marks:
        i = marks.index(version)
        return i, i, True
    j = sum(1 for v in range(1, int(version)) if v not in marks)  # its place among the others
    return j % 8, (j + 1 + j // 8) % 8, False


def style(chapter, version):
    """matplotlib keyword arguments of a version's line: color, marker, fill, width."""
    color, marker, landmark = slot(chapter, version)
    kw = dict(color=PALETTE[color], marker=MARKERS[marker], lw=2 if landmark else 1.2)
    if not landmark:
        kw.update(mfc="none", ms=7)
    return kw


def main(argv):
    if len(argv) > 1:
        print(" ".join(str(v) for v in LANDMARKS.get(argv[1], ())))
    else:
        for chapter, marks in LANDMARKS.items():
            print(chapter, " ".join(str(v) for v in marks))
    return 0


assert all(len(marks) <= MAX_SERIES for marks in LANDMARKS.values())

if __name__ == "__main__":
    sys.exit(main(sys.argv))
