"""Reading plots/data/*.csv: the harness's chapter rows and the official
Mamba timings, with every number converted to a float (None when empty or
'nan'), and the front page's run (front.csv and its official file)."""
import csv
import math
import re
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "plots" / "data"

CHAPTER_COLUMNS = (
    "chapter,version,name,dtype,batch,dim,heads,headdim,groups,dstate,seqlen,chunk,"
    "flags,ms_median,ms_min,bytes,exps,flops,gbps,bw_gbps,exp_rate,floor_ms,"
    "time_over_floor,peak_mib,workspace_mib,rel_l2_err,device,commit").split(",")
OFFICIAL_COLUMNS = ("op,impl,dtype,batch,dim_or_heads,N,L,ms_median,peak_MiB,"
                    "bytes_min,GBps_effective").split(",")
TEXT_COLUMNS = {"chapter", "name", "dtype", "flags", "device", "commit", "op", "impl"}
# What makes two rows the same measurement: a later row replaces an earlier one.
# Rows of different devices are different measurements.
CONFIG_COLUMNS = ("version", "name", "dtype", "batch", "dim", "heads", "headdim",
                  "groups", "dstate", "seqlen", "chunk", "flags", "device")

SOURCE = "_file"  # an official row's file name in plots/data
# An official file is named official_<device>[_...].csv: official_h200.csv,
# official_h100_05_run3_<commit>.csv; its rows get the device ("H200") under "device".
OFFICIAL_FILE = re.compile(r"^official_([a-z0-9]+)(?:_|\.csv$)")
# A GPU's short name in its full name: "NVIDIA H100 80GB HBM3" -> "H100".
SHORT_DEVICE = re.compile(r"\b[A-Z]{1,2}[0-9]{2,4}[A-Z]?\b")
# An official file named ..._<commit>.csv was timed in the same device call as
# the chapter rows of that commit.
CALL_COMMIT = re.compile(r"_([0-9a-f]{12})\.csv$")

FRONT = "front"  # the front page's run (`make front`): every chapter at the front page's shapes
PROBE = "probe_"  # plots/data/probe_<gpu>.csv: a device's probed rates (`make probe`), the floors' matrix rate
PROBE_COLUMNS = ("device,copy_gbps,exp_rate,mma_sync_tflops,wgmma_fp16_tflops,wgmma_bf16_tflops,"
                 "commit").split(",")


def number(text):
    """The float in text, or None (empty, 'nan', not a number)."""
    try:
        x = float(text)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def short_device(name):
    """A GPU's short name, as official file names give it: "H100" for
    "NVIDIA H100 80GB HBM3", "H200" for "NVIDIA H200"; the name without its
    vendor where it holds no model number; None for no name."""
    if not name:
        return None
    match = SHORT_DEVICE.search(name)
    return match.group(0) if match else name.removeprefix("NVIDIA ").strip()


def official_device(file_name):
    """The device of an official file from its name ("H200" for
    official_h200_05_run1_<commit>.csv), or None."""
    match = OFFICIAL_FILE.match(file_name)
    return match.group(1).upper() if match else None


