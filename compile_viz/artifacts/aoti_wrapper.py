"""Parse AOTInductor's C++ wrapper: `output_code.cpp` in the debug tree, `<hash>.wrapper.cpp` (then
`<hash>.kernel.cpp`) in a .pt2 package, the `inductor_aot_wrapper_code` / `inductor_aot_kernel_code`
graph dumps of a TORCH_TRACE log. The same OutputCode as output_code.py gives.

Kernels: on a GPU, `static [inline] void call_triton_<name>(...)` holds the Triton source as a
comment (`async_compile.triton('<name>', '''...''')`) and launches it; on a CPU, the C++ kernels
are `extern "C" void cpp_fused_<name>(...) { ... }` definitions (in the kernel file, which the
debug tree's output_code.cpp carries after the wrapper). Launches: the statements of
`AOTInductorModel::run_impl`: `call_triton_<name>(...)`, `cpp_fused_<name>(...)`, and the
fallbacks and extern kernels through the C shim (`aoti_torch_cpu_addmm_out(...)`,
`aoti_torch_cuda_mm_out(...)`), each with Inductor's `// Topologically Sorted Source Nodes` and
`// [Provenance debug handles]` comments above it, as output_code.py has them with `#`.
"""

from __future__ import annotations

import re

from compile_viz.artifacts.model import (
    BufferAllocation,
    Kernel,
    KernelLaunch,
    OutputCode,
    ParseWarning,
    deferred,
)
from compile_viz.artifacts.output_code import HEURISTICS, _launch_args, kernel_kind, parse_comments
from compile_viz.artifacts.text import IDENT, read_artifact

RUN_IMPL = re.compile(r"^void AOTInductorModel::run_impl\(")
RUN_IMPL_END = "} // AOTInductorModel::run_impl"
# torch 2.6-2.10: `static inline void call_triton_...(`; 2.11+: `static __attribute__((noinline)) void ...`
TRITON_CALL_DEF = re.compile(r"^static (?:inline |__attribute__\(\(\w+\)\) )*void call_(\w+)\(")
# the source the wrapper embeds in a comment: async_compile.triton('name', ''' ... ''', device_str=...)
TRITON_SOURCE = re.compile(r"^(\s*)async_compile\.\w+\(\s*['\"](\w+)['\"],\s*r?('''|\"\"\")\s*$")
TRITON_SOURCE_END = re.compile(r"^\s*('''|\"\"\")")
CPP_KERNEL = re.compile(r'^extern "C"\s+(?:\w+\s+)*void\s+(\w+)\(')
FUNCTION_END = "}"

# statements of run_impl, stripped
COMMENT = "//"
INPUT = re.compile(r"^auto (\w+) = std::move\(inputs\[(\d+)\]\);")
CONSTANT = re.compile(r"^(?:\[\[maybe_unused\]\] )?auto&? ?(\w+) = constants_->at\((\d+)\);")
INT_ARRAY = re.compile(r"^static constexpr int64_t (int_array_\d+)\[\] = \{(.*)\};")
EMPTY = re.compile(r"^AOTI_TORCH_ERROR_CODE_CHECK\(aoti_torch_empty_strided\(\d+, (int_array_\d+), (int_array_\d+), "
                   r"cached_torch_dtype_(\w+), cached_torch_device_type_(\w+),.*&(\w+)_handle\)\);")
REUSE = re.compile(r"^auto (\w+) = std::move\((\w+)\);\s*// reuse")
SHIM_CALL = re.compile(r"^AOTI_TORCH_ERROR_CODE_CHECK\((aoti_torch_\w+)\((.*)\)\);$")
BARE_SHIM_CALL = re.compile(r"^(aoti_torch_\w+)\((.*)\);$")  # unchecked: the copy of a misaligned input
REASSIGN = re.compile(r"^\w+ = std::move\(")  # `arg41_1 = std::move(RAIIAtenTensorHandle(arg41_1_aligned));`
PROXY_CALL = re.compile(r"^(aoti_torch_proxy_executor_call_function)\((.*)\);$")
CALL = re.compile(r"^(?:call_)?(\w+)\((.*)\);$")
RETURN = re.compile(r"^output_handles\[(\d+)\] = (\w+)\.release\(\);")
HANDLE_OUT = re.compile(r"&(\w+?)_handle\b")
# a declaration (`AOTICudaGuard device_guard(0);`, `cudaStream_t stream0 = ...;`): a type, a space, a name
DECLARATION = re.compile(r"^[A-Za-z_][\w:<>,*&]*(?: const)?\s+[*&]?\w+\s*(?:[({=].*)?;$")
# shim calls that make, view or inspect tensors rather than compute: not launches
SHIM_QUIET = re.compile(r"^aoti_torch_(empty_strided|_reinterpret_tensor|get_|new_|delete_|item_|assign_|"
                        r"tensor_copy_|copy_|clone|as_strided|create_|check_|grad_mode)")
