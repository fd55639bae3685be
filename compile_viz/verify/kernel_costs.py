"""Per-kernel costs from profiler records and the parsed output_code.py: time, share, bytes, GB/s.

Standard library only (the capture child imports it next to torch; tests run it without torch).
The profiler side hands in plain records; `attribute` matches them to the kernels of each graph:
a Triton or C++ kernel by its name, an extern call by the aten op that launched the library
kernels (`extern_kernels.mm` <- `aten::mm`), everything else lands in "outside compiled graphs".
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass

from compile_viz.artifacts.kernel_meta import kernel_meta
from compile_viz.artifacts.model import OutputCode

# Peak DRAM bandwidth by GPU name (GB/s, 1e9 bytes), from the vendor's data sheets. First match wins.
PEAK_GBPS = (
    ("GH200", 4000.0),
    ("H200", 4800.0),
    ("H100 NVL", 3900.0),
    ("H100 PCIe", 2000.0),
    ("H100", 3350.0),  # H100 SXM5 80GB HBM3
    ("H800", 3350.0),
    ("B200", 8000.0),
    ("A100-SXM4-80GB", 2039.0),
    ("A100 80GB PCIe", 1935.0),
    ("A100", 1555.0),
    ("L40S", 864.0),
    ("L40", 864.0),
    ("L4", 300.0),
    ("A10G", 600.0),
    ("A10", 600.0),
    ("V100", 900.0),
    ("T4", 320.0),
    ("RTX 4090", 1008.0),
    ("RTX 3090", 936.0),
)
ELEMENT_BYTES = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2, "i64": 8, "u64": 8, "i32": 4, "u32": 4,
                 "i16": 2, "u16": 2, "i8": 1, "u8": 1, "i1": 1, "fp8e4nv": 1, "fp8e5": 1, "fp8e4b15": 1}
TORCH_DTYPE_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4,
                     "int16": 2, "int8": 1, "uint8": 1, "bool": 1, "complex64": 8,
                     "f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1,
                     "u8": 1, "b8": 1}
REINTERPRET = re.compile(r"^reinterpret_tensor\((\w+), (\(.*?\)), (\(.*?\))")
GRAPH_PREFIX = re.compile(r"^graph_\d+_")  # C++ kernels' record names under cpp.enable_kernel_profile
REGION_MARK = "## Call CompiledFxGraph"
OUTSIDE = "(outside compiled graphs)"


def peak_bandwidth_gbps(device_name: str | None) -> float | None:
    """Return the data-sheet peak DRAM bandwidth of a GPU (GB/s), or None if not in the table."""
    for key, gbps in PEAK_GBPS:
        if device_name and key.lower() in device_name.lower():
            return gbps
    return None


def extern_op(kernel: str) -> str:
    """Return the aten op name an extern launch shows up as: extern_kernels.mm -> mm."""
    name = kernel.removeprefix("torch.ops.").removeprefix("extern_kernels.").removeprefix("aten.")
    name = name.split(".")[0]
    return name


# --------------------------------------------------------------------------- bytes per launch


def _dims(text: str) -> list[int] | None:
    try:
        return [int(x) for x in text.strip("()").split(",") if x.strip()]
    except ValueError:  # symbolic sizes: unknown until run time
        return None


def _numel(size: str) -> int | None:
    dims = _dims(size)
    return None if dims is None else math.prod(dims)


class _Sizes:
    """Element counts and dtypes of the names in call(): allocations, reuses and input asserts."""

    def __init__(self, code: OutputCode, input_dtypes: dict[str, str]):
        self.alloc = {a.name: a for a in code.allocations}
        self.asserts = {a.name: a for a in code.asserts}
        self.input_dtypes = input_dtypes

    def numel(self, arg: str) -> int | None:
        m = REINTERPRET.match(arg)
        if m:
            return _numel(m.group(2))
        seen = set()
        while arg in self.alloc and arg not in seen:
            seen.add(arg)
            a = self.alloc[arg]
            if a.kind != "reuse":
                return _numel(a.size) if a.size else None
            arg = a.reused_from
        if arg in self.asserts:
            return _numel(self.asserts[arg].size)
        return None

    def element_bytes(self, arg: str) -> int | None:
        m = REINTERPRET.match(arg)
        name = m.group(1) if m else arg
        seen = set()
        while name in self.alloc and name not in seen:
            seen.add(name)
            a = self.alloc[name]
            if a.kind != "reuse":
                return TORCH_DTYPE_BYTES.get(a.dtype.removeprefix("torch."))
            name = a.reused_from
        return TORCH_DTYPE_BYTES.get(self.input_dtypes.get(name, ""))


def launch_bytes(code: OutputCode, input_dtypes: dict[str, str] | None = None) -> dict[int, tuple[int | None, str]]:
    """Return launch index -> (bytes read + written, how it was estimated) for each launch in call().

    A Triton launch: each pointer parameter of the kernel's signature counts its whole buffer once
    (in_out pointers twice), element size from the signature. An extern call: its tensor arguments
    and `out=` buffer. None where a size is symbolic or unknown.
    """
    sizes = _Sizes(code, input_dtypes or {})
    kernels = {k.name: k for k in code.kernels}
    out: dict[int, tuple[int | None, str]] = {}
    for launch in code.launches:
        kernel = kernels.get(launch.kernel)
        if kernel is not None and kernel.backend == "triton":
            out[launch.index] = (_triton_bytes(kernel, launch.args, sizes), "signature x buffer sizes")
        elif launch.is_extern:
            out[launch.index] = (_extern_bytes(launch, sizes), "argument buffer sizes")
        else:
            out[launch.index] = (_plain_bytes(launch.buffers, sizes), "argument buffer sizes")
    return out


def _triton_bytes(kernel, args: tuple[str, ...], sizes: _Sizes) -> int | None:
    signature = kernel_meta(kernel).signature
    positional = [a for a in args if "=" not in a.split("(")[0]]
    total = 0
    for (param, ty), arg in zip(signature.items(), positional, strict=False):
        if not isinstance(ty, str) or not ty.startswith("*"):
            continue
        n = sizes.numel(arg)
        elem = ELEMENT_BYTES.get(ty[1:])
        if n is None or elem is None:
            return None
        total += n * elem * (2 if str(param).startswith("in_out_ptr") else 1)
    return total


def _extern_bytes(launch, sizes: _Sizes) -> int | None:
    args = [a.split("=", 1)[1] if a.startswith("out=") else a for a in launch.args]
    return _plain_bytes(tuple(a for a in args if a.startswith(("buf", "reinterpret_tensor(")) or a in sizes.asserts),
                        sizes)


def _plain_bytes(args: tuple[str, ...], sizes: _Sizes) -> int | None:
    total = 0
    for arg in args:
        n, elem = sizes.numel(arg), sizes.element_bytes(arg)
        if n is None or elem is None:
            return None
        total += n * elem
    return total


# --------------------------------------------------------------------------- attribution


@dataclass
class GraphCode:
    """What attribution needs of one compiled graph."""

    name: str  # graph folder name, e.g. model__0_forward_1.0
    code: OutputCode
    input_dtypes: dict[str, str]


def _graph_keys(g: GraphCode) -> tuple[set[str], dict[str, str]]:
    kernels = {k.name for k in g.code.kernels}
    externs = {}
    for la in g.code.launches:
        if la.kernel not in kernels:
            externs.setdefault(extern_op(la.kernel), la.kernel)
    return kernels, externs


def _key_in(record: dict, kernels: set[str], externs: dict[str, str]) -> str | None:
    op = GRAPH_PREFIX.sub("", record["op"])
    if op in kernels:
        return op
    if record["name"] in kernels:
        return record["name"]
    aten = op.removeprefix("aten::")
    return externs.get(aten)


def _assign_regions(records: list[dict], graphs: list[GraphCode], keys) -> dict:
    """Return region id -> graph index: the graph whose kernels and externs explain most records."""
    by_region = defaultdict(list)
    for r in records:
        if r.get("region") is not None:
            by_region[r["region"]].append(r)
    out = {}
    for region, recs in by_region.items():
        scores = [sum(1 for r in recs if _key_in(r, *keys[i]) is not None) for i in range(len(graphs))]
        if scores and max(scores) > 0:
            out[region] = scores.index(max(scores))
    return out


def attribute(records: list[dict], graphs: list[GraphCode], *, steps: int) -> dict:
    """Return per-graph per-kernel costs from profiler records of `steps` profiled calls.

    A record: {"name": kernel or op name, "op": launching op under the graph's call, "dur_us": time,
    "region": id of the enclosing `## Call CompiledFxGraph` range or None}. Times are per call.
    """
    keys = [_graph_keys(g) for g in graphs]
    region_graph = _assign_regions(records, graphs, keys)
    no_regions = not region_graph
    acc: dict[tuple[int, str], dict] = {}
    outside: dict[str, dict] = defaultdict(lambda: {"time_us": 0.0, "count": 0})
    for r in records:
        gi = region_graph.get(r.get("region"))
        candidates = [gi] if gi is not None else (range(len(graphs)) if no_regions else [])
        key = None
        for i in candidates:
            key = _key_in(r, *keys[i])
            if key is not None:
                gi = i
                break
        if key is None:
            if r.get("counted", True):
                o = outside[r["op"] if r.get("region") is None else f"other in call(): {r['op']}"]
                o["time_us"] += r["dur_us"]
                o["count"] += 1
            continue
        a = acc.setdefault((gi, key), {"time_us": 0.0, "count": 0, "library": defaultdict(float)})
        a["time_us"] += r["dur_us"]
        a["count"] += 1
        if GRAPH_PREFIX.sub("", r["name"]) != key:
            a["library"][r["name"]] += r["dur_us"]
    result = {"graphs": {}, "outside": _outside_rows(outside, steps)}
    total_us = sum(a["time_us"] for a in acc.values()) / steps
    for gi, g in enumerate(graphs):
        calls = sum(1 for v in region_graph.values() if v == gi) / steps if region_graph else 1.0
        result["graphs"][g.name] = _graph_rows(g, gi, acc, steps, total_us, calls or 1.0)
        result["graphs"][g.name]["invocations_per_call"] = round(calls, 2)
    result["total_in_graphs_us"] = round(total_us, 3)
    result["total_outside_us"] = round(sum(r["time_us"] for r in result["outside"]), 3)
    return result


def _graph_rows(g: GraphCode, gi: int, acc: dict, steps: int, total_us: float, invocations: float) -> dict:
    kinds = {k.name: k.kind for k in g.code.kernels}
    bytes_by_launch = launch_bytes(g.code, g.input_dtypes)
    per_kernel: dict[str, list] = defaultdict(list)
    for la in g.code.launches:
        per_kernel[la.kernel].append(bytes_by_launch.get(la.index, (None, ""))[0])
    rows = []
    for name, launch_bytes_list in per_kernel.items():
        a = acc.get((gi, name))
        row = {"kernel": name, "kind": kinds.get(name, "extern"), "launches_in_code": len(launch_bytes_list)}
        known = [b for b in launch_bytes_list if b is not None]
        avg_bytes = sum(known) / len(known) if known and len(known) == len(launch_bytes_list) else None
        row["bytes_per_launch"] = round(avg_bytes) if avg_bytes is not None else None
        if a is None:
            row.update(time_us=None, count_per_call=0, share=None, gbps=None)
        else:
            t = a["time_us"] / steps
            count = a["count"] / steps
            row.update(time_us=round(t, 3), count_per_call=round(count, 2),
                       share=round(t / total_us, 4) if total_us else None)
            # bytes moved per call over time per call: a graph may run several times per call
            launches = len(launch_bytes_list) * invocations
            row["gbps"] = round(avg_bytes * launches / (t * 1e3), 2) if avg_bytes and t > 0 else None
            if a["library"]:
                row["library_kernels"] = {k: round(v / steps, 3) for k, v in
                                          sorted(a["library"].items(), key=lambda kv: -kv[1])[:8]}
        rows.append(row)
    rows.sort(key=lambda r: -(r["time_us"] or 0))
    return {"kernels": rows, "time_us": round(sum(r["time_us"] or 0 for r in rows), 3)}




def _outside_rows(outside: dict, steps: int) -> list[dict]:
    rows = [{"op": k, "time_us": round(v["time_us"] / steps, 3), "count_per_call": round(v["count"] / steps, 2)}
            for k, v in outside.items()]
    rows.sort(key=lambda r: -r["time_us"])
    return rows[:40]
