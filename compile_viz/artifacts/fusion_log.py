"""Parse a fusion log: the rounds, the fused pairs and the refused pairs with their reasons.

Input: a run's `logs/fusion.log` (the capture child writes it, with `# graph: <folder>` marks) or
any saved output of `TORCH_LOGS="+fusion"` (torch's line prefix `V1123 12:00:00.0 123 file:12]
[0/0] [__fusion] ` is optional; lines of other loggers are skipped). Only the lines that carry a
decision are read: round headers and ends, `fusing X with Y`, `cannot fuse X with Y: reason`.
The candidate dumps of each round (most of the file) are skipped by substring tests, unparsed.

Graphs: a `# graph:` mark starts one; without marks, a round numbered 1 does (each graph's
compile runs the fusion loop once, from round 1).
"""

from __future__ import annotations

import re
from functools import lru_cache

from compile_viz.artifacts.model import FusionDecisions, FusionLog, FusionPair, FusionRound, ParseWarning
from compile_viz.artifacts.text import read_artifact

GRAPH_MARK = "# graph: "
# torch's prefix; under torch.distributed it starts with the rank: `[rank1]:V1126 ...`
PREFIX = re.compile(r"^(?:\[rank\d+\]:)?[VIWEDC]\d{4} [\d:.]+ +\d+ [^\]]*\] (?:\[(\d+/\d+[^\]]*)\] )?(?:\[[^\]]*\] )?")
ROUND_START = re.compile(r"^=+ attempting fusion \((\d+)/(\d+)\): (\d+) nodes =+\s*$")
ROUND_END = re.compile(r"^completed fusion round \((\d+)/(\d+)\): fused (\d+) nodes into (\d+) nodes")
FUSING = re.compile(r"^fusing (\w+) with (\w+)\s*$")
REFUSED = re.compile(r"^cannot fuse (\w+) with (\w+): (.*)$")
FUSION_DONE = re.compile(r"^=+ fusion complete \((\d+) iterations?\) =+\s*$")
DECISION_WORDS = ("fusing ", "cannot fuse ", "completed fusion round", "=====")
BARE_STARTS = (GRAPH_MARK, *DECISION_WORDS)  # a graph mark, or a message saved without torch's prefix

# Reason kinds: (how the reason text starts, its key). Inductor's reasons are a fixed set of
# format strings (WhyNoFuse calls in torch/_inductor); the explanations are in render/fusion_notes.py.
REASON_KINDS = (
    ("no shared data due to indexing mismatch", "indexing_mismatch"),
    ("no shared data", "no_shared_data"),
    ("exceeds max fusion", "max_fusion_size"),
    ("Fusion will increase peak memory", "peak_memory"),
    ("intermediate nodes between node1 & node2", "intermediate_nodes"),
    ("will create cycle", "cycle"),
    ("memory deps did not match", "memory_deps"),
    ("numel/rnumel mismatch", "numel_mismatch"),
    ("nodes numel/rnumel incompatibility", "numel_mismatch"),
    ("nodes numel incompatibility", "numel_mismatch"),
    ("invalid tiling", "tiling"),
    ("invalid loop order", "tiling"),
    ("register spilling", "register_spilling"),
    ("node1 is extern", "extern_producer"),
    ("node2 is extern or nop", "extern_consumer"),
    ("node1 is nop", "nop"),
    ("node1's triton kernel doesn't support epilogue fusion", "extern_producer"),
    ("epilogue reads from buffers other than the mutated output", "mutation"),
    ("node1 and node2 uses different buf layouts", "layout"),
    ("node1 must go before node2", "order"),
    ("template epilogue", "template_epilogue"),
    ("multi-output template epilogue", "template_epilogue"),
    ("template prologue", "template_prologue"),
    ("template has no allowed prologue inputs", "template_prologue"),
    ("prologue fusion", "template_prologue"),
    ("grouped node must not be fused", "grouped"),
    ("fusion for buffer explicit disabled", "disabled"),
    ("device mismatch", "device"),
    ("foreach", "foreach"),
    ("candidate producer", "foreach"),
    ("candidate consumer", "foreach"),
    ("Split scan cannot fuse with reductions", "split_scan"),
    ("Nodes are too far away", "too_far"),
    ("score_fusion_memory_threshold", "low_shared_data"),
    ("fusion_prevent_too_many_reads_and_writes", "too_many_io"),
)


@lru_cache(maxsize=1024)
def reason_kind(reason: str) -> str:
    """The short key of a refusal reason; an unknown reason gets one made from its words."""
    for start, kind in REASON_KINDS:
        if reason.startswith(start):
            return kind
    words = re.sub(r"\(.*|[^a-z ]", " ", reason.lower()).split()
    return "_".join(words[:5]) or "other"


def decisions_by_graph(log: FusionLog, graph_names: list[str]) -> dict[str, FusionDecisions]:
    """Graph folder name -> its decisions: by the log's marks; a log without marks (a user's
    saved TORCH_LOGS output) gives its graphs in compile order, so they go to `graph_names` in
    that order, when both count the same."""
    marked = {d.graph: d for d in log.graphs if d.graph}
    if marked:
        return {name: marked[name] for name in graph_names if name in marked}
    if len(log.graphs) == len(graph_names):
        return dict(zip(graph_names, log.graphs, strict=True))
    return {}


