#!/usr/bin/env python3
"""Times the official Mamba kernels (mamba_ssm) at this repository's benchmark shapes, so the
"official ms" columns of the README tables can be reproduced.

  op               impl                                  official function, shapes, dtypes
  d2d_copy         torch_copy                            a 1 GiB device-to-device copy: this call's copy rate
  mamba1_scan_fwd  official_cuda_fwd                     selective_scan_fn (CUDA) at S1 and S2, fp32 and fp16
  ssd_fwd          official_triton_chunk_scan_combined   mamba_chunk_scan_combined (Triton) at S3, fp16, bf16, fp32
  bidir_fwd        hydra_recipe_triton[_shift]           Hydra's recipe (below) at S3, fp16 and bf16
  decode_mamba2    official_triton                       selective_state_update (Triton) at S4, Mamba-2 form
  decode_mamba1    official_triton                       selective_state_update (Triton) at S4, Mamba-1 form
  mamba3_siso_fwd  official_triton_mamba3_combined[_z]   mamba3_siso_combined (Triton) at S6, bf16, without and with z
  mamba3_siso_step official_triton_mamba3_step           mamba3_siso_step (Triton), one token, batch 1, 64, 256, bf16

The sets (docs/design.md §7; plots/tablelib/sets.py picks our rows by them):
  S1  Mamba-1, d 2048, N 32, L 512, batch 1-16; z, D, delta_bias, softplus; B, C (b, N, L)
  S2  the same with N 16, L 512 ... 65536 at batch 1 and 8
  S3  SSD, heads 32, headdim 64, N 128, groups 1, chunk 256; D, dt_bias, softplus, no z;
      L 512 ... 16384 at batch 1 and 8
  S4  one decode step: Mamba-2 heads 32, headdim 64, N 128, groups 1, no z; Mamba-1 d 2048,
      N 16, z; batch 1 ... 256; the state in the I/O dtype
  S6  Mamba-3 SISO: heads 32, qk heads 1, N 128, headdim 64, 32 angle pairs, chunk 64, D;
      L 2048 and 8192 at batch 1 and 8; the step's SSM state fp32, its k and v states bf16
In fp16 and bf16 rows the activations (and the decode state) are 16-bit; A, D and the dt
bias stay fp32, as in the official modules. Hydra's recipe is the bidirectional scan as
Hydra's code runs it: the batch doubled with time-flipped copies, one causal
mamba_chunk_scan_combined call, the second half flipped back and added to the first, then
D·x. The _shift form is the Hydra form: the backward half has its own dt, B and C, and
each half's output moves one step later in its own time before the sum.

Timing, as the harness's (common/gpu.c): warm-up calls first (the Triton kernels autotune
on their first call), then the median of REPS calls between CUDA events, the L2 flushed
before each by a 512 MiB memset. peak_MiB is torch.cuda.max_memory_allocated during one
call over what was allocated before it (the inputs); bytes_min is the least the call must
move: each input read once, each output written once, a decode state read and written;
GBps_effective is bytes_min over the median time. In decode rows L is 1 (tokens a step);
dim_or_heads is d for Mamba-1 and the heads for Mamba-2; the copy's row gives its elements.

Run:  make official                               (OFFICIAL_OPS=, DTYPES=, BATCHES=, REPS= restrict it)
      python3 tests/official_bench.py [OUT.csv]   (OFFICIAL_OPS=, DTYPES=, BATCHES=, REPS=, or --help's flags)
      MAMBA_SRC=<checkout of https://github.com/state-spaces/mamba> make official
mamba_ssm is the installed package, or the source tree MAMBA_SRC names (its Triton kernels
are pure Python; without the compiled extension selective_scan_cuda the CUDA scan is
skipped with a line saying so).
Writes: OUT.csv, by default plots/data/official_<gpu>_<COMMIT>.csv (gpu: the device's short
name, h100, h200; COMMIT from the environment, else git's HEAD), with the header the tables
read (plots/tablelib/data.py: OFFICIAL_COLUMNS). An earlier file of that name is replaced.
Exit status: 0 every shape timed; 1 a shape failed (the others are written); 2 nothing to
time with (no CUDA device, or a package missing: what to install is printed).
"""
import argparse
import csv
import importlib
import importlib.util
import math
import os
import re
import statistics
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plots"))
from tablelib.data import OFFICIAL_COLUMNS, short_device  # noqa: E402  the tables' reader
from tablelib.sets import OFFICIAL_NAMES  # noqa: E402

DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
F32 = 4  # A, D and the dt bias are fp32 in every row

S1 = dict(dim=2048, N=32, L=512, batches=(1, 2, 4, 8, 16))
S2 = dict(dim=2048, N=16, lengths=tuple(2 ** k for k in range(9, 17)), batches=(1, 8))
S3 = dict(heads=32, headdim=64, N=128, groups=1, chunk=256, lengths=tuple(2 ** k for k in range(9, 15)),
          batches=(1, 8))
S4_M2 = dict(heads=32, headdim=64, N=128, groups=1)
S4_M1 = dict(dim=2048, N=16)
S4_BATCHES = tuple(2 ** k for k in range(9))
S6 = dict(heads=32, qk_heads=1, N=128, headdim=64, angles=32, chunk=64, lengths=(2048, 8192), batches=(1, 8))
S6_STEP_BATCHES = (1, 64, 256)
COPY_BYTES = 1 << 30
FLUSH_BYTES = 512 << 20
WARMUP = 5

INSTALL_TORCH = "pip install torch"
INSTALL_MAMBA = ("pip install mamba-ssm --no-build-isolation\n"
                 "    or MAMBA_SRC=<checkout of https://github.com/state-spaces/mamba> (its Triton kernels "
                 "need no build)")


# ---------------------------------------------------------------- the least bytes each op moves

def mamba1_scan_bytes(dtype, b, d, N, L):
    """u, delta, z in and out (b, d, L); B, C (b, N, L); A (d, N), D and delta_bias (d) fp32."""
    e = DTYPE_BYTES[dtype]
    return 4 * b * d * L * e + 2 * b * N * L * e + d * N * F32 + 2 * d * F32


def ssd_bytes(dtype, b, L, h, p, g, N, backward_inputs=False):
    """x in and out (b, L, h, p); dt (b, L, h); B, C (b, L, g, N); A, D, dt_bias (h) fp32;
    with backward_inputs (the Hydra form) the backward direction's dt, B and C too."""
    e = DTYPE_BYTES[dtype]
    per_direction = b * L * h * e + 2 * b * L * g * N * e
    return 2 * b * L * h * p * e + per_direction * (2 if backward_inputs else 1) + 3 * h * F32


def decode_mamba2_bytes(dtype, b, h, p, g, N):
    """The state (b, h, p, N) read and written; x in and out (b, h, p); dt (b, h);
    B, C (b, g, N); A, D, dt_bias (h) fp32."""
    e = DTYPE_BYTES[dtype]
    return 2 * b * h * p * N * e + 2 * b * h * p * e + b * h * e + 2 * b * g * N * e + 3 * h * F32


def decode_mamba1_bytes(dtype, b, d, N):
    """The state (b, d, N) read and written; x, dt, z in and out (b, d); B, C (b, N);
    A (d, N), D and dt_bias (d) fp32."""
    e = DTYPE_BYTES[dtype]
    return 2 * b * d * N * e + 4 * b * d * e + 2 * b * N * e + d * N * F32 + 2 * d * F32


def mamba3_bytes(dtype, b, L, h, g, N, p, S, z):
    """q, k (b, L, g, N); v in, y out and z (b, L, h, p); trap, angles in the I/O dtype;
    dt·A and dt (b, h, L), the q and k biases (h, N) and D (h) fp32."""
    e = DTYPE_BYTES[dtype]
    return (2 * b * L * g * N + (3 if z else 2) * b * L * h * p + b * h * L + b * L * h * S) * e + \
        (2 * b * h * L + 2 * h * N + h) * F32


