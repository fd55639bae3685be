"""Parse `kernel_information.json`, AOTInductor's provenance in a .pt2 package (written with
INDUCTOR_PROVENANCE=1): per kernel launch, keyed `kernel:handle` as in the wrapper's
`// [Provenance debug handles]` comments, its post-grad nodes, pre-grad nodes and stack traces.

    {"cpp_fused_add_gelu_0:2": {"stack_traces": ["File \"m.py\", line 6, in forward\n    return ..."],
                                "post_grad_nodes": ["add_1", "mul"], "pre_grad_nodes": ["add", "gelu"]}}

It gives what the debug tree's provenance JSON and the trace's kernel stack traces give: the
kernel -> post-grad node maps (ProvenanceMap) and each launch's user stacks (KernelStacks).
"""

from __future__ import annotations

import json

from compile_viz.artifacts.model import KernelStacks, ParseWarning, ProvenanceMap
from compile_viz.artifacts.text import read_json_object
from compile_viz.artifacts.trace.kernel_stacks import parse_kernel_stacks


def parse_kernel_information(data: bytes | str, *, path: str) -> tuple[ProvenanceMap, KernelStacks]:
    """Return the file's provenance map and kernel stacks; never raises on content."""
    doc, warnings = read_json_object(data, path, "provenance")
    code_to_post: dict[str, tuple[str, ...]] = {}
    post_to_code: dict[str, tuple[str, ...]] = {}
    stacks: dict[str, list[str]] = {}
    for key, info in doc.items():
        if not isinstance(info, dict):
            warnings.append(ParseWarning(path, 0, f"entry {str(key)[:80]!r} is not an object; ignored"))
            continue
        nodes = tuple(str(n) for n in info.get("post_grad_nodes") or ())
        code_to_post[str(key)] = nodes
        for n in nodes:
            post_to_code[n] = (*post_to_code.get(n, ()), str(key))
        # the stacks as the trace writes them: "  File ..." lines (the package drops the first indent)
        stacks[str(key)] = [s if s.startswith("  ") else "  " + s for s in info.get("stack_traces") or ()
                            if isinstance(s, str)]
    provenance = ProvenanceMap(path, {}, {}, code_to_post, post_to_code, tuple(warnings))
    return provenance, parse_kernel_stacks(json.dumps(stacks), path=path)
