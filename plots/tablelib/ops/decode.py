"""The decode step (OP_DECODE, chapter 07): S4 in both forms, the token
loop, T tokens per launch, and a 16-bit state's accuracy."""
import csv

from ..data import DATA, number
from ..markdown import markdown_table
from ..sets import LOOP_STEPS, decode_form, is_loop, is_s4

STATE_PRECISION = "07_decode_kernel_state_precision"  # the accuracy of a 16-bit state (CPU), this op's table
NAME = "decode"
SEQ = "T"  # tokens per launch
HEADLINE = "S4 Mamba-2 b 64"


def s4(form, batch):
    return lambda r: is_s4(r) and decode_form(r) == form and r["batch"] == batch


def summary_shapes():
    return [(f"S4 {name} b {batch}", s4(form, batch))
            for form, name in (("m2", "Mamba-2"), ("m1", "Mamba-1")) for batch in (1, 64)]


def row_groups(rows):
    groups = []
    for form, name in (("m2", "Mamba-2"), ("m1", "Mamba-1")):
        mine = [r for r in rows if decode_form(r) == form]
        groups += [(f"S4 {name}, one token, L2 flushed", [r for r in mine if is_s4(r)]),
                   (f"Token loop {name}, {LOOP_STEPS} steps in place, state hot in L2",
                    [r for r in mine if is_loop(r)]),
                   (f"Tokens per launch {name}",
                    [r for r in mine if not is_loop(r) and r["batch"] == 8]),
                   (f"Other shapes {name}",
                    [r for r in mine if not is_loop(r) and not is_s4(r) and r["batch"] != 8])]
    return groups


def time_targets(chapter):
    return [("S4 Mamba-2 b 64, fp32 state, ≤ 0.040 ms", s4("m2", 64), ("fp32",), 0.040),
            ("S4 Mamba-2 b 64, fp16 state, ≤ 0.021 ms", s4("m2", 64), ("fp16",), 0.021),
            ("S4 Mamba-1 b 64, ≤ 0.010 ms", s4("m1", 64), ("fp32", "fp16", "bf16"), 0.010)]


def official_targets(chapter):
    return [("never slower than the official kernel (S4, batch 1–256)", is_s4, ("fp32", "fp16", "bf16"))]


def read_state_precision():
    """The rows of plots/data/<STATE_PRECISION>.csv as text, or None when the
    file is missing."""
    path = DATA / f"{STATE_PRECISION}.csv"
    if not path.is_file():
        return None
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def precision_section(chapter, chapters):
    """The text between 07's precision markers: plots/data/07_decode_kernel_state_precision.csv."""
    del chapter, chapters  # a CPU computation of its own (plots/data/..._state_precision.csv)
    rows = read_state_precision()
    if rows is None:
        return f"No plots/data/{STATE_PRECISION}.csv yet (`make bench` writes it)."
    body = [[r["state_dtype"], r["state_bytes"], r["tokens"], f"{number(r['y_rel_l2']):.2e}",
             f"{number(r['final_state_rel_l2']):.2e}"] for r in rows]
    return "\n".join(markdown_table(["state stored as", "bytes per element", "tokens", "y rel. L2 (all tokens)",
                                      "final state rel. L2"], "lrrrr", body) +
                     ["", f"Computed on the CPU (`plots/data/{STATE_PRECISION}.csv`): decode_step_cpu, fp32 "
                          "arithmetic, against the fp64 oracle."])


EXTRA_BLOCKS = {"precision": precision_section}