def mamba3_step_bytes(dtype, b, h, g, N, p, S):
    """One token: the four states read and written (angles and H fp32, k and v in the I/O
    dtype), and mamba3_bytes' tensors at L 1 without z."""
    e = DTYPE_BYTES[dtype]
    return 2 * (b * h * S * F32 + b * h * p * N * F32 + b * h * (N + p) * e) + mamba3_bytes(dtype, b, 1, h, g, N, p, S,
                                                                                             False)


# ---------------------------------------------------------------- finding the official code

def missing_packages(mamba_src):
    """The install lines for what is missing, found without importing anything."""
    have = lambda name: importlib.util.find_spec(name) is not None  # noqa: E731
    lines = []
    if not have("torch"):
        lines.append(f"{INSTALL_TORCH}   (PyTorch with CUDA)")
    python_deps = [name for name in ("triton", "einops", "packaging") if not have(name)]
    if python_deps:
        lines.append(f"pip install {' '.join(python_deps)}   (what the Triton kernels import)")
    if mamba_src:
        if not (Path(mamba_src) / "mamba_ssm" / "ops" / "triton" / "ssd_combined.py").is_file():
            lines.append(f"MAMBA_SRC={mamba_src} holds no mamba_ssm/ops/triton/ssd_combined.py: "
                         "point it at a checkout of https://github.com/state-spaces/mamba")
    elif not have("mamba_ssm"):
        lines.append(INSTALL_MAMBA)
    return lines


def import_mamba_ssm(mamba_src):
    """The mamba_ssm package: the whole of it where it imports, else a bare package over its
    folder, so that the pure-Python Triton modules load without the compiled extension
    that mamba_ssm/__init__.py needs. Returns (package folder, version, how it was loaded)."""
    if mamba_src:
        sys.path.insert(0, str(Path(mamba_src).resolve()))
    try:
        package = importlib.import_module("mamba_ssm")
        folder = Path(package.__file__).parent
        how = "the package"
    except Exception as error:  # most often: No module named 'selective_scan_cuda'
        for name in [m for m in sys.modules if m == "mamba_ssm" or m.startswith("mamba_ssm.")]:
            del sys.modules[name]
        spec = importlib.util.find_spec("mamba_ssm")
        folder = Path(list(spec.submodule_search_locations)[0])
        package = types.ModuleType("mamba_ssm")
        package.__path__ = [str(folder)]
        sys.modules["mamba_ssm"] = package
        how = f"its Triton modules only (import mamba_ssm: {first_line(error)})"
    init = folder / "__init__.py"
    found = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", init.read_text()) if init.is_file() else None
    return folder, found.group(1) if found else "unknown version", how


def official_functions(mamba_src):
    """{name: function} of the official kernels timed here; the CUDA scan's entry is
    the reason it is missing (a str) where selective_scan_cuda does not import."""
    folder, version, how = import_mamba_ssm(mamba_src)
    print(f"official_bench: mamba_ssm {version} from {folder}: {how}")
    ssd = importlib.import_module("mamba_ssm.ops.triton.ssd_combined")
    step = importlib.import_module("mamba_ssm.ops.triton.selective_state_update")
    found = {"mamba_chunk_scan_combined": ssd.mamba_chunk_scan_combined,
             "selective_state_update": step.selective_state_update}
    for module, name in (("mamba_ssm.ops.triton.mamba3.mamba3_siso_combined", "mamba3_siso_combined"),
                         ("mamba_ssm.ops.triton.mamba3.mamba3_siso_step", "mamba3_siso_step")):
        try:  # Mamba-3 came later than the rest: an older mamba_ssm lacks it
            found[name] = getattr(importlib.import_module(module), name)
        except Exception as error:
            found[name] = f"{name} is not in this mamba_ssm ({first_line(error)})"
    try:  # mamba_ssm 2.x imports the interface without the extension and fails at the first call
        importlib.import_module("selective_scan_cuda")
        scan = importlib.import_module("mamba_ssm.ops.selective_scan_interface")
        found["selective_scan_fn"] = scan.selective_scan_fn
    except Exception as error:
        found["selective_scan_fn"] = (f"selective_scan_fn needs the compiled extension selective_scan_cuda "
                                      f"({first_line(error)}); pip install mamba-ssm --no-build-isolation builds it")
    return found


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


