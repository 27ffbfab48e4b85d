"""Markdown output: numbers as the tables print them, tables, devices in
words, the provenance line under a table, and the rewriting of a README
between its markers."""
import math
import re

from .data import short_device
from .sets import devices_and_commits

BOUND_NOTE = ("bound: what sets the floor (bytes over the copy rate, exps over the exp2 rate, "
              "or FLOPs over the tensor-core rate).")


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


def provenance(rows, source):
    """Where the rows come from, and what their floor means."""
    devices, commits = devices_and_commits(rows)
    text = (f"Measured on {', '.join(devices) or 'an unrecorded device'}, "
            f"commit{'s' if len(commits) > 1 else ''} {', '.join(commits) or 'unrecorded'} "
            f"(`{source}`). floor ms = max(bytes / copy rate, exps / exp2 rate, "
            f"FLOPs / matrix rate), with the rates the run probed.")
    if any(r["time_over_floor"] is not None and r["time_over_floor"] < 1 for r in rows):
        text += (" A time/floor below 1 beats the exp2 (MUFU) floor: some of that "
                 "version's exponentials are computed off the MUFU.")
    return text


def replace_between(path, begin, end, body):
    """Puts body between the lines `begin` and `end` of the file at path.
    Returns what happened: 'updated', 'unchanged' or 'no markers'."""
    text = path.read_text(encoding="utf-8")
    b = re.search(r"^" + re.escape(begin) + r"[ \t]*$", text, re.M)
    e = re.search(r"^" + re.escape(end) + r"[ \t]*$", text, re.M)
    if not b or not e or e.start() < b.end():
        return "no markers"
    new = text[:b.end()] + "\n" + body + "\n" + text[e.start():]
    if new == text:
        return "unchanged"
    path.write_text(new, encoding="utf-8")
    return "updated"


def rewrite(readme, marker, body, name):
    """Puts body between <!-- marker:begin --> and <!-- marker:end --> of
    readme and says what happened, naming the file `name`."""
    what = replace_between(readme, f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->", body)
    print(f"tables: {name} {what}")


def write_file(path, text, name):
    """Writes a generated file whole and says whether it changed, naming it `name`."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        print(f"tables: {name} unchanged")
        return
    path.write_text(text, encoding="utf-8")
    print(f"tables: {name} written")
