"""The bidirectional Mamba-2 scan (OP_BIDIR, chapter 06): S3 in the default
and the Hydra form, against one causal pass of the SSD chapter and against
the official recipe (Hydra's)."""
from ..chapters import on_summary_device
from ..data import load_front
from ..markdown import integer, label, markdown_table, mib, provenance, sig
from ..sets import fastest, is_s3, is_s3_hydra, main_device, official_match, timed
from . import chapters_of

NAME = "bidir"
HEADLINE = "S3 default form, b 8, L 8192"
BIDIR_TWICE = "bidir_twice_fused_mma"  # 05's fused kernel run twice on flipped copies: the 1x


def s3_shapes(prefix, pick):
    return [(f"{prefix} b {batch}, L {seqlen}",
             lambda r, b=batch, L=seqlen: pick(r) and r["batch"] == b and r["seqlen"] == L)
            for batch, seqlen in ((1, 512), (8, 8192))]


def summary_shapes():
    return s3_shapes("S3 default form,", is_s3) + s3_shapes("S3 Hydra form,", is_s3_hydra)


def row_groups(rows):
    return [("S3, default form", [r for r in rows if is_s3(r)]),
            ("S3, Hydra form", [r for r in rows if is_s3_hydra(r)]),
            ("Other shapes", [r for r in rows if not is_s3(r) and not is_s3_hydra(r)])]


TARGET_SHAPES = ((1, 512), (8, 8192))  # (batch, L) of S3's speed targets


def recipe_target(chapter, measured, verdict, fused, official):
    """06's default form against the official recipe (Hydra's: one
    mamba_chunk_scan_combined on the batch doubled with flipped copies) at
    b 8, L 8192, against the recipe's best of every run on that device: the
    fastest fused row where the recipe was timed in its device call, else the
    front page's run, the one device call that times every chapter."""
    what = ("against the official recipe (one `mamba_chunk_scan_combined` call on the batch doubled with "
            "flipped copies; target ≥ 3.5×)")
    ours, where = fused, "in its device call"
    best, same = official_match(official, ours)
    if same is None:
        front = load_front()
        ours = front and fastest([r for r in timed(front.chapters.get(chapter, [])) if r["dtype"] == "fp16"
                                  and is_s3(r) and r["batch"] == 8 and r["seqlen"] == 8192])
        best, same = official_match(front.official, ours) if ours else (None, None)
        where = "in the front page's run"
    if same is None:
        return what + ": not timed"
    measured.append(ours)
    ratio = best["ms_median"] / ours["ms_median"]
    return (f"{what}: {sig(ratio)}× against the recipe's best {sig(best['ms_median'])} ms ({label(ours)} "
            f"{sig(ours['ms_median'])} ms {where}, the recipe {sig(same['ms_median'])} in the same call; "
            f"{verdict(ratio >= 3.5)})")


DEFAULT_MS = 0.55     # docs/design.md §7: the default form at b 8, L 8192, fp16 (ms)
HYDRA_WITHIN = 0.05  # the Hydra form within 5% of the default


def targets_section(chapter, chapters, official, front):
    """06's S3 rows in fp16: the fastest fused version against 05 run twice
    and against the causal 05 at the same shape, both forms, and the
    chapter's targets at b 8, L 8192 (docs/design.md §7: the default form in
    at most DEFAULT_MS, Hydra within HYDRA_WITHIN of the default form, at
    least 3.5x faster than the official recipe)."""
    del front  # recipe_target reads the front page's run where it needs it
    causal_chapter = next(iter(chapters_of("ssd", chapters)), None)  # the causal SSD's chapter
    rows = [r for r in timed(chapters.get(chapter, [])) if r["dtype"] == "fp16"]
    # every time compared is of one device: the targets' (docs/design.md §7) where 06 has rows on it
    device = main_device(on_summary_device(rows))
    rows = [r for r in rows if r["device"] == device]
    ssd = [r for r in timed(chapters.get(causal_chapter, [])) if is_s3(r) and r["device"] == device]
    causal_best = [r for r in ssd if r["dtype"] == "fp16"]
    body, measured, best_at = [], [], {}
    for form, pick in (("default", is_s3), ("Hydra", is_s3_hydra)):
        for batch, seqlen in TARGET_SHAPES:
            here = [r for r in rows if pick(r) and r["batch"] == batch and r["seqlen"] == seqlen]
            twice = fastest([r for r in here if r["name"] == BIDIR_TWICE])
            fused = fastest([r for r in here if r["name"] != BIDIR_TWICE])
            causal = fastest([r for r in causal_best if r["batch"] == batch and r["seqlen"] == seqlen])
            if fused is None or twice is None:
                continue
            best_at[(form, batch, seqlen)] = (fused, twice, causal)
            measured += [x for x in (fused, twice, causal) if x]
            body.append([form, integer(batch), integer(seqlen), label(fused), sig(fused["ms_median"]),
                         sig(twice["ms_median"]), sig(twice["ms_median"] / fused["ms_median"]),
                         sig(causal["ms_median"]) if causal else "—",
                         sig(fused["ms_median"] / causal["ms_median"]) if causal else "—",
                         mib(twice["peak_mib"]), mib(fused["peak_mib"])])
    if not body:
        return "No fp16 S3 rows of 06 in plots/data yet."
    lines = ["**S3, fp16** (h 32, p 64, N 128, g 1, chunk 256, D, dt_bias, softplus, no z): the fastest "
             "fused version against 05's fused kernel run twice on flipped copies and against one causal "
             "pass of 05's fastest fp16 version at the same shape.", ""]
    lines += markdown_table(["form", "batch", "L", "fastest fused version", "ms", "twice ms",
                             "× faster than twice", "fastest causal 05 ms", "× causal", "peak MiB twice",
                             "peak MiB fused"], "lrrlrrrrrrr", body)
    d, hy = best_at.get(("default", 8, 8192)), best_at.get(("Hydra", 8, 8192))
    if d:
        fused, twice, causal = d
        verdict = lambda ok: "met" if ok else "**not met**"
        targets = []
        targets.append(f"the default form {sig(fused['ms_median'])} ms ({label(fused)}; target ≤ {DEFAULT_MS} ms: "
                       f"{verdict(fused['ms_median'] <= DEFAULT_MS)})")
        best = fastest([r for r in causal_best if r["batch"] == 8 and r["seqlen"] == 8192])
        if best:
            targets.append(f"{sig(fused['ms_median'] / best['ms_median'])}× the fastest causal 05 "
                           f"({label(best)}, {sig(best['ms_median'])} ms)")
            measured.append(best)
        if hy:
            extra = hy[0]["ms_median"] / fused["ms_median"] - 1
            targets.append(f"the Hydra form {abs(extra) * 100:.1f}% {'slower' if extra > 0 else 'faster'} than the "
                           f"default (target within {HYDRA_WITHIN:.0%}: {verdict(abs(extra) <= HYDRA_WITHIN)})")
        targets.append(recipe_target(chapter, measured, verdict, fused, official))
        lines += ["", "Targets, fp16, batch 8, L 8192: " + "; ".join(targets) + ". Against 05 run twice: "
                  f"{sig(twice['ms_median'] / fused['ms_median'])}× faster."]
    lines += ["", provenance(measured, f"plots/data/{chapter}.csv, plots/data/{causal_chapter}.csv", floors=False)]
    return "\n".join(lines)
