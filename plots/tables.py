#!/usr/bin/env python3
"""Writes the generated results of every chapter and of the top-level README
from plots/data/*.csv, or, with --check, says where they differ from what it
would write.

  plots/data/<chapter>_list.txt   the program's --list, where build/<chapter>
                         is built (the ladder's versions; make check compares them)
  <chapter>/RESULTS.md   every row of plots/data/<chapter>.csv by benchmark
                         set, after the official kernel's times where it
                         was timed (the whole file is generated)
  <chapter>/README.md    between <!-- name:begin --> and <!-- name:end -->:
                           ladder     every version, what it changes, its time at the
                                      headline shape, × the previous one, time/floor
                           results    the fastest version of each dtype at a few shapes
                           targets    the chapter's targets, met or not, with the number
                           and the blocks of the chapter's op (tablelib/ops/<op>.py:
                           EXTRA_BLOCKS): 05's crossover, 07's state precision, 08's official kernels and angle drift
  README.md              between <!-- headline:begin --> and <!-- headline:end -->:
                         each chapter's fastest version at its headline shape,
                         from the front page's run alone (plots/data/front.csv,
                         `make front`); left as it is without that file

Chapters are the folders NN_name with a README.md; a README without a
marker pair is left as it is, and a second run changes nothing. With
--check nothing is written: the exit status is 1 when a generated file or
block differs from the committed one, or when the ladder finds a version
slower than the one before it with no `<!-- slower N: why -->` in the README.
Standard library only; the pieces are in plots/tablelib/.

Usage: python3 plots/tables.py [--check] [CHAPTER...]   (CHAPTER: only these chapters' files)
"""
import subprocess
import sys

sys.dont_write_bytecode = True  # importing tablelib leaves no __pycache__ in plots/

from tablelib.chapters import chapter_summary, results_file  # noqa: E402
from tablelib.data import ROOT, load_data, load_front  # noqa: E402
from tablelib.front import headline_section  # noqa: E402
from tablelib.ladder import ladder_section, list_path  # noqa: E402
from tablelib.markdown import has_block, replace_block  # noqa: E402
from tablelib.ops import spec  # noqa: E402
from tablelib.targets import targets_section  # noqa: E402


def chapter_outputs(chapter, rows, chapters, official, front, problems):
    """{path: text} of one chapter: its RESULTS.md and its README with every
    block it has filled in."""
    readme = ROOT / chapter / "README.md"
    text = readme.read_text(encoding="utf-8")
    out = {}
    if rows:
        out[ROOT / chapter / "RESULTS.md"] = results_file(chapter, rows, official) + "\n"
    blocks = []
    if has_block(text, "ladder"):
        ladder, missing = ladder_section(chapter, rows, front, text)
        problems += [f"{chapter}/README.md: version {v} is slower than the one before it; say why in "
                     f"`<!-- slower {v}: why -->`" for v in missing]
        blocks.append(("ladder", ladder))
    if rows:
        blocks.append(("results", chapter_summary(chapter, rows, official)))
    blocks.append(("targets", targets_section(chapter, chapters, official, front)))
    blocks += [(marker, make(chapter, chapters, official)) for marker, make in spec(chapter).EXTRA_BLOCKS.items()
               if has_block(text, marker)]
    for marker, body in blocks:
        text = replace_block(text, marker, body) or text
    out[readme] = text
    return out


def refresh_list(chapter):
    """Keeps the program's `--list` in plots/data/<chapter>_list.txt where the
    program is built (build/<chapter>); says when it changed."""
    program = ROOT / "build" / chapter
    if not program.is_file():
        return
    text = subprocess.run([str(program), "--list"], capture_output=True, text=True, check=False).stdout
    path = list_path(chapter)
    if text and (not path.is_file() or path.read_text(encoding="utf-8") != text):
        path.write_text(text, encoding="utf-8")
        print(f"tables: {path.relative_to(ROOT)} rewritten from build/{chapter} --list")


def main(argv):
    check = "--check" in argv[1:]
    only = [a.rstrip("/") for a in argv[1:] if a != "--check"]  # chapters named: only theirs
    if any(not (ROOT / c / "README.md").is_file() for c in only):
        print(__doc__.strip().splitlines()[-1])
        return 2
    chapters, official = load_data()
    front = load_front()
    problems, outputs = [], {}
    for folder in sorted(ROOT.glob("[0-9][0-9]_*/README.md")):
        chapter = folder.parent.name
        if only and chapter not in only:
            continue
        if not check:
            refresh_list(chapter)
        outputs.update(chapter_outputs(chapter, chapters.get(chapter, []), chapters, official, front,
                                       problems))
    readme = ROOT / "README.md"
    if front is not None and readme.is_file() and not only:
        text = readme.read_text(encoding="utf-8")
        outputs[readme] = replace_block(text, "headline", headline_section(front)) or text
    changed = []
    for path, text in outputs.items():
        old = path.read_text(encoding="utf-8") if path.is_file() else None
        if old != text:
            changed.append(path.relative_to(ROOT))
            if not check:
                path.write_text(text, encoding="utf-8")
    for p in problems:
        print(f"tables: {p}")
    if check:
        for name in changed:
            print(f"tables: {name} differs from what `make plots` writes from plots/data")
        return 1 if changed or problems else 0
    print(f"tables: {len(changed)} of {len(outputs)} generated files rewritten"
          + (": " + ", ".join(map(str, changed)) if changed else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
