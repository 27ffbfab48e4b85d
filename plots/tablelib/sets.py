"""The benchmark sets (S1 to S4 and the crossover problem), the fastest row of
a group, the devices of rows, what sets a row's floor, chapter 01's eager
baseline, the official timings that match a row (same device, and whether
they come from the same device call), and the shapes of the summary and
headline tables."""
from .data import CALL_COMMIT, SOURCE, short_device

DEFAULT_FLAGS = "z+D+bias+softplus"  # the benchmark sets' flags, as the harness writes them
SSD_FLAGS = "D+bias+softplus"  # S3's flags: no z

CAUSAL = "ssd_fused_mma"               # 05's fused causal kernel: what one direction costs
LOOP_STEPS = 256  # steps of the token loop (LOOP_STEPS in common/bench.c)
DTYPE_ORDER = ("fp32", "fp16", "bf16", "int8", "e4m3")  # int8, e4m3: a decode state in 8-bit codes (fp32 I/O)
# What makes two rows of different versions the same problem: shape, dtype and bytes moved.
CONFIG_SHAPE = ("dtype", "batch", "dim", "heads", "headdim", "groups", "dstate", "seqlen",
                "chunk", "flags", "bytes")
SET_ORDER = ("S1", "S2", "S3", "S3 with z", "S3 Hydra form", "S4 Mamba-2", "S4 Mamba-1",
             "crossover", "other")

OFFICIAL_NAMES = {  # impl -> the official function it times
    "official_cuda_fwd": "`selective_scan_fn` (CUDA)",
    "official_eager_ref": "`selective_scan_ref` (eager)",
    "official_triton_chunk_scan_combined": "`mamba_chunk_scan_combined` (Triton)",
    "official_eager_ssd_minimal": "`ssd_minimal_discrete` (eager)",
    "official_triton": "`selective_state_update` (Triton)",
    "hydra_recipe_triton": "Hydra's recipe: one `mamba_chunk_scan_combined` (Triton) on the batch doubled with flipped copies",
    "hydra_recipe_triton_shift": "Hydra's recipe with its one-step shift",
    "official_triton_mamba3_combined": "`mamba3_siso_combined` (Triton)",
    "official_triton_mamba3_combined_z": "`mamba3_siso_combined` (Triton) with z",
    "official_triton_mamba3_step": "`mamba3_siso_step` (Triton)",
}


def at(pick, **values):
    """A row filter: pick(r) and every column equal to its value."""
    return lambda r: pick(r) and all(r[k] == v for k, v in values.items())


def is_s1(r):
    """Benchmark set S1: d 2048, N 32, L 512 (batch 1..16), G 1, default flags."""
    return (r["dim"] == 2048 and r["groups"] == 1 and r["flags"] == DEFAULT_FLAGS
            and r["dstate"] == 32 and r["seqlen"] == 512)


def is_s2(r):
    """Benchmark set S2: d 2048, N 16, L 512..65536 at batch 1 and 8, G 1,
    default flags (07's Mamba-1 decode rows share all but L)."""
    return (r["dim"] == 2048 and r["groups"] == 1 and r["flags"] == DEFAULT_FLAGS
            and r["dstate"] == 16 and r["seqlen"] >= 512)


def is_s3(r, flags=SSD_FLAGS):
    """Benchmark set S3: h 32, p 64, N 128, g 1, chunk 256, D + dt_bias +
    softplus, no z (L 512..16384, batch 1 and 8)."""
    return (r["heads"] == 32 and r["headdim"] == 64 and r["dstate"] == 128
            and r["groups"] == 1 and r["chunk"] == 256 and r["flags"] == flags)


def is_s3_z(r):
    """S3 with z gating."""
    return is_s3(r, "z+" + SSD_FLAGS)


def is_s3_hydra(r):
    """S3 in the Hydra form of the bidirectional scan (chapter 06)."""
    return is_s3(r, SSD_FLAGS + "+hydra")


def is_s6(r):
    """Benchmark set S6 (Mamba-3 SISO): h 32, g 1 (qk heads), p 64, N 128, z and D
    (L 2048 and 8192, batch 1 and 8)."""
    return (r["heads"] == 32 and r["headdim"] == 64 and r["dstate"] == 128 and r["groups"] == 1
            and r["flags"] == "z+D")


