"""The headline table of the top-level README.md: each chapter's fastest
version at its headline shape (on each device it was timed on there), its
floor, and its speed-up over chapter 01's eager baseline and over the
official kernel timed in the same device call."""
from .chapters import shape_line
from .markdown import (BOUND_NOTE, device_cell, label, markdown_table, provenance, several_devices, sig,
                       with_article)
from .sections import official_note, times_official
from .sets import eager_baseline, floor_bound, headline_rows, is_s1


def headline_section(chapters, official):
    """The text between the top-level README's headline markers."""
    found = headline_rows(chapters, official)
    if not found:
        return "No rows at the chapters' headline shapes in plots/data yet."
    eager = eager_baseline(chapters)
    devices = several_devices([best for _, _, best, _, _ in found])
    body, shapes = [], {}
    for chapter, shape, best, o, same in found:
        base = eager.get(best["batch"]) if is_s1(best) else None
        base = base if base and base["device"] == best["device"] else None
        body.append([f"[{chapter}]({chapter}/README.md)", f"{label(best)} {best['dtype']}"]
                    + ([device_cell(best)] if devices else [])
                    + [shape, sig(best["ms_median"]), sig(best["floor_ms"]), floor_bound(best) or "—",
                     sig(best["time_over_floor"]),
                     sig(base["ms_median"] / best["ms_median"]) if base else "—",
                     sig(o["ms_median"]) if o else "—", times_official(o, same, best)])
        what = shape_line([best], "T" if shape.startswith("S4") else "L")
        shapes.setdefault(what, {})[shape] = True
    title = ("**Each chapter's fastest version at its headline shape, on each device**" if devices else
             "**Each chapter's fastest version at its headline shape**")
    lines = [title, ""]
    lines += markdown_table(["chapter", "fastest version"] + (["device"] if devices else [])
                            + ["shape", "ms", "floor ms", "bound", "time/floor", "× 01 eager",
                               "official ms", "× official"],
                            "ll" + ("l" if devices else "") + "lrrlrrrr", body)
    named = [f"{' and '.join(names)}: {what}" for what, names in shapes.items()]
    lines += ["", "Shapes: " + "; ".join(named) + ". " + BOUND_NOTE]
    if eager:
        e = next(iter(eager.values()))
        where = (f" on the same device over the row's time; it was timed at S1 on "
                 f"{with_article(device_cell(e))} only" if devices else
                 " over the row's time; it was timed at S1 only")
        lines += ["", f"× 01 eager: the time of 01's GPU eager baseline ({label(e)}, {e['dtype']}) "
                      f"at the same shape{where}."]
    matched = [(o, same, best) for _, _, best, o, same in found if o is not None]
    if matched:
        lines += ["", official_note(matched)]
    lines += ["", provenance([best for _, _, best, _, _ in found], "plots/data/*.csv")]
    return "\n".join(lines)
