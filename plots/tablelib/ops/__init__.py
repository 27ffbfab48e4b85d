"""The tables' knowledge of each operation, one module per op (scan.py,
ssd.py, ...): a chapter's op is the one its main.c names (`.op = &OP_SSD`
-> ssd.py), so no table code names a chapter. A module gives:

  SEQ                  what the seqlen column is called ("L", or "T" tokens)
  HEADLINE             the shape of the ladder, the headline and the front page
  summary_shapes()     [(shape, which rows)]: the README summary's shapes, HEADLINE among them
  row_groups(rows)     [(title, rows)]: RESULTS.md's groups
and, where it has them (DEFAULTS stands in for the rest):
  time_targets(c)      [(what, which rows, dtypes, limit)] of chapter c (docs/design.md §7); the limit
                       in ms, or a function of the row (a multiple of its floor)
  official_targets(c)  [(what, which rows, dtypes)]: never slower than the official kernel
  serving(c)           whether chapter c times the serving mix
  no_target(c)         the line for a chapter without targets, or None
  target_notes(c)      lines under the targets table
and optionally targets_section(chapter, chapters, official, front) in place
of the generic targets table, and EXTRA_BLOCKS {marker: make(chapter, chapters, official)}.
A chapter without an op (00) gets NONE's answers."""
import importlib
import re
from types import SimpleNamespace

from ..data import ROOT

OP_LINE = re.compile(r"\.op\s*=\s*&OP_([A-Z0-9_]+)")
_cache = {}


def chapter_op(chapter):
    """'ssd' for a chapter whose main.c says `.op = &OP_SSD`, else None."""
    main = ROOT / chapter / "main.c"
    if not main.is_file():
        return None
    match = OP_LINE.search(main.read_text(encoding="utf-8"))
    return match.group(1).lower() if match else None


# What a module leaves out: no targets of a kind, no blocks of its own.
DEFAULTS = dict(SEQ="L", EXTRA_BLOCKS={}, time_targets=lambda c: [], official_targets=lambda c: [],
                serving=lambda c: False, no_target=lambda c: None, target_notes=lambda c: [])
NONE = SimpleNamespace(**dict(
    DEFAULTS, NAME=None, HEADLINE=None, summary_shapes=lambda: [], row_groups=lambda rows: [("All rows", rows)],
    no_target=lambda c: "This chapter runs on the CPU only and has no speed target: it is done when its checks pass."))


def spec(chapter):
    """The op module of a chapter (see the module docstring), with DEFAULTS
    for what it leaves out, or NONE for a chapter without an op."""
    if chapter not in _cache:
        op = chapter_op(chapter)
        if op is None:
            _cache[chapter] = NONE
        else:
            module = importlib.import_module(f"{__name__}.{op}")
            _cache[chapter] = SimpleNamespace(**dict(DEFAULTS, **{k: getattr(module, k) for k in dir(module)
                                                                  if not k.startswith("_")}))
    return _cache[chapter]


def chapters_of(op, chapters):
    """The chapters among `chapters` whose op is `op`, in order."""
    return [c for c in sorted(chapters) if spec(c).NAME == op]


def chapter_of(op):
    """The first chapter folder (NN_name) whose op is `op`, or None: what an
    op's figure script draws."""
    folders = sorted(d.name for d in ROOT.glob("[0-9][0-9]_*") if d.is_dir())
    return next(iter(chapters_of(op, folders)), None)


def summary_shapes(chapter):
    return spec(chapter).summary_shapes()


def headline_shape(chapter):
    """(shape, which rows) of a chapter's headline, or None where it has none."""
    s = spec(chapter)
    return next((x for x in s.summary_shapes() if x[0] == s.HEADLINE), None)