def is_s6_step(r):
    """S6's step: one token from the four states, no z (batch 1, 64, 256)."""
    return (r["heads"] == 32 and r["headdim"] == 64 and r["dstate"] == 128 and r["groups"] == 1
            and r["flags"] == "D+h0" and r["seqlen"] == 1)


def is_crossover(r):
    """The crossover problem: d = h·p = 2048, batch 8, L 4096, no z, any N
    (05 as h 32, p 64, chunk 256; 03 on the Mamba-1 layout)."""
    return (r["dim"] == 2048 and r["batch"] == 8 and r["seqlen"] == 4096
            and r["groups"] == 1 and r["flags"] == SSD_FLAGS
            and (r["heads"] in (0, None) or (r["heads"] == 32 and r["chunk"] == 256)))


def decode_form(r):
    """'m2' (heads > 0) or 'm1'."""
    return "m2" if r["heads"] else "m1"


def is_s4(r):
    """Benchmark set S4, one token per launch, L2 flushed: Mamba-2 h 32, p 64,
    N 128, g 1, no z; Mamba-1 d 2048, N 16, z given (batch 1..256)."""
    if r["seqlen"] != 1 or "loop" in r["flags"]:
        return False
    if decode_form(r) == "m2":
        return (r["heads"] == 32 and r["headdim"] == 64 and r["dstate"] == 128
                and r["groups"] == 1 and r["flags"] == SSD_FLAGS)
    return r["dim"] == 2048 and r["dstate"] == 16 and r["flags"] == DEFAULT_FLAGS


def is_loop(r):
    """The token loop: one token per step, in place, state hot in L2."""
    return "+loop" in r["flags"]


def set_name(r):
    """The benchmark set of a row, one of SET_ORDER."""
    if is_s4(r):
        return "S4 Mamba-2" if decode_form(r) == "m2" else "S4 Mamba-1"
    for name, pick in (("S1", is_s1), ("S2", is_s2), ("S3", is_s3), ("S3 with z", is_s3_z),
                       ("S3 Hydra form", is_s3_hydra), ("crossover", is_crossover)):
        if pick(r):
            return name
    return "other"


def timed(rows):
    """The rows with a positive median time."""
    return [r for r in rows if r["ms_median"] is not None and r["ms_median"] > 0]


def fastest(rows):
    """The row with the smallest median time, or None."""
    rows = timed(rows)
    return min(rows, key=lambda r: r["ms_median"]) if rows else None


def eager_baseline(chapters):
    """{batch: S1 row} of the GPU eager baseline (the first chapter's lowest
    version whose name contains "eager", timed at S1), or {}.
    chapters: the front page's run (one device)."""
    for chapter in sorted(chapters):
        rows = [r for r in timed(chapters[chapter]) if is_s1(r) and "eager" in r["name"]]
        if rows:
            first = min(r["version"] for r in rows)
            return {r["batch"]: r for r in rows if r["version"] == first}
    return {}


# ---------------------------------------------------------------- devices

def devices_and_commits(rows):
    """The devices and the commits of rows, each in order of first appearance."""
    devices = list(dict.fromkeys(r["device"] for r in rows if r["device"]))
    commits = list(dict.fromkeys(r["commit"] for r in rows if r["commit"]))
    return devices, commits


def by_device(rows):
    """[(device, its rows)]: rows by device, in order of first appearance."""
    groups = {}
    for r in rows:
        groups.setdefault(r["device"], []).append(r)
    return list(groups.items())


def main_device(rows):
    """The device most of rows were timed on (the first one on a tie), or None:
    the device a figure draws where a series has rows on it."""
    groups = by_device(rows)
    return max(groups, key=lambda g: len(g[1]))[0] if groups else None


def one_device(rows, main, key=lambda r: r["version"]):
    """rows with each series (the rows of one key) from a single device: main
    where the series has rows on it, else the device of its first row; a
    figure never draws two devices on one line."""
    picked = {}
    for r in rows:
        picked.setdefault(key(r), r["device"])
        if r["device"] == main:
            picked[key(r)] = main
    return [r for r in rows if r["device"] == picked[key(r)]]


