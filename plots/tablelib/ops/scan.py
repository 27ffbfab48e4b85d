"""The Mamba-1 selective scan (OP_SCAN, chapters 01-04): S1 and S2."""
from ..sets import at, is_s1, is_s2

NAME = "scan"
HEADLINE = "S1 b 16"



def summary_shapes():
    return [("S1 b 1", at(is_s1, batch=1)),
            ("S1 b 16", at(is_s1, batch=16)),
            ("S2 b 1, L 8192", at(is_s2, batch=1, seqlen=8192)),
            ("S2 b 8, L 8192", at(is_s2, batch=8, seqlen=8192))]


def row_groups(rows):
    return [("S1", [r for r in rows if is_s1(r)]),
            ("S2", [r for r in rows if is_s2(r) and not is_s1(r)]),
            ("Other shapes", [r for r in rows if not is_s1(r) and not is_s2(r)])]


# The scan chapters' targets differ by chapter: 03 is the fp32 kernel, 04 the 16-bit one.
TIME_TARGETS = {
    "03_fused_cuda": [("S1 b 16, fp32, ≤ 0.15 ms", at(is_s1, batch=16), ("fp32",), 0.15),
                      ("S1 b 1, fp32, ≤ 0.02 ms", at(is_s1, batch=1), ("fp32",), 0.02),
                      ("S2 b 8, L 8192, fp32, ≤ 0.65 ms", at(is_s2, batch=8, seqlen=8192), ("fp32",), 0.65)],
    "04_fp16_half2": [("S1 b 16, fp16/bf16, ≤ 0.12 ms", at(is_s1, batch=16), ("fp16", "bf16"), 0.12),
                      ("S1 b 1, fp16/bf16, ≤ 0.02 ms", at(is_s1, batch=1), ("fp16", "bf16"), 0.02),
                      ("S2 b 8, L 8192, fp16, ≤ 0.60 ms", at(is_s2, batch=8, seqlen=8192), ("fp16",), 0.60)],
}
OFFICIAL_TARGETS = {"04_fp16_half2": [("never slower than the official fp16 kernel (S1)", is_s1, ("fp16",))]}
NO_TARGET = {
    "01_naive_scan": "Chapter 01 has no speed target: its GPU version is the eager baseline later chapters "
                     "are measured against.",
    "02_parallel_scan": "Chapter 02 has no speed target: its scans teach the operator that 03 fuses.",
}


def time_targets(chapter):
    return TIME_TARGETS.get(chapter, [])


def official_targets(chapter):
    return OFFICIAL_TARGETS.get(chapter, [])


def serving(chapter):
    return chapter in TIME_TARGETS


def no_target(chapter):
    return NO_TARGET.get(chapter)
