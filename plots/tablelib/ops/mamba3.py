"""Mamba-3 SISO (OP_MAMBA3, chapter 08): S6."""
from ..sets import at, is_s6

NAME = "mamba3"
HEADLINE = "S6 b 8, L 8192"



def summary_shapes():
    return [(f"S6 b {batch}, L {seqlen}", at(is_s6, batch=batch, seqlen=seqlen))
            for batch in (1, 8) for seqlen in (2048, 8192)]


def row_groups(rows):
    return [("S6", [r for r in rows if is_s6(r)]), ("Other shapes", [r for r in rows if not is_s6(r)])]


def time_targets(chapter):
    return [("S6 b 8, L 8192, bf16, ≤ 0.45 ms", at(is_s6, batch=8, seqlen=8192), ("bf16",), 0.45),
            ("S6 b 8, L 2048, bf16, ≤ 0.12 ms", at(is_s6, batch=8, seqlen=2048), ("bf16",), 0.12),
            ("S6 b 1, L 8192, bf16, ≤ 0.10 ms", at(is_s6, batch=1, seqlen=8192), ("bf16",), 0.10),
            ("S6 b 1, L 2048, bf16, ≤ 0.04 ms", at(is_s6, batch=1, seqlen=2048), ("bf16",), 0.04)]
