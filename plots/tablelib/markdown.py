"""Markdown output: numbers as the tables print them, tables, devices in
words, the provenance line under a table, and the rewriting of a README
between its markers."""
import math
import re

from .data import short_device
from .sets import devices_and_commits

BOUND_NOTE = ("bound: what sets the floor (bytes over the copy rate, exps over the exp2 rate, "
              "or FLOPs over the dense wgmma rate).")
FLOOR_NOTE = ("floor ms = max(bytes / copy rate, exps / exp2 rate, FLOPs / dense wgmma rate): the first two "
              "probed in the row's run, the third in the device's `make probe` run "
              "(`plots/data/probe_<gpu>.csv`; the run's mma.sync rate where the device was never probed).")


def sig(x, digits=3):
    """x to `digits` significant digits, never in exponent form; '—' if None."""
    if x is None:
        return "—"
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


def mib(x):
    """MiB to one decimal; '—' if None."""
    return "—" if x is None else f"{x:.1f}"


def integer(x):
    """A whole number without a decimal point; '—' if None."""
    return "—" if x is None else f"{x:g}"


def label(r):
    """'v9 ssd_wgmma_frag_ring': a row's version and name."""
    return f"v{r['version']:g} {r['name']}"


def device_cell(r):
    """A row's device by its short name ("H200"); '—' if unrecorded."""
    return short_device(r["device"]) or "—"


def several_devices(rows):
    """Whether rows were timed on more than one device: then a table of them
    names each row's device."""
    return len({r["device"] for r in rows}) > 1


def with_article(name):
    """'an H200', 'a B200': a device's short name after its article, read as
    its letters are spoken; 'an unrecorded device' for None."""
    if not name:
        return "an unrecorded device"
    return ("an " if name[0].upper() in "AEFHILMNORSX" else "a ") + name


def devices_in_words(names):
    """'an H200', 'an H200 and an H100': short device names in a sentence."""
    words = [with_article(n) for n in names]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def markdown_table(header, align, rows):
    """The lines of a Markdown table; align holds 'r' (right) or 'l' per column."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def provenance(rows, source, floors=True):
    """Where the rows come from, and what their floor means (floors=False: a
    table without floors)."""
    devices, commits = devices_and_commits(rows)
    source = ", ".join(f"`{name}`" for name in source.split(", "))  # "a.csv, b.csv": each its own span
    text = (f"Source: {source}, measured on {', '.join(devices) or 'an unrecorded device'}, "
            f"commit{'s' if len(commits) > 1 else ''} {', '.join(commits) or 'unrecorded'}."
            + (" " + FLOOR_NOTE if floors else ""))
    if any(r["time_over_floor"] is not None and r["time_over_floor"] < 1 for r in rows):
        text += (" A time/floor below 1 beats the exp2 (MUFU) floor: some of that "
                 "version's exponentials are computed off the MUFU.")
    return text


def has_block(text, marker):
    """Whether text holds the lines <!-- marker:begin --> and <!-- marker:end -->."""
    return replace_block(text, marker, "") is not None


def replace_block(text, marker, body):
    """text with body between its lines <!-- marker:begin --> and
    <!-- marker:end -->, or None when it has no such pair."""
    b = re.search(r"^" + re.escape(f"<!-- {marker}:begin -->") + r"[ \t]*$", text, re.M)
    e = re.search(r"^" + re.escape(f"<!-- {marker}:end -->") + r"[ \t]*$", text, re.M)
    if not b or not e or e.start() < b.end():
        return None
    return text[:b.end()] + "\n" + body + "\n" + text[e.start():]
