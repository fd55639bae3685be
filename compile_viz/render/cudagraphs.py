"""The line a run shows when Inductor skipped CUDA graphs (mode="reduce-overhead"): what, where, what to do."""

from __future__ import annotations

from compile_viz.artifacts.cudagraphs import CudagraphSkip

# Inductor's reason, by its first words -> what to do about it
_HINTS = (
    ("mutated inputs", "return a new tensor instead of writing into an input in place"),
    ("mutation on", "return a new tensor instead of writing into an input in place"),
    ("cpu device", "move that input to the GPU before the call"),
    ("non-cuda", "keep every input and op of the compiled region on the GPU"),
    ("dynamic shape", "pad inputs to a few fixed sizes, or mark fewer dimensions dynamic"),
    ("deterministic", "an op without a deterministic CUDA-graph-safe kernel: turn off deterministic algorithms here, "
                      "or compile this region without reduce-overhead"),
    ("incompatible op", "move that op out of the compiled region (or torch.compiler.disable it)"),
)


def skip_hint(reason: str) -> str:
    low = reason.lower()
    return next((hint for words, hint in _HINTS if words in low),
                "the reason is Inductor's; TORCH_LOGS=perf_hints prints it as it happens")


def skip_markdown(skip: CudagraphSkip, *, compact: bool = False) -> str:
    """One line of Markdown: the reason, the user's line, what happens instead, what to do; `compact`
    (projector mode, where the code must stay in view): the reason and the line's place only."""
    where = ""
    if skip.file:
        name = skip.file.replace("\\", "/").rsplit("/", 1)[-1]
        where = f" at {_md(name)}:{skip.line}"
        if skip.code and not compact:
            where += f" `{skip.code.replace('`', chr(39))}`"
    rank = f"rank {skip.rank}: " if skip.rank is not None else ""
    if compact:
        return f"{rank}**CUDA graphs skipped**: {_md(skip.reason)}{where}"
    return (f"{rank}**CUDA graphs skipped**: {_md(skip.reason)}{where}. The graph's kernels launch one by one, as "
            f"in mode='default'; to get the replay, {skip_hint(skip.reason)}.")


def _md(text: str) -> str:
    return "".join("\\" + c if c in "\\`*_[]<>#|$~" else c for c in text)
