"""Inductor's per-launch user stack traces: the `inductor_provenance_tracking_kernel_stack_traces`
payload of a TORCH_TRACE log, one per graph (backward graphs included, unlike the node mapping).

The payload is a JSON object keyed `kernel:handle` (`triton_poi_fused_add_0:3`,
`extern_kernels.mm:1`), the handle counting the graph's launches in call() from 1, with a list
of stack texts in Python's traceback format (`  File "f.py", line 12, in forward` then the code
line), outermost frame first. A launch may list several stacks: one per source of the nodes it
runs.
"""

from __future__ import annotations

import json
import re

from compile_viz.artifacts.model import EXTERN_PREFIX, KernelStack, KernelStacks, ParseWarning, StackFrame

TYPE_CHECKING = False
if TYPE_CHECKING:
    from compile_viz.artifacts.trace.index import LogBytes

KEY = re.compile(r"^(?P<kernel>.+):(?P<handle>\d+)$")
FRAME = re.compile(r'^  File "(?P<file>.+)", line (?P<line>\d+), in (?P<function>.+)$')
# in a TORCH_TRACE log (bytes): the stacks' entry, and the output code's AOT id logged before it
LOG_ENTRY = re.compile(rb'"name": "inductor_provenance_tracking_kernel_stack_traces"')
LOG_AOT_ID = re.compile(rb"\t# AOT ID: \['(\w+)'\]")  # at the last one rfind finds


def parse_kernel_stacks(data: str | bytes, *, path: str) -> KernelStacks:
    """The payload as KernelStacks; what it cannot read becomes a warning."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    try:
        doc = json.loads(text)
    except ValueError as e:
        return KernelStacks((), (ParseWarning(path, 0, f"not valid JSON: {e}"),))
    if not isinstance(doc, dict):
        return KernelStacks((), (ParseWarning(path, 0, "not a JSON object"),))
    out, warnings = [], []
    parsed: dict[str, tuple[StackFrame, ...]] = {}  # the same few stacks recur (gpt_small: 837 of 12 texts)
    for key, stacks in doc.items():
        m = KEY.match(key)
        if m is None or not isinstance(stacks, list):
            if key != "version":
                warnings.append(ParseWarning(path, 0, f"entry {key[:80]!r} is not kernel:handle -> [stack]"))
            continue
        frames = tuple(parsed[s] if s in parsed else parsed.setdefault(s, parse_stack(s))
                       for s in stacks if isinstance(s, str))
        out.append(KernelStack(int(m["handle"]) - 1, m["kernel"].removeprefix(EXTERN_PREFIX), frames))
    out.sort(key=lambda ks: ks.index)
    return KernelStacks(tuple(out), tuple(warnings))


def stacks_state(ks: KernelStacks) -> tuple:
    """KernelStacks as plain tuples, to hand to another process: pickled and read back in C, where
    the objects took a Python call each (919 launches of a 48-layer backward: 6 ms to unpickle).
    Each distinct stack once, as parse_kernel_stacks shares them."""
    at: dict[int, int] = {}  # id of a stack -> its place in `unique`
    unique: list[tuple] = []
    launches = []
    for k in ks.launches:
        places = []
        for stack in k.stacks:
            i = at.get(id(stack))
            if i is None:
                i = at[id(stack)] = len(unique)
                unique.append(tuple((f.file, f.line, f.function, f.code) for f in stack))
            places.append(i)
        launches.append((k.index, k.kernel, tuple(places)))
    return tuple(unique), tuple(launches), tuple((w.file, w.line, w.text) for w in ks.warnings)


def stacks_from_state(state: tuple) -> KernelStacks:
    """The KernelStacks `stacks_state` gave."""
    unique, launches, warnings = state
    stacks = [tuple(StackFrame(*f) for f in s) for s in unique]
    return KernelStacks(tuple(KernelStack(i, kernel, tuple(stacks[j] for j in places)) for i, kernel, places in launches),
                        tuple(ParseWarning(*w) for w in warnings))


def parse_stack(text: str) -> tuple[StackFrame, ...]:
    """The frames of one traceback-format stack, outermost first."""
    frames: list[StackFrame] = []
    for line in text.split("\n"):
        m = FRAME.match(line)
        if m:
            frames.append(StackFrame(m["file"], int(m["line"]), m["function"], ""))
        elif frames and line.strip() and not frames[-1].code:
            f = frames[-1]
            frames[-1] = StackFrame(f.file, f.line, f.function, line.strip())
    return tuple(frames)


def scan_log(data: LogBytes) -> list[tuple[str, int, str]]:
    """(AOT id, log line, payload text) of every stacks entry of a TORCH_TRACE log, found without
    reading the rest of it: the AOT id is that of the output code logged last before the entry
    ("" when none). For a run whose debug folder is parsed already, at a fraction of the cost of
    artifacts/trace/read.py. `data` is bytes or a big log mapped (index.MappedLog), read alike."""
    out = []
    pos, line, aot = 0, 1, ""
    for m in LOG_ENTRY.finditer(data):
        at = data.rfind(b"\t# AOT ID: ", pos, m.start())
        if at >= 0 and (a := LOG_AOT_ID.match(data, at)):
            aot = a.group(1).decode()
        line += data.count(b"\n", pos, m.start())
        pos = m.start()
        start = data.find(b"\n", m.end()) + 1
        if start == 0:
            break
        end = start
        while data.startswith(b"\t", end):
            nl = data.find(b"\n", end)
            end = len(data) if nl < 0 else nl + 1
        payload = b"".join(chunk[1:] for chunk in data[start:end].splitlines(keepends=True))
        out.append((aot, line, payload.decode("utf-8", errors="replace").removesuffix("\n")))
    return out