def device_suffix(r, main):
    """' (H100)' for a row timed on another device than main, else ''."""
    return "" if r["device"] == main else f" ({short_device(r['device']) or 'unrecorded device'})"


def one_device_note(rows):
    """How a figure of rows from several devices drew them (see one_device),
    as a line under its title; '' for rows of one device."""
    if len(devices_and_commits(rows)[0]) < 2:
        return ""
    return (f"\neach line from one device: the {short_device(main_device(rows))}'s rows where "
            "it has them, else the device named in the line's label")


def floor_terms(r):
    """{'bytes': ms, 'exp2': ms} of the row's floor, from its bytes over the
    probed copy rate and its exps over the probed exp2 rate."""
    terms = {}
    if r["bytes"] is not None and r["bw_gbps"]:
        terms["bytes"] = r["bytes"] / r["bw_gbps"] / 1e6
    if r["exps"] is not None and r["exp_rate"]:
        terms["exp2"] = r["exps"] / r["exp_rate"] * 1e3
    return terms


def floor_bound(r):
    """Which term sets the row's floor: 'bytes', 'exp2' or 'tensor'; None
    without a floor. A floor the tables recomputed names its term (refloor);
    for one its run wrote, 'tensor' when the floor is over 5% above both other
    terms (the run's own matrix rate is not in the row)."""
    if r.get("floor_bound"):
        return r["floor_bound"]
    terms = floor_terms(r)
    if r["floor_ms"] is None or not terms:
        return None
    bound = max(terms, key=terms.get)
    if r["flops"] and r["floor_ms"] > 1.05 * terms[bound]:
        return "tensor"
    return bound


# ---------------------------------------------------------------- official timings

def official_ssd(official, device):
    """{(impl, dtype, batch, L): ms} of the official SSD forward at S3 on the
    device (short name, "H200"), the last file's where several have it."""
    return {(r["impl"], r["dtype"], r["batch"], r["L"]): r["ms_median"]
            for r in official
            if r["op"] == "ssd_fwd" and r["impl"] in OFFICIAL_NAMES and r["device"] == device
            and r["dim_or_heads"] == 32 and r["N"] == 128 and r["ms_median"] is not None}


def official_decode(official, device):
    """{(form, dtype, batch): ms} of the official Triton decode step at S4 on
    the device (short name, "H200")."""
    return {("m1" if r["op"] == "decode_mamba1" else "m2", r["dtype"], r["batch"]): r["ms_median"]
            for r in official
            if r["op"] in ("decode_mamba1", "decode_mamba2") and r["impl"] == "official_triton"
            and r["device"] == device and r["ms_median"] is not None}


def same_call(official_row, ours):
    """Whether the official row was timed in the same device call as our row:
    its file is named ..._<commit>.csv with our row's commit."""
    match = CALL_COMMIT.search(official_row[SOURCE])
    return bool(match) and match.group(1) == ours["commit"]


