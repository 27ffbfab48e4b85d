"""The headline table of the top-level README.md, from the front page's run
(plots/data/front.csv, see data.load_front): each chapter's fastest version
at its headline shape, its floor, and its speed-up over chapter 01's eager
baseline and over the official kernel timed in the same device call."""
from .chapters import shape_line
from .data import FRONT
from .markdown import BOUND_NOTE, label, markdown_table, provenance, sig
from .sections import official_note_short, times_official
from .sets import eager_baseline, floor_bound, headline_rows, is_s1


def headline_section(front):
    """The text between the top-level README's headline markers."""
    found = headline_rows(front.chapters, front.official)
    if not found:
        return f"No rows at the chapters' headline shapes in plots/data/{FRONT}.csv."
    eager = eager_baseline(front.chapters)
    body, shapes = [], {}
    for chapter, shape, best, o, same in found:
        base = eager.get(best["batch"]) if is_s1(best) else None
        body.append([f"[{chapter}]({chapter}/README.md)", f"{label(best)} {best['dtype']}", shape,
                     sig(best["ms_median"]), sig(best["floor_ms"]), floor_bound(best) or "—",
                     sig(best["time_over_floor"]),
                     sig(base["ms_median"] / best["ms_median"]) if base else "—",
                     sig(o["ms_median"]) if o else "—", times_official(o, same, best)])
        what = shape_line([best], "T" if shape.startswith("S4") else "L")
        shapes.setdefault(what, {})[shape] = True
    lines = ["**Each chapter's fastest version at its headline shape**", ""]
    lines += markdown_table(["chapter", "fastest version", "shape", "ms", "floor ms", "bound", "time/floor",
                             "× 01 eager", "official ms", "× official"], "lllrrlrrrr", body)
    named = [f"{' and '.join(names)}: {what}" for what, names in shapes.items()]
    lines += ["", "Shapes: " + "; ".join(named) + ". " + BOUND_NOTE]
    if eager:
        e = next(iter(eager.values()))
        lines += ["", f"× 01 eager: the time of 01's GPU eager baseline ({label(e)}, {e['dtype']}) "
                      "at the same shape over the row's time; it was timed at S1 only."]
    matched = [(o, same, best) for _, _, best, o, same in found if o is not None]
    lines += ["", official_note_short(matched, "`plots/data/official_<gpu>_*.csv`") if matched else "Official kernels: none timed in this run."]
    lines += ["", provenance([best for _, _, best, _, _ in found], f"plots/data/{FRONT}.csv")]
    return "\n".join(lines)