# ---------------------------------------------------------------- timing

class Runner:
    """Times one call at a time and writes a row a call: the filters of the command line,
    the L2 flush buffer, the CSV and the count of failures."""

    def __init__(self, torch, official, args, out):
        self.torch, self.official, self.reps, self.out = torch, official, args.reps, out
        self.want_dtypes, self.want_batches = args.dtypes, args.batches
        self.dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
        self.flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        self.rows = self.failed = 0

    def found(self, op, name):
        """The official function name, or None with a line saying why op is skipped."""
        function = self.official[name]
        if isinstance(function, str):
            print(f"{op}: skipped: {function}")
            return None
        return function

    def dtypes(self, *names):
        return [n for n in names if not self.want_dtypes or n in self.want_dtypes]

    def batches(self, *sizes):
        return [b for b in sizes if not self.want_batches or b in self.want_batches]

    def randn(self, *shape, dtype="fp32", scale=1.0):
        return self.torch.randn(shape, device="cuda", dtype=self.dtype[dtype]) * scale

    def dt_bias(self, n):
        """Mamba's initial dt bias (fp32): softplus(bias) log-uniform in [0.001, 0.1]."""
        torch, lo, hi = self.torch, math.log(1e-3), math.log(0.1)
        dt = torch.exp(lo + (hi - lo) * torch.rand(n, device="cuda"))
        return dt + torch.log(-torch.expm1(-dt))

    def median_ms(self, call):
        torch = self.torch
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for r in range(self.reps):
            self.flush.fill_(r & 0xFF)
            start.record()
            call()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return statistics.median(times)

    def peak_mib(self, call):
        """What one call allocates at most beyond what was live before it."""
        torch = self.torch
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out = call()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - before
        del out
        return peak / 2 ** 20

    def time(self, op, impl, dtype, batch, dim_or_heads, N, L, bytes_min, setup):
        """Times setup()'s call (setup makes the inputs and returns the call) and writes its row;
        a failure (out of memory, most often) is reported and counted, and the run goes on."""
        assert impl in OFFICIAL_NAMES or op == "d2d_copy", impl
        label = f"{op:<15} {impl:<36} {dtype:<4} b {batch:<3} {dim_or_heads:>5} N {N:<3} L {L:<5}"
        call = None
        try:
            call = setup()
            for _ in range(WARMUP):
                call()
            peak = self.peak_mib(call)
            ms = self.median_ms(call)
        except Exception as error:
            print(f"{label} failed: {first_line(error)}", flush=True)
            self.failed += 1
            return
        finally:
            call = None
            self.torch.cuda.empty_cache()
        gbps = bytes_min / (ms * 1e-3) / 1e9
        self.out.writerow([op, impl, dtype, batch, dim_or_heads, N, L, f"{ms:.5f}", f"{peak:.1f}", bytes_min,
                           f"{gbps:.1f}"])
        self.rows += 1
        print(f"{label} {ms:10.5f} ms {gbps:8.1f} GB/s {peak:9.1f} MiB", flush=True)


# ---------------------------------------------------------------- one function an op

def d2d_copy(run):
    """One 1 GiB device-to-device copy (fp32): the copy rate this call's device reaches,
    against which the other rows' GB/s read. The filters of dtype and batch leave it in."""
    n = COPY_BYTES // 4

    def setup():
        src, dst = run.randn(n), run.randn(n)
        return lambda: dst.copy_(src)

    run.time("d2d_copy", "torch_copy", "fp32", 1, n, 0, 0, 2 * COPY_BYTES, setup)