def read_rows(path, columns):
    """The rows of a CSV whose header holds every name in columns, numbers
    converted; None when the header does not."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or not set(columns) <= set(reader.fieldnames):
            return None
        rows = []
        for raw in reader:
            rows.append({k: (v.strip() if k in TEXT_COLUMNS or v is None else number(v))
                         for k, v in raw.items() if k is not None})
        return rows


def read_text_rows(stem):
    """The rows of plots/data/<stem>.csv as text (a table of its own, not the
    harness's schema), or None when the file is missing."""
    path = DATA / f"{stem}.csv"
    if not path.is_file():
        return None
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def load_probes(data_dir=DATA):
    """{short device: rates}: the last row of each plots/data/probe_<gpu>.csv
    (`make probe`): the device's copy, exp2, mma.sync and dense wgmma rates."""
    probes = {}
    for path in sorted(Path(data_dir).glob(PROBE + "*.csv")):
        rows = read_rows(path, PROBE_COLUMNS)
        for r in rows or []:
            probes[short_device(r["device"])] = r
    return probes


def matrix_tflops(r, probes):
    """The tensor-core rate a row's FLOPs are counted against: the dense
    wgmma rate probed on the row's device (bf16 for bf16 rows, fp16 else),
    or None where that device was never probed."""
    probe = probes.get(short_device(r["device"]))
    if not probe:
        return None
    rate = probe["wgmma_bf16_tflops"] if r["dtype"] == "bf16" else probe["wgmma_fp16_tflops"]
    return rate or probe["mma_sync_tflops"]


def refloor(r, probes):
    """r with floor_ms and time_over_floor recomputed where its FLOPs count:
    max(bytes / its run's copy rate, exps / its run's exp2 rate, FLOPs / the
    device's probed matrix rate, see matrix_tflops), and floor_bound naming the
    term that sets it. Rows without FLOPs, or of a device never probed, keep
    the floor their run wrote."""
    rate = matrix_tflops(r, probes)
    if not r["flops"] or not rate:
        return r
    terms = {"tensor": r["flops"] / (rate * 1e12) * 1e3}
    if r["bytes"] is not None and r["bw_gbps"]:
        terms["bytes"] = r["bytes"] / r["bw_gbps"] / 1e6
    if r["exps"] is not None and r["exp_rate"]:
        terms["exp2"] = r["exps"] / r["exp_rate"] * 1e3
    bound = max(terms, key=terms.get)
    floor = terms[bound]
    ratio = r["ms_median"] / floor if r["ms_median"] is not None else None
    return dict(r, floor_ms=floor, time_over_floor=ratio, floor_bound=bound)


def chapter_rows(path, probes=None):
    """The rows of a CSV in the harness's schema, a repeated measurement by
    its last row, floors recomputed with the probed matrix rate (refloor);
    None when the file is in another schema."""
    rows = read_rows(path, CHAPTER_COLUMNS)
    if rows is None:
        return None
    probes = load_probes(path.parent) if probes is None else probes
    latest = {}
    for r in rows:
        latest[tuple(r[k] for k in CONFIG_COLUMNS)] = refloor(r, probes)
    return list(latest.values())


def official_rows(path):
    """The rows of a CSV in the official timings' schema, each with its file
    name under SOURCE and its device (from the file name) under "device";
    None when the file is in another schema."""
    rows = read_rows(path, OFFICIAL_COLUMNS)
    if rows is None:
        return None
    device = official_device(path.name)
    return [dict(r, **{SOURCE: path.name, "device": device}) for r in rows]


def load_data(data_dir=DATA):
    """({chapter: rows}, official rows) from every CSV in data_dir. A chapter
    is a file in the harness's schema, named by its file name (see
    chapter_rows). Official rows come from files in the official timings'
    schema, in file name order (see official_rows). A file in neither schema
    named <chapter>_<what>.csv is that chapter's own table (a sweep, an
    accuracy table), read by its op's module or a figure script."""
    chapters, official = {}, []
    probes = load_probes(data_dir)
    folders = [d.name for d in ROOT.glob("[0-9][0-9]_*") if d.is_dir()]
    for path in sorted(Path(data_dir).glob("*.csv")):
        if path.stem == FRONT or path.stem.startswith(PROBE):
            continue
        rows = chapter_rows(path, probes)
        if rows is not None:
            chapters[path.stem] = rows
            continue
        rows = official_rows(path)
        if rows is not None:
            official += rows
            continue
        if not any(path.stem.startswith(f + "_") for f in folders):  # <chapter>_<what>.csv: its own table
            print(f"tables: {path}: unknown header, skipped", file=sys.stderr)
    return chapters, official


class Front(NamedTuple):
    """The front page's run: one device call of `make front` (tests/front.sh)."""
    chapters: dict      # {chapter: rows}, by the rows' chapter column
    official: list      # the official rows of every run on the run's device: a speed-up is taken
                        # against the official kernel's best and given where the same call timed it
    device: str         # the one device and the one commit of every row
    commit: str
    official_file: str  # the official file of the same call in plots/data, or None where there is none


def load_front(data_dir=DATA):
    """The front page's run from data_dir/front.csv, the official timings of
    every run on its device, and the name of the same call's
    (official_<device>_front_<commit>.csv, as tests/front.sh names them); None
    without front.csv. Exits with a message when front.csv is not one run:
    rows of one device and one commit."""
    path = Path(data_dir) / f"{FRONT}.csv"
    if not path.is_file():
        return None
    rows = chapter_rows(path)
    if rows is None:
        sys.exit(f"{path}: not in the harness's schema")
    devices, commits = {r["device"] for r in rows}, {r["commit"] for r in rows}
    if len(devices) != 1 or len(commits) != 1:
        sys.exit(f"{path}: rows of devices {sorted(devices)} and commits {sorted(commits)}; the front "
                 "page is drawn from one run, one device and one commit (`make front` on a GPU)")
    (device,), (commit,) = devices, commits
    chapters = {}
    for r in rows:
        chapters.setdefault(r["chapter"], []).append(r)
    gpu = short_device(device)  # the file name's device, as tests/front.sh writes it
    same_call = Path(data_dir) / f"official_{(gpu or 'gpu').lower()}_front_{commit}.csv"
    official = [o for o in load_data(data_dir)[1] if o["device"] == gpu]
    return Front(chapters, official, device, commit, same_call.name if same_call.is_file() else None)