QUIET = (
    "AtenTensorHandle ", "RAIIAtenTensorHandle ", "inputs.clear()", "__check_inputs_outputs(", "if (", "}", "{",
    "[[maybe_unused]] auto& kernels", "AOTICudaStreamGuard", "AOTIXpuStreamGuard", "auto inputs =", "static constexpr",
    "int64_t ", "int32_t ", "double ", "float ", "bool ", "auto ", "const ", "return", "else", "for (", "#",
    "AOTI_TORCH_WARN(", "AOTI_TORCH_CHECK(",
)


def parse_aoti_wrapper(data: bytes | str, *, path: str) -> OutputCode:
    """Return the kernels and run_impl's launches of an AOTInductor wrapper; never raises on content."""
    text, warnings = read_artifact(data, path)
    lines = text.splitlines()
    p = _Wrapper(path, lines, warnings)
    p.run()
    return OutputCode(path=path, aot_id="", kernels=tuple(p.kernels), launches=tuple(p.launches),
                      allocations=tuple(p.allocations), asserts=(), graph_inputs=tuple(p.inputs),
                      returns=", ".join(p.returns), warnings=tuple(warnings))


class _Wrapper:
    def __init__(self, path: str, lines: list[str], warnings: list[ParseWarning]) -> None:
        self.path, self.lines, self.warnings = path, lines, warnings
        self.kernels: list[Kernel] = []
        self.names: set[str] = set()
        self.launches: list[KernelLaunch] = []
        self.allocations: list[BufferAllocation] = []
        self.inputs: list[str] = []
        self.returns: list[str] = []
        self.known: set[str] = set()
        self.arrays: dict[str, str] = {}
        self.body: tuple[int, int] | None = None

    def warn(self, lineno: int, why: str, text: str = "") -> None:
        self.warnings.append(ParseWarning(self.path, lineno, f"{why}: {text.strip()[:120]}" if text else why))

    def run(self) -> None:
        lines, i = self.lines, 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("static ") and (m := TRITON_CALL_DEF.match(line)):
                i = self._triton(m.group(1), i)
            elif line.startswith("extern \"C\"") and (m := CPP_KERNEL.match(line)):
                i = self._cpp(m.group(1), i)
            elif RUN_IMPL.match(line):
                i = self._skip_signature(i)
                self.body = (i, self._end_of_run_impl(i))
                i = self.body[1]
            else:
                i += 1
        if self.body is None:
            self.warn(0, "no AOTInductorModel::run_impl found: the file is cut short or not an AOTInductor wrapper")
            return
        self._run_impl(*self.body)

    # ------------------------------------------------------------------ kernels

    def _function_end(self, i: int) -> int:
        """The index of the `}` line closing the function that starts at line i (or the last line)."""
        j = i + 1
        while j < len(self.lines) and self.lines[j].rstrip() != FUNCTION_END:
            j += 1
        if j >= len(self.lines):
            self.warn(i + 1, "function never closed (file cut short)", self.lines[i])
            return len(self.lines) - 1
        return j

    def _triton(self, name: str, i: int) -> int:
        end = self._function_end(i)
        start = stop = None
        indent = quote = ""
        for j in range(i + 1, end):
            if start is None and (m := TRITON_SOURCE.match(self.lines[j])):
                indent, start, quote = m.group(1), j + 1, m.group(3)
            elif start is not None and (e := TRITON_SOURCE_END.match(self.lines[j])) and e.group(1) == quote:
                stop = j
                break
        if start is None or stop is None:  # a call_ helper without embedded source: still a kernel we launch
            source, source_line = "\n".join(self.lines[i:end + 1]), i + 1
        else:
            source = "\n".join(ln[len(indent):] if ln.startswith(indent) else ln.lstrip() for ln in self.lines[start:stop])
            source_line = start + 1
        self._add(name, "triton", source, i, source_line, end)
        return end + 1

    def _cpp(self, name: str, i: int) -> int:
        j = i
        while j < len(self.lines) and not self.lines[j].rstrip().endswith((")", ");", "{")):
            j += 1
        if j >= len(self.lines) or self.lines[j].rstrip().endswith(";"):
            return j + 1  # a declaration
        end = self._function_end(j)
        self._add(name, "cpp", "\n".join(self.lines[i:end + 1]), i, i + 1, end)
        return end + 1

    def _add(self, name: str, backend: str, source: str, i: int, source_line: int, end: int) -> None:
        if name in self.names:
            return
        hm = HEURISTICS.search(source, 0, 4000) if backend == "triton" else None
        heuristics = hm.group(1) if hm else ""
        self.kernels.append(Kernel(name=name, backend=backend, kind=kernel_kind(name, backend, heuristics),
                                   heuristics=heuristics, kernel_path="", comments=parse_comments([]), source=source,
                                   line=i + 1, source_line=source_line, end_line=end + 1))
        self.names.add(name)

    # ------------------------------------------------------------------ run_impl

    def _skip_signature(self, i: int) -> int:
        while i < len(self.lines) and not self.lines[i].rstrip().endswith(") {"):
            i += 1
        return i + 1

    def _end_of_run_impl(self, i: int) -> int:
        while i < len(self.lines) and not self.lines[i].startswith(RUN_IMPL_END):
            i += 1
        if i >= len(self.lines):
            self.warn(len(self.lines), "run_impl never closed: the file looks cut short")
        return i

    def _run_impl(self, start: int, end: int) -> None:
        pending: list[str] = []
        i = start
        while i < end:
            lineno, s = i + 1, self.lines[i].strip()
            i += 1
            while s and not s.startswith(COMMENT) and not _code(s).endswith((";", "{", "}")) and i < end:
                s += " " + self.lines[i].strip()  # a statement over several lines
                i += 1
            if not s:
                continue
            if s.startswith(COMMENT):
                if "// reuse" not in s:
                    pending.append("#" + s[2:])
                continue
            if self._statement(s, lineno, pending):
                pending = []

    def _statement(self, s: str, lineno: int, pending: list[str]) -> bool:
        """Record one statement of run_impl; return True when it consumed the pending comments."""
        if m := INPUT.match(s):
            self.inputs.append(m.group(1))
            self.known.add(m.group(1))
            return False
        if m := CONSTANT.match(s):
            self.known.add(m.group(1))
            return False
        if m := INT_ARRAY.match(s):
            self.arrays[m.group(1)] = "(" + ", ".join(x.strip().rstrip("L") for x in m.group(2).split(",")) + ")"
            return False
        if m := EMPTY.match(s):
            size, stride, dtype, device, name = m.groups()
            self.known.add(name)
            self.allocations.append(BufferAllocation(name, "empty_strided", self.arrays.get(size, size),
                                                     self.arrays.get(stride, stride), f"torch.{dtype}", device, "", lineno))
            return False
        if m := REUSE.match(s):
            self.known.add(m.group(1))
            self.allocations.append(BufferAllocation(m.group(1), "reuse", "", "", "", "", m.group(2), lineno))
            return False
        if m := RETURN.match(s):
            self.returns.append(m.group(2))
            return False
        if (m := SHIM_CALL.match(s)) or (m := PROXY_CALL.match(s)) or (m := BARE_SHIM_CALL.match(s)):
            if SHIM_QUIET.match(m.group(1)):
                for name in HANDLE_OUT.findall(m.group(2)):
                    self.known.add(name)
                return False
            self._launch(m.group(1), True, m.group(2), lineno, pending)
            return True
        if (m := CALL.match(s)) and (name := m.group(1)) in self.names:
            self._launch(name, False, m.group(2), lineno, pending)
            return True
        if s.startswith(QUIET) or s.endswith(".reset();") or DECLARATION.match(s) or REASSIGN.match(s):
            return False
        self.warn(lineno, "statement in run_impl not understood", s)
        return False

    def _launch(self, kernel: str, is_extern: bool, arg_text: str, lineno: int, pending: list[str]) -> None:
        outputs = tuple(HANDLE_OUT.findall(arg_text))
        self.known.update(outputs)
        if is_extern and kernel.endswith("_out") and not outputs:  # at::<op>_out: the first argument is written
            first = IDENT.match(arg_text.strip())
            outputs = (first.group(0),) if first else ()
        known = self.known
        buffers = dict.fromkeys(i for i in IDENT.findall(arg_text)
                                if i in known or (i[:3] == "buf" and i[3:].isdecimal()))
        self.launches.append(deferred(KernelLaunch, {
            "index": len(self.launches), "kernel": kernel, "is_extern": is_extern, "buffers": tuple(buffers),
            "outputs": outputs, "comments": parse_comments(pending), "line": lineno, "function": "run_impl",
            "_fill": (_launch_args, (arg_text,)),
        }))


def _code(statement: str) -> str:
    """The statement without a trailing `// ...` comment (`auto buf1 = std::move(buf0);  // reuse`)."""
    cut = statement.find("  //")
    return statement[:cut].rstrip() if cut > 0 else statement
