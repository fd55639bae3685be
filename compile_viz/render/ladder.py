"""The backend ladder of a wrong result as escaped HTML: a short row of stages (eager, aot_eager,
aot_eager_decomp_partition, inductor), the first red one, and what to do next; inside Inductor,
what PyTorch's compiler bisector named, with links to its kernel. Pure: no st.* calls."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from compile_viz.linking.model import POST_GRAD, GraphIndex
from compile_viz.measurements.ladder import NEXT_STEP, STAGES, Bisect, Ladder, LadderStage
from compile_viz.render.links import PageLink
from compile_viz.render.selection import select

COLORS = {True: ("#e6f4ea", "#1e7b34", "✓"), False: ("#fde7e9", "#b3261e", "✗"), None: ("#fff3cd", "#8a6100", "?")}
NOT_RUN = ("#f1f3f4", "#5f6368", "not run")
SHORT = {"graph capture (Dynamo)": "Dynamo", "decompositions": "decomps"}


def _chip(backend: str, stage: str, entry: LadderStage | None) -> str:
    bg, fg, mark = COLORS[entry.ok] if entry else NOT_RUN
    title = "not run: an earlier stage already differs" if entry is None else (
        entry.error or entry.note or ("agrees with eager" if entry.ok else "differs from eager"))
    return (f"<span class='cv-ladder-stage' title='{escape(title)}' style='background:{bg};color:{fg};"
            f"border:1px solid {fg};border-radius:10px;padding:1px 8px;margin-right:4px;font-size:13px'>"
            f"{escape(SHORT.get(stage, stage))} <code>{escape(backend)}</code> {escape(mark)}</span>")


def stages_html(ladder: Ladder) -> str:
    """Return the row of stages: every backend of the ladder, in order, run or not."""
    ran = {s.backend: s for s in ladder.stages}
    known = [(b, n) for b, n in STAGES] + [(s.backend, s.stage) for s in ladder.stages
                                           if s.backend not in dict(STAGES)]
    arrows = "<span style='color:#999;margin-right:4px'>→</span>"
    return "<div class='cv-ladder'>" + arrows.join(_chip(b, n, ran.get(b)) for b, n in known) + "</div>"


def next_step_html(ladder: Ladder, links: Sequence[tuple[str, str]] = ()) -> str:
    """Return the first red stage and what to do next (the bisector's answer and kernel links for Inductor)."""
    if ladder.first is None:
        return "<div style='font-size:13px'>Every stage agrees with eager: the difference did not come back.</div>"
    red = next((s for s in ladder.stages if s.backend == ladder.first_backend), None)
    where = f" ({red.error or red.note})" if red and (red.error or red.note) else ""
    lines = [f"<b>first red: {escape(ladder.first)}</b>{escape(where)}",
             escape(NEXT_STEP.get(ladder.first, ""))]
    if ladder.bisect is not None:
        lines += _bisect_lines(ladder.bisect, links)
    return "<div style='font-size:13px;margin-top:4px'>" + "<br>".join(x for x in lines if x) + "</div>"


def _bisect_lines(b: Bisect, links: Sequence[tuple[str, str]]) -> list[str]:
    if not b.ran:
        return [f"PyTorch's compiler bisector: {escape(b.error or 'did not run')}",
                f"by hand: <code>{escape(b.command or '')}</code>" if b.command else ""]
    out = [f"PyTorch's compiler bisector names <b>{escape(b.found or '?')}</b>"]
    if links:
        out.append("its kernel: " + ", ".join(f"<a href='{escape(href)}' target='_self'>{escape(label)}</a>"
                                              for label, href in links))
    elif b.node:
        out.append(f"no kernel of this run covers FX node <code>{escape(b.node)}</code> "
                   "(its graph may have other node names)")
    if b.disable:
        out.append(f"to avoid it: <code>{escape(b.disable)}</code>")
    return out


def ladder_html(ladder: Ladder | None, *, links: Sequence[tuple[str, str]] = ()) -> str:
    """Return the whole ladder block ("" when the run has no ladder)."""
    if ladder is None or not ladder.stages:
        return ""
    ref = f"<div style='font-size:12px;color:#666'>reference: {escape(ladder.reference)}</div>" if ladder.reference else ""
    return stages_html(ladder) + next_step_html(ladder, links) + ref


def kernel_links(bisect: Bisect | None, graphs: Sequence[tuple[str, GraphIndex]], run: str, link: PageLink,
                 limit: int = 4) -> list[tuple[str, str]]:
    """Return (label, Viewer link) for each graph whose post-grad graph has the FX node the bisector
    named, with the kernel that computes it: ?run=&graph=&view=post_grad&node=&kernel=&launch=."""
    if bisect is None or not bisect.node:
        return []
    out = []
    for graph_id, index in graphs:
        sel = select(index, POST_GRAD, node=bisect.node)
        if not sel.launches:
            continue
        launch = min(sel.launches)
        kernel = index.launches[launch].kernel
        href = link("viewer", run=run, graph=graph_id, view=POST_GRAD, node=bisect.node, kernel=kernel, launch=launch)
        out.append((f"{kernel} ({graph_id})", href))
        if len(out) >= limit:
            break
    return out