def mamba1_scan_fwd(run):
    """selective_scan_fn at S1 and S2: u, delta, z, B, C in the I/O dtype."""
    scan = run.found("mamba1_scan_fwd", "selective_scan_fn")
    if scan is None:
        return
    torch = run.torch
    shapes = [(S1["dim"], S1["N"], S1["L"], b) for b in run.batches(*S1["batches"])]
    shapes += [(S2["dim"], S2["N"], L, b) for b in run.batches(*S2["batches"]) for L in S2["lengths"]]

    def setup(dtype, b, d, N, L):
        u, delta, z = (run.randn(b, d, L, dtype=dtype, scale=s) for s in (1.0, 0.5, 1.0))
        B, C = run.randn(b, N, L, dtype=dtype), run.randn(b, N, L, dtype=dtype)
        A = -torch.arange(1, N + 1, device="cuda", dtype=torch.float32).repeat(d, 1)  # Mamba's S4D-real init
        D, delta_bias = torch.ones(d, device="cuda"), run.dt_bias(d)
        return lambda: scan(u, delta, A, B, C, D=D, z=z, delta_bias=delta_bias, delta_softplus=True)

    for dtype in run.dtypes("fp32", "fp16"):
        for d, N, L, b in shapes:
            run.time("mamba1_scan_fwd", "official_cuda_fwd", dtype, b, d, N, L, mamba1_scan_bytes(dtype, b, d, N, L),
                     lambda: setup(dtype, b, d, N, L))


def ssd_inputs(run, dtype, b, L, hydra=False):
    """S3's inputs in the official layouts; with hydra, the backward direction's own dt, B, C."""
    torch = run.torch
    h, p, g, N = S3["heads"], S3["headdim"], S3["groups"], S3["N"]
    t = types.SimpleNamespace(
        x=run.randn(b, L, h, p, dtype=dtype), dt=run.randn(b, L, h, dtype=dtype, scale=0.5),
        B=run.randn(b, L, g, N, dtype=dtype), C=run.randn(b, L, g, N, dtype=dtype),
        A=-(1.0 + 15.0 * torch.rand(h, device="cuda")),  # Mamba-2's init: -A uniform in [1, 16]
        D=torch.ones(h, device="cuda"), dt_bias=run.dt_bias(h))
    t.dt_b, t.B_b, t.C_b = t.dt, t.B, t.C
    if hydra:
        t.dt_b = run.randn(b, L, h, dtype=dtype, scale=0.5)
        t.B_b, t.C_b = run.randn(b, L, g, N, dtype=dtype), run.randn(b, L, g, N, dtype=dtype)
    return t


def ssd_fwd(run):
    """mamba_chunk_scan_combined at S3."""
    chunk_scan = run.official["mamba_chunk_scan_combined"]

    def setup(dtype, b, L):
        t = ssd_inputs(run, dtype, b, L)
        return lambda: chunk_scan(t.x, t.dt, t.A, t.B, t.C, chunk_size=S3["chunk"], D=t.D, dt_bias=t.dt_bias,
                                  dt_softplus=True)

    for dtype in run.dtypes("fp16", "bf16", "fp32"):
        for b in run.batches(*S3["batches"]):
            for L in S3["lengths"]:
                run.time("ssd_fwd", "official_triton_chunk_scan_combined", dtype, b, S3["heads"], S3["N"], L,
                         ssd_bytes(dtype, b, L, S3["heads"], S3["headdim"], S3["groups"], S3["N"]),
                         lambda: setup(dtype, b, L))


