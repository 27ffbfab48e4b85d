"""The decode step (OP_DECODE, chapter 07): S4 in both forms, the token
loop, T tokens per launch, and a 16-bit state's accuracy."""
from ..data import number, read_text_rows
from ..markdown import markdown_table
from ..sets import LOOP_STEPS, decode_form, is_loop, is_s4

STATE_PRECISION = "07_decode_kernel_state_precision"  # the accuracy of a 16- or 8-bit state (CPU), this op's table
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
            ("S4 Mamba-2 b 64, fp16 state, ≤ 0.021 ms", lambda r: s4("m2", 64)(r) and "state16" in r["name"], ("fp16",),
             0.021),
            ("S4 Mamba-1 b 64, ≤ 0.010 ms", s4("m1", 64), ("fp32", "fp16", "bf16"), 0.010),
            ("S4 Mamba-2 b 64, int8 state, ≤ 0.0130 ms", s4("m2", 64), ("int8",), 0.0130),
            ("S4 Mamba-2 b 256, int8 state, ≤ 1.2× its copy floor", s4("m2", 256), ("int8",),
             lambda r: 1.2 * r["floor_ms"]),
            ("S4 Mamba-1 b 64, int8 state, ≤ 0.0060 ms", s4("m1", 64), ("int8",), 0.0060)]


def official_targets(chapter):
    return [("never slower than the official kernel (S4, batch 1–256)", is_s4, ("fp32", "fp16", "bf16"))]


PRECISION_WINDOWS = ((1, 64), (65, 512), (513, 4096))  # tokens, first and last: the table's columns


def precision_section(chapter, chapters, official):
    """The text between 07's precision markers: plots/data/07_decode_kernel_state_precision.csv,
    y's error over a few windows of tokens (summed from its windows of 64) and the final state's."""
    del chapter, chapters, official  # a CPU computation of its own (plots/data/..._state_precision.csv)
    rows = read_text_rows(STATE_PRECISION)
    if rows is None:
        return f"No plots/data/{STATE_PRECISION}.csv yet (`make bench` writes it)."
    stores = list(dict.fromkeys(r["state"] for r in rows))
    tokens = max(int(r["token_to"]) for r in rows)
    bf16 = None
    body = []
    for name in stores:
        mine = [r for r in rows if r["state"] == name]
        cells = []
        for first, last in PRECISION_WINDOWS:
            inside = [r for r in mine if first <= int(r["token_from"]) and int(r["token_to"]) <= last]
            err, ref = sum(number(r["y_err_sq"]) for r in inside), sum(number(r["y_ref_sq"]) for r in inside)
            cells.append((err / ref) ** 0.5)
        if name == "bf16":
            bf16 = cells[-1]
        body.append([name, f"{number(mine[0]['bytes_per_value']):.2f}"] + [f"{c:.2e}" for c in cells]
                    + [f"{number(mine[0]['final_state_rel_l2']):.2e}", cells[-1]])
    for row in body:
        row[-1] = f"{row[-1] / bf16:.2g}" if bf16 else "—"
    header = (["state stored as", "bytes per value"] + [f"y rel. L2, tokens {a}–{b}" for a, b in PRECISION_WINDOWS]
              + ["final state rel. L2", "late y / bf16's"])
    return "\n".join(markdown_table(header, "lrrrrrr", body) +
                     ["", f"Computed on the CPU (`plots/data/{STATE_PRECISION}.csv`, {tokens} tokens): "
                          "decode_step_cpu, fp32 arithmetic, the state stored after every token, against the "
                          "fp64 oracle. An 8-bit state is one code a value and an fp32 scale a row (per 32: a "
                          "scale every 32 values); `common/codes8.h` says how each is rounded."])


EXTRA_BLOCKS = {"precision": precision_section}
