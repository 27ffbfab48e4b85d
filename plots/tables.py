#!/usr/bin/env python3
"""Writes the generated results of every chapter and of the top-level README
from plots/data/*.csv.

  <chapter>/RESULTS.md   every row of plots/data/<chapter>.csv by benchmark
                         set, after the official kernel's times where it
                         was timed (the whole file is generated)
  <chapter>/README.md    between <!-- results:begin --> and <!-- results:end -->:
                         the fastest version of each dtype at a few shapes,
                         and a link to RESULTS.md; in 05, between the
                         crossover markers, 03's scan against 05 on one problem
                         (plots/data/05_crossover_03.csv); in 06, between the
                         targets markers, the bidirectional targets; in 07,
                         between the precision markers, a 16-bit state's accuracy
  README.md              between <!-- headline:begin --> and <!-- headline:end -->:
                         each chapter's fastest version at its headline shape,
                         from the front page's run alone (plots/data/front.csv,
                         `make front`); left as it is without that file

A README without both markers is left as it is, and a second run changes
nothing. Standard library only; the pieces are in plots/tablelib/.

Usage: python3 plots/tables.py   (from anywhere; paths are relative to the repo)
"""
import sys

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

from tablelib.chapters import chapter_summary, results_file  # noqa: E402
from tablelib.data import CROSSOVER, ROOT, load_data, load_front  # noqa: E402
from tablelib.front import headline_section  # noqa: E402
from tablelib.markdown import rewrite, write_file  # noqa: E402
from tablelib.sections import bidir_section, crossover_section, precision_section  # noqa: E402
from tablelib.sets import BIDIR, DECODE, SSD  # noqa: E402


def main():
    chapters, official = load_data()
    if not chapters:
        print("tables: no benchmark data in plots/data; READMEs left as they are")
        return 0
    # Sections beyond the results summary, by chapter: (marker, how to make its text).
    extra = {SSD: [("crossover", lambda: crossover_section(chapters))],
             BIDIR: [("targets", lambda: bidir_section(chapters, official))],
             DECODE: [("precision", precision_section)]}
    for chapter, rows in sorted(chapters.items()):
        if chapter == CROSSOVER:  # 03's rows at 05's shapes: 05's crossover table
            continue
        readme = ROOT / chapter / "README.md"
        if not readme.is_file():
            print(f"tables: {chapter}/README.md not found, skipped")
            continue
        write_file(ROOT / chapter / "RESULTS.md", results_file(chapter, rows, official) + "\n",
                   f"{chapter}/RESULTS.md")
        rewrite(readme, "results", chapter_summary(chapter, rows, official), f"{chapter}/README.md")
        for marker, section in extra.get(chapter, []):
            rewrite(readme, marker, section(), f"{chapter}/README.md {marker}")
    front = load_front()
    readme = ROOT / "README.md"
    if front is not None and readme.is_file():
        rewrite(readme, "headline", headline_section(front), "README.md headline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