def hydra_recipe(torch, chunk_scan, t, D_io, shift):
    """Hydra's code path: x, dt, B, C stacked with time-flipped copies (the backward
    direction's own dt, B, C in the Hydra form) into a batch of 2b, one causal call (dt's
    bias and softplus inside it, D outside), the outputs (in the Hydra form first moved one
    step later, each half in its own time) flipped back and summed, then D·x."""
    b = t.x.shape[0]
    y = chunk_scan(torch.cat([t.x, t.x.flip(1)]), torch.cat([t.dt, t.dt_b.flip(1)]), t.A,
                   torch.cat([t.B, t.B_b.flip(1)]), torch.cat([t.C, t.C_b.flip(1)]),
                   chunk_size=S3["chunk"], dt_bias=t.dt_bias, dt_softplus=True)
    if shift:
        y = y.roll(1, dims=1)
        y[:, 0] = 0
    return y[:b] + y[b:].flip(1) + t.x * D_io


def bidir_fwd(run):
    """Hydra's recipe at S3, in the default form and in the Hydra form (impl ..._shift)."""
    torch, chunk_scan = run.torch, run.official["mamba_chunk_scan_combined"]

    def setup(dtype, b, L, shift):
        t = ssd_inputs(run, dtype, b, L, hydra=shift)
        D_io = t.D.to(run.dtype[dtype])[:, None]  # (h, 1): D over the head's p channels
        return lambda: hydra_recipe(torch, chunk_scan, t, D_io, shift)

    for dtype in run.dtypes("fp16", "bf16"):
        for b in run.batches(*S3["batches"]):
            for L in S3["lengths"]:
                for impl, shift in (("hydra_recipe_triton", False), ("hydra_recipe_triton_shift", True)):
                    run.time("bidir_fwd", impl, dtype, b, S3["heads"], S3["N"], L,
                             ssd_bytes(dtype, b, L, S3["heads"], S3["headdim"], S3["groups"], S3["N"], shift),
                             lambda: setup(dtype, b, L, shift))


def decode_mamba2(run):
    """selective_state_update in Mamba2.step's form: dt, A, D and dt_bias per head,
    broadcast over headdim with stride 0 (the kernel's tied-headdim path)."""
    torch, step = run.torch, run.official["selective_state_update"]
    h, p, g, N = S4_M2["heads"], S4_M2["headdim"], S4_M2["groups"], S4_M2["N"]

    def setup(dtype, b):
        state, x = run.randn(b, h, p, N, dtype=dtype), run.randn(b, h, p, dtype=dtype)
        dt = run.randn(b, h, dtype=dtype, scale=0.5)[:, :, None].expand(b, h, p)
        A = -(1.0 + 15.0 * torch.rand(h, device="cuda"))[:, None, None].expand(h, p, N)
        B, C = run.randn(b, g, N, dtype=dtype), run.randn(b, g, N, dtype=dtype)
        D = torch.ones(h, device="cuda")[:, None].expand(h, p)
        dt_bias = run.dt_bias(h)[:, None].expand(h, p)
        return lambda: step(state, x, dt, A, B, C, D=D, z=None, dt_bias=dt_bias, dt_softplus=True)

    for dtype in run.dtypes("fp32", "fp16", "bf16"):
        for b in run.batches(*S4_BATCHES):
            run.time("decode_mamba2", "official_triton", dtype, b, h, N, 1, decode_mamba2_bytes(dtype, b, h, p, g, N),
                     lambda: setup(dtype, b))


def decode_mamba1(run):
    """selective_state_update in Mamba.step's form: A (d, N), z given."""
    torch, step = run.torch, run.official["selective_state_update"]
    d, N = S4_M1["dim"], S4_M1["N"]

    def setup(dtype, b):
        state = run.randn(b, d, N, dtype=dtype)
        x, z = run.randn(b, d, dtype=dtype), run.randn(b, d, dtype=dtype)
        dt = run.randn(b, d, dtype=dtype, scale=0.5)
        A = -torch.arange(1, N + 1, device="cuda", dtype=torch.float32).repeat(d, 1)
        B, C = run.randn(b, N, dtype=dtype), run.randn(b, N, dtype=dtype)
        D, dt_bias = torch.ones(d, device="cuda"), run.dt_bias(d)
        return lambda: step(state, x, dt, A, B, C, D=D, z=z, dt_bias=dt_bias, dt_softplus=True)

    for dtype in run.dtypes("fp32", "fp16", "bf16"):
        for b in run.batches(*S4_BATCHES):
            run.time("decode_mamba1", "official_triton", dtype, b, d, N, 1, decode_mamba1_bytes(dtype, b, d, N),
                     lambda: setup(dtype, b))


