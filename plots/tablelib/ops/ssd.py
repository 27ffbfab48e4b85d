"""Mamba-2's SSD (OP_SSD, chapter 05): S3, its targets, the serving mix, and
the crossover against 03's scan on one problem."""
from ..markdown import integer, label, markdown_table, provenance, sig
from ..sets import at, fastest, is_crossover, is_s3, is_s3_z, main_device

CROSSOVER = "05_crossover_03"  # 03's scan run at the crossover shapes (make bench): the crossover table
NAME = "ssd"
HEADLINE = "S3 b 8, L 8192"



def summary_shapes():
    return [(f"S3 b {batch}, L {seqlen}", at(is_s3, batch=batch, seqlen=seqlen))
            for batch, seqlen in ((1, 512), (8, 8192))]


def row_groups(rows):
    return [("S3", [r for r in rows if is_s3(r)]),
            ("S3 with z", [r for r in rows if is_s3_z(r)]),
            ("Crossover", [r for r in rows if is_crossover(r) and not is_s3(r)]),
            ("Other shapes", [r for r in rows if not is_s3(r) and not is_s3_z(r) and not is_crossover(r)])]


def time_targets(chapter):
    return [("S3 b 8, L 8192, fp16/bf16, ≤ 0.22 ms", at(is_s3, batch=8, seqlen=8192), ("fp16", "bf16"), 0.22),
            ("S3 b 1, L 8192, fp16/bf16, ≤ 0.05 ms", at(is_s3, batch=1, seqlen=8192), ("fp16", "bf16"), 0.05),
            ("S3 b 8, L 512, fp16/bf16, ≤ 0.022 ms", at(is_s3, batch=8, seqlen=512), ("fp16", "bf16"), 0.022),
            ("S3 b 1, L 512, fp16/bf16, ≤ 0.015 ms", at(is_s3, batch=1, seqlen=512), ("fp16", "bf16"), 0.015),
            ("S3 b 8, L 8192, fp32 I/O at fp32 accuracy, ≤ 0.80 ms", at(is_s3, batch=8, seqlen=8192),
             ("fp32",), 0.80)]


def official_targets(chapter):
    return [("never slower than the official kernel (S3, fp16/bf16)", is_s3, ("fp16", "bf16"))]


def serving(chapter):
    return True


SEQ_IDX_TARGET = 3.5  # the serving mix packed against the official SSD with seq_idx
SERVING_ONE_VS_RECTANGLE = True  # the one-sequence time against the rectangle too


def serving_rectangle(chapter):
    """The packed mix and its tokens as one sequence, each against the same
    version's S3 b 8, L 8192 (the same 65,536 tokens a head, as 8 rows)."""
    return "S3 b 8, L 8192", at(is_s3, batch=8, seqlen=8192)


def target_notes(chapter):
    return ["The tensor-pipe target (≥ 50%) is read with Nsight Compute, not from the CSVs: "
            "[tuning.md](tuning.md#the-tensor-pipe-target)."]


def crossover_section(chapter, chapters, official):
    """The text between 05's crossover markers: 03's tuned scan and 05's
    versions on one problem at each N, all on the device 03's rows were
    mostly timed on."""
    del official  # not timed at the crossover shapes
    scan = [r for r in chapters.get(CROSSOVER, []) if is_crossover(r)]
    device = main_device(scan)
    scan = [r for r in scan if r["device"] == device]
    ssd = [r for r in chapters.get(chapter, []) if is_crossover(r) and r["device"] == device]
    fused = [r for r in ssd if r["name"] == "ssd_fused_mma"]
    via = [r for r in ssd if r["name"] == "ssd_via_scan_fused_tuned"]
    body = []
    for n in sorted({r["dstate"] for r in scan} & {r["dstate"] for r in fused}):
        s = fastest([r for r in scan if r["dstate"] == n])
        f = fastest([r for r in fused if r["dstate"] == n])
        v = fastest([r for r in via if r["dstate"] == n])
        body.append([integer(n), sig(s["ms_median"]), sig(s["floor_ms"]),
                     sig(s["exps"] / s["bytes"]),
                     sig(f["ms_median"]), sig(f["floor_ms"]), sig(f["flops"] / f["bytes"]),
                     sig(v["ms_median"]) if v else "—", sig(s["ms_median"] / f["ms_median"])])
    if not body:
        return "No crossover rows in plots/data yet (`make bench` with 05 writes them)."
    first = fastest(scan)
    lines = markdown_table(
        ["N", f"03 {label(first)} {first['dtype']} ms", "03 floor ms", "03 exps/byte",
         f"05 ssd_fused_mma {fastest(fused)['dtype']} ms", "05 floor ms", "05 FLOPs/byte", "05 via 03 ms",
         "03 / 05 fused"], "rrrrrrrrr", body)
    return "\n".join(lines + ["", provenance(scan + fused + via,
                                              f"plots/data/{CROSSOVER}.csv, plots/data/{chapter}.csv")])


EXTRA_BLOCKS = {"crossover": crossover_section}
