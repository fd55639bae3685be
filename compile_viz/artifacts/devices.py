"""What device and dtypes a run's generated code ran on, read from its text: for runs that no
capture settings describe (a recorded job, an imported log). Stdlib only.

Inductor's wrapper allocates every buffer with `empty_strided_<device>((sizes), (strides),
torch.<dtype>)` (before torch 2.1: `empty_strided(..., device='cuda', dtype=...)`); the header declares all of them, so only the calls count. A graph that allocates
nothing still names its kernels' kind: `triton_` launches run on a GPU, `cpp_fused_` ones on the CPU.
"""

from __future__ import annotations

import re
from collections import Counter

ALLOC = re.compile(rb"= empty_strided_(cuda|cpu|xpu|mps)\(\([^)]*\), \([^)]*\), torch\.(\w+)\)")
# torch before 2.1: empty_strided((sizes), (strides), device='cuda', dtype=torch.float32)
OLD_ALLOC = re.compile(rb"= empty_strided\(\([^)]*\), \([^)]*\), device='(\w+)', dtype=torch\.(\w+)\)")
# AOTInductor's C++ wrapper: aoti_torch_empty_strided(2, int_array_0, int_array_1, cached_torch_dtype_float32,
# cached_torch_device_type_cuda, ...) (dtype first)
AOTI_ALLOC = re.compile(rb"aoti_torch_empty_strided\(\d+, \w+, \w+, cached_torch_dtype_(\w+), cached_torch_device_type_(\w+),")
GPU_KERNEL = re.compile(rb"\btriton_\w+\.run\(")
CPU_KERNEL = re.compile(rb"\bcpp_fused_\w+\(")
SHARE = 0.1  # a dtype shows in the summary when it holds at least this share of the allocations


def tally(data: bytes, devices: Counter, dtypes: Counter) -> None:
    """Add the allocations (or, failing them, the kernel launches) in `data` to the counts."""
    before = sum(devices.values())
    found = ALLOC.findall(data) or OLD_ALLOC.findall(data) or [(dev, dt) for dt, dev in AOTI_ALLOC.findall(data)]
    for device, dtype in found:
        devices[device.decode()] += 1
        dtypes[dtype.decode()] += 1
    if sum(devices.values()) == before:
        devices["cuda"] += len(GPU_KERNEL.findall(data))
        devices["cpu"] += len(CPU_KERNEL.findall(data))


def summary(devices: Counter, dtypes: Counter) -> tuple[str | None, str | None]:
    """(device, dtype): the device most buffers live on; the dtypes that hold a tenth of them or
    more, most used first, joined by "+" ("bfloat16+float32"). None where nothing was counted."""
    device = devices.most_common(1)[0][0] if devices and max(devices.values()) else None
    total = sum(dtypes.values())
    kept = [name for name, n in dtypes.most_common() if total and n / total >= SHARE]
    return device, "+".join(kept) or None