def mamba3_inputs(run, b, L):
    """Mamba-3's inputs at S6 in the official layouts (the official tests' ranges): q and k
    RMS-normalized, dt log-uniform in [1e-3, 0.1], dt·A = -(1..16)·dt, trap in [0, 1);
    L None is the step's (no time axis)."""
    torch, bf = run.torch, "bf16"
    h, g, N, p, S = S6["heads"], S6["qk_heads"], S6["N"], S6["headdim"], S6["angles"]
    t = () if L is None else (L,)
    rms = lambda x: x / x.float().pow(2).mean(-1, keepdim=True).sqrt().to(x.dtype)
    dt = torch.exp(math.log(1e-3) + (math.log(0.1) - math.log(1e-3)) * torch.rand((b, h) + t, device="cuda"))
    return dict(q=rms(run.randn(b, *t, g, N, dtype=bf)), k=rms(run.randn(b, *t, g, N, dtype=bf)),
                v=run.randn(b, *t, h, p, dtype=bf), adt=-(1.0 + 15.0 * torch.rand_like(dt)) * dt, dt=dt,
                trap=torch.rand((b, h) + t, device="cuda").to(run.dtype[bf]), q_bias=run.randn(h, N),
                k_bias=run.randn(h, N), angles=run.randn(b, *t, h, S, dtype=bf), D=run.randn(h))


def mamba3_siso_fwd(run):
    """mamba3_siso_combined's forward at S6, bf16, without and with z."""
    combined = run.found("mamba3_siso_fwd", "mamba3_siso_combined")
    if combined is None:
        return
    h, g, N, p, S = (S6[k] for k in ("heads", "qk_heads", "N", "headdim", "angles"))

    def setup(b, L, with_z):
        x = mamba3_inputs(run, b, L)
        z = run.randn(b, L, h, p, dtype="bf16") if with_z else None
        return lambda: combined(x["q"], x["k"], x["v"], x["adt"], x["dt"], x["trap"], x["q_bias"], x["k_bias"],
                                x["angles"], D=x["D"], Z=z, chunk_size=S6["chunk"])

    for b in run.batches(*S6["batches"]):
        for L in S6["lengths"]:
            for with_z in (False, True):
                run.time("mamba3_siso_fwd", "official_triton_mamba3_combined" + ("_z" if with_z else ""), "bf16", b, h,
                         N, L, mamba3_bytes("bf16", b, L, h, g, N, p, S, with_z), lambda: setup(b, L, with_z))


def mamba3_siso_step(run):
    """mamba3_siso_step, one token from the four states: the SSM state fp32, k and v bf16."""
    step = run.found("mamba3_siso_step", "mamba3_siso_step")
    if step is None:
        return
    h, g, N, p, S = (S6[k] for k in ("heads", "qk_heads", "N", "headdim", "angles"))

    def setup(b):
        x = mamba3_inputs(run, b, None)
        states = (run.randn(b, h, S), run.randn(b, h, p, N), run.randn(b, h, N, dtype="bf16"),
                  run.randn(b, h, p, dtype="bf16"))
        return lambda: step(x["q"], x["k"], x["v"], x["adt"], x["dt"], x["trap"], x["q_bias"], x["k_bias"],
                            x["angles"], D=x["D"], Input_States=states)

    for b in run.batches(*S6_STEP_BATCHES):
        run.time("mamba3_siso_step", "official_triton_mamba3_step", "bf16", b, h, N, 1,
                 mamba3_step_bytes("bf16", b, h, g, N, p, S), lambda: setup(b))


BENCHES = (d2d_copy, mamba1_scan_fwd, ssd_fwd, bidir_fwd, decode_mamba2, decode_mamba1, mamba3_siso_fwd,
           mamba3_siso_step)  # run in this order
