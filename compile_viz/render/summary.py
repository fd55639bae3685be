"""Summary cards of one compiled graph: counts from the parse and the index, facts from the run's meta."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from compile_viz.linking.model import GraphIndex, GraphSummary

LAUNCHES_HELP = "launches of generated kernels in call()"
EXTERN_HELP = "library calls (mm, conv, attention...) in call()"


@dataclass(frozen=True)
class Card:
    label: str
    value: str
    help: str = ""


def graph_cards(index: GraphIndex) -> list[Card]:
    """Return the per-graph cards: FX ops, kernels, launches, extern calls, ops per kernel, each the
    graph's GraphSummary (linking), the numbers the Compare page and the layout line (launch_counts) give."""
    s = index.summary
    return [
        Card("FX ops", str(s.fx_ops), f"call_function nodes, getitem left out: {s.fx_ops} AOT, {s.post_grad_ops} post-grad"),
        Card("kernels", str(s.kernels), "kernel definitions in output_code.py"),
        Card("launches", str(s.launches), LAUNCHES_HELP),
        Card("extern calls", str(s.extern_calls), EXTERN_HELP),
        Card("ops / kernel", f"{s.ops_per_kernel:.1f}", "post-grad ops per generated-kernel launch: how much fusion bought"),
    ]


def launch_counts(summary: GraphSummary) -> str:
    """'3 launches, 2 extern calls': what call() runs, in the words and numbers of the cards."""
    return f"{_count(summary.launches, 'launch', 'launches')}, {_count(summary.extern_calls, 'extern call')}"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def run_cards(meta: dict) -> list[Card]:
    """Return the per-run cards: compile time, versions, device."""
    cards = []
    timings = meta.get("timings") or {}
    if timings.get("compile_s") is not None:
        cards.append(Card("compile time", f"{timings['compile_s']:.1f} s", "first call, compile included"))
    versions = meta.get("versions") or {}
    if versions.get("torch"):
        tri = f" · triton {versions['triton']}" if versions.get("triton") else ""
        cards.append(Card("versions", f"torch {versions['torch']}{tri}", ""))
    hw = meta.get("hardware") or {}
    if hw.get("gpu") or hw.get("cpu"):
        cards.append(Card("device", str(hw.get("gpu") or hw.get("cpu")), str(hw.get("device", ""))))
    return cards


@dataclass(frozen=True)
class BreakRow:
    reason: str
    where: str
    code: str


def graph_break_rows(meta: dict, parsed_breaks: tuple) -> list[BreakRow]:
    """Return the graph breaks: from the capture's records when there are any, else from debug.log."""
    rows = []
    for b in meta.get("graph_breaks") or []:
        where = f"{b.get('file', '')}:{b.get('line', '')}".strip(":")
        rows.append(BreakRow(str(b.get("summary") or b.get("reason") or ""), where, ""))
    if not rows:
        for b in parsed_breaks:
            rows.append(BreakRow(b.reason, f"{b.file}:{b.line}" if b.file else "", b.code))
    return rows


_SHORT = 10  # values up to this many characters are drawn large; longer ones (versions, device) small


def cards_html(cards: list[Card]) -> str:
    """Return the cards as one row that wraps instead of cutting a value short ("torc…"), escaped;
    each card's help is its tooltip."""
    items = []
    for c in cards:
        size = "26px" if len(c.value) <= _SHORT else "15px"
        title = f' title="{escape(c.help)}"' if c.help else ""
        items.append(
            f'<div class="cv-card" data-label="{escape(c.label)}"{title} style="min-width:4.5em;max-width:100%">'
            f'<div style="font-size:13px;color:#555;white-space:nowrap">{escape(c.label)}</div>'
            f'<div class="cv-card-value" style="font-size:{size};line-height:1.25;overflow-wrap:anywhere">'
            f"{escape(c.value)}</div></div>")
    return ('<div class="cv-cards" style="display:flex;flex-wrap:wrap;align-items:flex-end;gap:6px 28px;'
            'margin:2px 0 6px">' + "".join(items) + "</div>")