def official_kernel_rows(official, r):
    """The official kernel's rows at our row's shape on our row's device, in
    file name order: selective_scan_fn at S1 and S2 in the row's dtype, mamba_chunk_scan_combined
    at S3 in the row's dtype (causal rows), Hydra's recipe (mamba_chunk_scan_combined on the batch
    doubled with flipped copies; with its shift for the Hydra form) at S3 for the bidirectional
    rows, selective_state_update at S4 where it moves the row's bytes (its fp16 rows keep the
    state in fp16, its fp32 rows in fp32)."""
    def timed_here(o):
        return (o["ms_median"] is not None and o["batch"] == r["batch"]
                and o["device"] is not None and o["device"] == short_device(r["device"]))
    if is_s1(r) or is_s2(r):
        return [o for o in official if timed_here(o) and o["op"] == "mamba1_scan_fwd"
                and o["impl"] == "official_cuda_fwd" and o["dtype"] == r["dtype"]
                and o["dim_or_heads"] == r["dim"] and o["N"] == r["dstate"] and o["L"] == r["seqlen"]]
    from .ops import spec  # the ops' modules read this one's sets
    if spec(r["chapter"]).NAME == "bidir" and (is_s3(r) or is_s3_hydra(r)):
        impl = "hydra_recipe_triton_shift" if is_s3_hydra(r) else "hydra_recipe_triton"
        return [o for o in official if timed_here(o) and o["op"] == "bidir_fwd"
                and o["impl"] == impl and o["dtype"] == r["dtype"]
                and o["dim_or_heads"] == r["heads"] and o["N"] == r["dstate"] and o["L"] == r["seqlen"]]
    if is_s3(r):  # the official SSD kernel is causal
        return [o for o in official if timed_here(o) and o["op"] == "ssd_fwd"
                and o["impl"] == "official_triton_chunk_scan_combined" and o["dtype"] == r["dtype"]
                and o["dim_or_heads"] == r["heads"] and o["N"] == r["dstate"] and o["L"] == r["seqlen"]]
    if spec(r["chapter"]).NAME == "mamba3" and (is_s6(r) or is_s6_step(r)):  # the official kernels are bf16
        # the official step keeps an fp32 state whatever its I/O: a step of any I/O dtype with an
        # fp32 state here is its match (a 16-bit state is not)
        from .ops.mamba3 import fp32_state
        if is_s6_step(r) and not fp32_state(r):
            return []
        op, impl = ("mamba3_siso_step", "official_triton_mamba3_step") if is_s6_step(r) else \
            ("mamba3_siso_fwd", "official_triton_mamba3_combined_z")
        return [o for o in official if timed_here(o) and o["op"] == op and o["impl"] == impl
                and (o["dtype"] == r["dtype"] or is_s6_step(r)) and o["N"] == r["dstate"] and o["L"] == r["seqlen"]]
    if is_s4(r):
        op = "decode_mamba2" if decode_form(r) == "m2" else "decode_mamba1"
        return [o for o in official if timed_here(o) and o["op"] == op
                and o["impl"] == "official_triton" and o["bytes_min"] == r["bytes"]]
    return []


def official_match(official, r):
    """(best, same) at our row's shape: best, the official kernel's fastest
    row over every run on our row's device (what a speed-up is taken
    against), and same, its row
    from our row's device call or None (a speed-up is claimed only then);
    (None, None) where it was never timed."""
    rows = official_kernel_rows(official, r)
    if not rows:
        return None, None
    same = next((o for o in rows if same_call(o, r)), None)
    return min(rows, key=lambda o: o["ms_median"]), same


def official_comparisons(rows, official):
    """[(best official row, same-call official row or None, our row)]: at every shape of rows where the
    official kernel was timed, our fastest version there on each device (same
    dtype and bytes moved) and the official row that official_match picks."""
    shapes = {}
    for r in timed(rows):
        if not is_loop(r):
            shapes.setdefault(tuple(r[k] for k in CONFIG_SHAPE + ("device",)), []).append(r)
    found = []
    for group in shapes.values():
        best = fastest(group)
        o, same = official_match(official, best)
        if o is not None:
            found.append((o, same, best))
    devices = [d for d, _ in by_device(rows)]
    found.sort(key=lambda m: (SET_ORDER.index(set_name(m[2])), DTYPE_ORDER.index(m[2]["dtype"]),
                              m[2]["batch"], m[2]["dstate"], m[2]["seqlen"], devices.index(m[2]["device"])))
    return found


# ---------------------------------------------------------------- headline

def headline_rows(chapters, official):
    """[(chapter, shape, fastest row, official row, same call?)]: each
    chapter's fastest version at its headline shape, with the official
    kernel's row there (see official_match). chapters: the front page's run
    (one device)."""
    from .ops import headline_shape  # the ops' modules read this one's sets
    found = []
    for chapter in sorted(chapters):
        if headline_shape(chapter) is None:
            continue
        shape, pick = headline_shape(chapter)
        here = timed([r for r in chapters[chapter] if pick(r)])
        best = fastest(here)
        if best is None:
            continue
        # Within 1% of the fastest, a row the official kernel was timed
        # against says more (bf16 ties fp16), most of all one it was timed
        # against in the same call.
        near = [r for r in here if r["ms_median"] <= 1.01 * best["ms_median"] and official_match(official, r)[0]]
        best = fastest([r for r in near if official_match(official, r)[1]]) or fastest(near) or best
        found.append((chapter, shape, best, *official_match(official, best)))
    return found