OPS = tuple(bench.__name__ for bench in BENCHES)  # each function is named as the op it writes


# ---------------------------------------------------------------- the command line

def names(text, allowed, what):
    """The comma-separated items of text, each checked against allowed; None when empty."""
    items = [s.strip() for s in (text or "").split(",") if s.strip()]
    for item in items:
        if item not in allowed:
            raise argparse.ArgumentTypeError(f"unknown {what} {item!r} (one of {', '.join(map(str, allowed))})")
    return items or None


def parse_args(argv):
    env = os.environ.get
    parser = argparse.ArgumentParser(
        description="Times the official Mamba kernels at the benchmark shapes (see the docstring at the top).")
    parser.add_argument("csv", nargs="?", help="output CSV (default plots/data/official_<gpu>_<COMMIT>.csv)")
    parser.add_argument("--ops", default=env("OFFICIAL_OPS"), help=f"comma list of ops, env OFFICIAL_OPS (default all: {','.join(OPS)})")
    parser.add_argument("--dtypes", default=env("DTYPES"), help="comma list of fp32,fp16,bf16, env DTYPES")
    parser.add_argument("--batches", default=env("BATCHES"), help="comma list of batch sizes, env BATCHES")
    parser.add_argument("--reps", type=int, default=int(env("REPS") or 50), help="timed calls a shape, env REPS (50)")
    parser.add_argument("--mamba-src", default=env("MAMBA_SRC"), help="a mamba source checkout, env MAMBA_SRC")
    args = parser.parse_args(argv)
    try:
        args.ops = names(args.ops, OPS, "op") or list(OPS)
        args.dtypes = names(args.dtypes, DTYPE_BYTES, "dtype")
        known = sorted(set(S4_BATCHES) | set(S6_STEP_BATCHES))
        args.batches = [int(b) for b in names(args.batches, [str(b) for b in known], "batch") or []]
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    return args


def default_csv(torch):
    """plots/data/official_<gpu>_<COMMIT>.csv: gpu as the tables read it back from the name."""
    gpu = re.sub(r"[^a-z0-9]", "", (short_device(torch.cuda.get_device_name()) or "").lower()) or "gpu"
    commit = os.environ.get("COMMIT")
    if not commit:
        git = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        commit = git.stdout.strip() if git.returncode == 0 else "nocommit"
    return ROOT / "plots" / "data" / f"official_{gpu}_{commit}.csv"


def main(argv=None):
    args = parse_args(argv)
    missing = missing_packages(args.mamba_src)
    if missing:
        print("official_bench: cannot time the official kernels here; install what is missing:")
        print("\n".join(f"  {line}" for line in missing))
        return 2
    import torch
    if not torch.cuda.is_available():
        print("official_bench: no CUDA device (torch.cuda.is_available() is False); needs an NVIDIA GPU "
              f"and a CUDA build of PyTorch ({INSTALL_TORCH})")
        return 2
    official = official_functions(args.mamba_src)
    import triton
    path = Path(args.csv) if args.csv else default_csv(torch)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    print(f"official_bench: {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; "
          f"median of {args.reps} calls, L2 flushed; -> {path}", flush=True)
    torch.manual_seed(0)
    run = None
    try:  # rows go to OUT.part and replace OUT once timed, also where the run stops early
        with torch.no_grad(), open(part, "w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(OFFICIAL_COLUMNS)
            run = Runner(torch, official, args, out)
            for bench in BENCHES:
                if bench.__name__ in args.ops:
                    bench(run)
                    f.flush()
    finally:
        if run is not None and run.rows:
            os.replace(part, path)
        else:
            part.unlink(missing_ok=True)
    if run.rows == 0:
        print(f"official_bench: no rows; {path} not written")
        return 1 if run.failed else 2
    print(f"official_bench: wrote {path} ({run.rows} rows" + (f", {run.failed} shapes failed)" if run.failed else ")"))
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