def parse_fusion_log(data: bytes | str, *, path: str) -> FusionLog:
    """Return the decisions of every graph in a fusion log; never raises on content."""
    text, warnings = read_artifact(data, path)
    builder = _Builder(path, warnings)
    line, fast = builder.line, builder.fast
    for lineno, raw in enumerate(text.splitlines(), 1):
        # most lines are the candidate dumps of each round: substring tests skip them
        if "] cannot fuse " in raw or "] fusing " in raw:
            m = FAST.match(raw)
            if m is not None:
                fast(lineno, m)
            else:
                line(lineno, raw)
        elif ("attempting fusion" in raw or "completed fusion" in raw or "fusion complete" in raw
              or raw.startswith(BARE_STARTS)):
            line(lineno, raw)
    return FusionLog(path, builder.finish(), tuple(warnings))


# The two lines that make up most of a log, prefix and all, in one match (the rest goes through
# `_Builder.line`): a refusal and a fusion, inside a round and after the compile id was seen.
FAST = re.compile(
    r"(?:\[rank\d+\]:)?[VIWEDC]\d{4} [\d:.]+ +\d+ [^\]]*\] \[\d+/\d+[^\]]*\] (?:\[[^\]]*\] )?"
    r"(?:(?P<refused>cannot fuse (\w+) with (\w+): (.*))|(?P<fused>fusing (\w+) with (\w+)\s*$))"
)


class _Builder:
    def __init__(self, path: str, warnings: list[ParseWarning]) -> None:
        self.path = path
        self.warnings = warnings
        self.graphs: list[FusionDecisions] = []
        self.graph = ""  # the current graph's folder, from the last mark
        self.compile_id = ""
        self.rounds: list[list] = []  # [index, limit, before, after, line]
        self.fused: list[FusionPair] = []
        self.refused: list[FusionPair] = []

    def line(self, lineno: int, raw: str) -> None:
        if raw.startswith(GRAPH_MARK):
            self._close()
            self.graph = raw[len(GRAPH_MARK):].strip()
            return
        m = PREFIX.match(raw)
        if m is not None:
            msg = raw[m.end():]
            if m.group(1) and not self.compile_id:
                self.compile_id = m.group(1)
        elif raw[:1].isdigit() or raw.startswith(("=", "fusing ", "cannot fuse ", "completed fusion")):
            msg = raw  # a bare message (a log saved without torch's prefix)
        else:
            return
        if not msg.startswith(DECISION_WORDS):
            return  # a candidate dump, "found N possible fusions", another logger's line
        self._decision(lineno, msg.rstrip(), m.group(1) if m is not None else None)

    def fast(self, lineno: int, m: re.Match) -> None:
        """A FAST match: a refusal or a fusion (the compile id is already known, or set by `line`)."""
        if not self.rounds:
            self.line(lineno, m.string)
        elif m.lastgroup == "refused":
            self._refused(self.rounds[-1][0], *m.group(2, 3, 4), lineno)
        else:
            self._fused(self.rounds[-1][0], *m.group(6, 7), lineno)

    def _fused(self, r: int, first: str, second: str, lineno: int) -> None:
        self.fused.append(FusionPair(r, first, second, f"{first}_{second}", "", "", lineno))

    def _refused(self, r: int, first: str, second: str, reason: str, lineno: int) -> None:
        self.refused.append(FusionPair(r, first, second, "", reason, reason_kind(reason), lineno))

    def _decision(self, lineno: int, msg: str, compile_id: str | None) -> None:
        if (m := FUSING.match(msg)) is not None:
            self._fused(self._round(lineno, msg), *m.groups(), lineno)
        elif (m := REFUSED.match(msg)) is not None:
            self._refused(self._round(lineno, msg), *m.groups(), lineno)
        elif (m := ROUND_START.match(msg)) is not None:
            index, limit, before = map(int, m.groups())
            if index == 1 and self.rounds:
                self._close()  # no marks: round 1 starts the next graph
            if compile_id and (not self.compile_id or not self.rounds):
                self.compile_id = compile_id
            self.rounds.append([index, limit, before, None, lineno])
        elif FUSION_DONE.match(msg):
            pass  # the loop's end; its rounds are already counted
        elif (m := ROUND_END.match(msg)) is not None:
            index, _, _, after = map(int, m.groups())
            if self.rounds and self.rounds[-1][0] == index:
                self.rounds[-1][3] = after
            else:
                self.warnings.append(ParseWarning(self.path, lineno, f"round {index} ends but never started: {msg[:120]}"))
        else:
            self.warnings.append(ParseWarning(self.path, lineno, f"fusion decision not understood: {msg[:120]}"))

    def _round(self, lineno: int, msg: str) -> int:
        if not self.rounds:
            self.warnings.append(ParseWarning(self.path, lineno, f"decision outside any round: {msg[:120]}"))
            return 0
        return self.rounds[-1][0]

    def _close(self) -> None:
        if self.rounds or self.fused or self.refused:
            rounds = tuple(FusionRound(*r) for r in self.rounds)
            self.graphs.append(FusionDecisions(self.graph, self.compile_id, rounds, tuple(self.fused), tuple(self.refused)))
            if rounds and rounds[-1].nodes_after is None:
                self.warnings.append(ParseWarning(
                    self.path, rounds[-1].line, f"round {rounds[-1].index} never completed: the log looks cut short"))
        self.graph, self.compile_id = "", ""
        self.rounds, self.fused, self.refused = [], [], []

    def finish(self) -> tuple[FusionDecisions, ...]:
        self._close()
        return tuple(self.graphs)
