"""A chapter's version ladder: every version of its `--list`, what it
changes, and its time at the chapter's headline shape against the version
before it and against its floor.

The versions and their one-line descriptions come from
plots/data/<chapter>_list.txt, the program's `--list` (make check compares
the two; `make plots` rewrites the file where the program is built). The
times come from the front page's run (plots/data/front.csv: one device call
for every chapter) where it timed the chapter, else from the chapter's own
CSV on its main device. Where a version is slower than the one before it, the
README says why in a comment the ladder quotes:

    <!-- slower 16: three products per product buy fp32 accuracy -->
"""
import re

from .data import DATA, short_device
from .markdown import FLOOR_NOTE, markdown_table, sig
from .ops import headline_shape
from .sets import devices_and_commits, fastest, main_device, timed

LIST_LINE = re.compile(r"^\s*(\d+)\s+(?:(cpu|gpu)\s+(\S+)\s+)?(\S+)\s+(.*?)\s*$")
SLOWER = re.compile(r"<!--\s*slower\s+(\d+):\s*(.*?)\s*-->")
NO_REASON = "slower than the version before: why is not written yet"
NOISE = 0.02  # a version within 2% of the one before is not called slower: runs differ by that much


def list_path(chapter):
    """Where the chapter's `--list` is kept: plots/data/<chapter>_list.txt."""
    return DATA / f"{chapter}_list.txt"


def read_list(chapter):
    """[(version, where, dtype, name, what)] from the chapter's kept `--list`
    (where and dtype are '' for a chapter whose list names neither), or None
    when no list is kept."""
    path = list_path(chapter)
    if not path.is_file():
        return None
    versions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = LIST_LINE.match(line)
        if m:
            versions.append((int(m.group(1)), m.group(2) or "", m.group(3) or "", m.group(4), m.group(5)))
    return versions


def slower_reasons(readme_text):
    """{version: why}: the README's `<!-- slower N: why -->` comments."""
    return {int(n): why for n, why in SLOWER.findall(readme_text)}


def ladder_rows(chapter, rows, front):
    """(rows at the headline shape, by version; the source file's name):
    from the front page's run where it timed the chapter, else from the
    chapter's rows on their main device; a version timed twice keeps its
    fastest row."""
    headline = headline_shape(chapter)
    if headline is None:
        return {}, None
    _, pick = headline
    here = [r for r in timed(front.chapters.get(chapter, [])) if pick(r)] if front else []
    source = "plots/data/front.csv"
    if not here:
        here = [r for r in timed(rows) if pick(r)]
        device = main_device(here)
        here = [r for r in here if r["device"] == device]
        source = f"plots/data/{chapter}.csv"
    by_version = {}
    for r in here:
        by_version.setdefault(int(r["version"]), []).append(r)
    return {v: fastest(rs) for v, rs in by_version.items()}, source


def ladder_section(chapter, rows, front, readme_text):
    """The text between a README's ladder markers, and the versions slower
    than the one before them that the README gives no reason for."""
    versions = read_list(chapter)
    if versions is None:
        return (f"No `--list` kept for this chapter (`plots/data/{chapter}_list.txt`): "
                "run `make plots` after `make`."), []
    if not any(where for _, where, _, _, _ in versions):  # a chapter of demonstrations, nothing timed
        body = [[str(v), f"`{name}`", what] for v, _, _, name, what in versions]
        return "\n".join(markdown_table(["version", "name", "what it shows"], "rll", body)), []
    found, source = ladder_rows(chapter, rows, front)
    if not found:  # nothing timed at the headline shape yet
        body = [[str(v), f"`{name}`", dtype, where, what] for v, where, dtype, name, what in versions]
        return "\n".join(markdown_table(["v", "version", "dtype", "runs on", "what it changes"], "rllll", body)
                         + ["", f"No version is timed at {headline_shape(chapter)[0]} yet." if headline_shape(chapter)
                                else "Nothing of this chapter is timed on a GPU."]), []
    reasons = slower_reasons(readme_text)
    missing = []
    body, previous = [], None
    for v, where, dtype, name, what in versions:
        r = found.get(v)
        ms = r["ms_median"] if r else None
        ratio, note = "—", what
        if ms is not None and previous is not None:
            pv, pms = previous
            ratio = sig(pms / ms) + ("" if pv == v - 1 else f" (v{pv})")
            if ms > pms * (1 + NOISE):
                why = reasons.get(v)
                if why is None:
                    missing.append(v)
                note += f". **Slower**: {why or NO_REASON}"
        if ms is not None:
            previous = (v, ms)
        body.append([str(v), f"`{name}`", dtype, where, note, sig(ms),
                     ratio, sig(r["time_over_floor"]) if r else "—"])
    shape, _ = headline_shape(chapter)
    timed_rows = [r for r in found.values() if r]
    devices, commits = devices_and_commits(timed_rows)
    lines = markdown_table(["v", "version", "dtype", "runs on", "what it changes", "ms", "× previous",
                            "time/floor"], "rllllrrr", body)
    lines += ["", f"ms: the median time at {shape} "
                  f"([benchmark sets](../docs/glossary.md#s1-s2-s3-s4)), L2 flushed; × previous: the last "
                  "timed version's time over this one's (named where it is not the one just before); "
                  + ("— : not in the front page's run at this shape" if source == "plots/data/front.csv"
                     else "— : not timed at this shape")
                  + " (every timed row: [RESULTS.md](RESULTS.md); a C version's "
                  "times on this machine: the program run without flags). " + FLOOR_NOTE,
              "",
              f"Source: `{source}`, {', '.join(short_device(d) for d in devices) or 'no device'}, "
              f"commit {', '.join(commits) or 'unrecorded'}."]
    return "\n".join(lines), missing
