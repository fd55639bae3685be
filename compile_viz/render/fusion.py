"""Fusion decisions as HTML tables, text and a Plotly chart: pure functions, everything escaped."""

from __future__ import annotations

from html import escape

from compile_viz.artifacts.model import FusionDecisions, FusionPair, GraphParse
from compile_viz.linking.fusion import Access, SharedBuffer, WhySeparate, members
from compile_viz.linking.model import GraphIndex
from compile_viz.render.fusion_notes import reason_note
from compile_viz.render.panels import _TABLE, _TD

BAR = "#c0392b"


def _short(name: str, limit: int = 6) -> str:
    parts = members(name)
    if len(parts) <= limit:
        return name
    return "_".join(parts[:3]) + f"_…({len(parts)} nodes)…_" + parts[-1]


def launch_label(index: GraphIndex, i: int) -> str:
    la = index.launches[i]
    return f"L{i} {la.kernel}"


MAX_PAIR_ROWS = 200  # a 48-layer backward refuses thousands of pairs: the page shows the first ones


def pairs_html(pairs: tuple[FusionPair, ...] | list[FusionPair], *, height_px: int = 300,
               limit: int = MAX_PAIR_ROWS) -> str:
    """One row per pair: round, the two nodes, fused into / refused because (the first `limit`
    rows, then a row saying how many more there are)."""
    rows = []
    seen: dict[tuple, int] = {}  # Inductor weighs the same pair again within a round: one row, a count
    unique = []
    for p in pairs:
        key = (p.round, p.first, p.second, p.result, p.reason)
        if key not in seen:
            unique.append(p)
        seen[key] = seen.get(key, 0) + 1
    for p in unique:
        times = seen[(p.round, p.first, p.second, p.result, p.reason)]
        verdict = (f'<span style="color:#1e7d32">fused into</span> <code>{escape(_short(p.result))}</code>'
                   if p.result else f'<span style="color:{BAR}">refused</span>: {escape(p.reason)} '
                   f'<span style="color:#777">({escape(p.kind)})</span>')
        if times > 1:
            verdict += f' <span style="color:#777">×{times}</span>'
        rows.append(f"<tr><td {_TD}>{p.round}</td><td {_TD}><code>{escape(_short(p.first))}</code></td>"
                    f"<td {_TD}><code>{escape(_short(p.second))}</code></td><td {_TD}>{verdict}</td></tr>")
    if len(rows) > limit:
        more = len(rows) - limit
        rows = rows[:limit] + [f"<tr><td {_TD} colspan=4>… and {more} more (pick two kernels under \"Why are "
                               f"these separate?\" for the pairs between them; `compile-viz why` lists all)</td></tr>"]
    head = (f"<tr><th {_TD}>round</th><th {_TD}>first</th><th {_TD}>second</th><th {_TD}>decision</th></tr>")
    return _TABLE.format(h=height_px, rows=head + "".join(rows))


def why_markdown(answer: WhySeparate, index: GraphIndex) -> str:
    """The verdict of "why are these separate", in one paragraph (Markdown; names escaped)."""
    a, b = f"`{launch_label(index, answer.a)}`", f"`{launch_label(index, answer.b)}`"
    if answer.same_kernel:
        return f"{a} and {b} run the same fused node: nothing was refused between them."
    if not answer.pairs:
        return f"Inductor never weighed {a} and {b} as a pair. {answer.never}"
    refused = [p for p in answer.pairs if not p.result]
    kinds = sorted({p.kind for p in refused})
    text = (f"Inductor weighed {len(answer.pairs)} pair(s) between {a} and {b} and refused "
            f"{len(refused)}: " + ", ".join(f"**{k.replace('_', ' ')}**" for k in kinds) + ".")
    if answer.between:
        text += " In between: " + ", ".join(f"`{launch_label(index, c)}`" for c in answer.between) + "."
    shared = [shared_sentence(first, second, found, code=_backticks)
              for first, second, found in answer.shared if found]
    return "\n\n".join([text, *shared, *(reason_note(k) for k in kinds)])


def why_text(graph: GraphParse, answer: WhySeparate, index: GraphIndex) -> str:
    """The same answer for a terminal (`compile-viz why`)."""
    lines = [f"{graph.id}: {launch_label(index, answer.a)}  vs  {launch_label(index, answer.b)}"]
    if answer.same_kernel:
        lines.append("  the same fused node: nothing was refused between them")
    elif not answer.pairs:
        lines.append(f"  never considered as a pair: {answer.never}")
    if answer.between:
        lines.append("  in between: " + ", ".join(launch_label(index, c) for c in answer.between))
    for p in answer.pairs:
        verdict = f"fused into {p.result}" if p.result else f"refused ({p.kind}): {p.reason}"
        lines.append(f"  round {p.round}: {p.first} with {p.second}: {verdict}")
    lines += [f"  {shared_sentence(first, second, found)}" for first, second, found in answer.shared if found]
    return "\n".join(lines)


def _backticks(text: str) -> str:
    return f"`{text}`"


SCORE_RULE = ("Inductor's score (score_fusion_memory) counts the accesses both nodes make alike, the same "
              "buffer at the same index over the same loop ranges; these are not alike, so the pair scored 0")


def shared_sentence(first: str, second: str, shared: tuple[SharedBuffer, ...], *, code=str, limit: int = 3) -> str:
    """Return one paragraph on a pair refused for no shared data that touches a buffer in common:
    which buffer, how each side indexes it, and why Inductor counts that as nothing shared.
    `code` marks names and expressions (backticks in Markdown, nothing in a terminal)."""
    a, b = code(_short(first)), code(_short(second))
    parts = []
    for buf in shared[:limit]:
        mine, theirs = buf.first, buf.second
        same_index = {x.dep.index for x in mine} == {x.dep.index for x in theirs}
        how = ("the same index over other loop ranges" if same_index else "other index expressions")
        parts.append(f"{_verbs(a, mine, b, theirs, code(buf.buffer))}, but not alike ({how}): "
                     f"{a} {_list(mine, code)}; {b} {_list(theirs, code)}")
    more = f" (and {len(shared) - limit} more buffers)" if len(shared) > limit else ""
    if any(buf.same_access for buf in shared):
        return ("; ".join(parts) + more + ". One access is the same on both sides in ir_pre_fusion.txt, yet "
                "Inductor scored no shared data: the accesses changed after that dump (loops reordered, or a "
                "fused node's reads).")
    return "; ".join(parts) + more + f". {SCORE_RULE}."


def _verbs(a: str, mine: tuple[Access, ...], b: str, theirs: tuple[Access, ...], buf: str) -> str:
    if not any(x.write for x in mine + theirs):
        return f"{a} and {b} both read {buf}"
    return f"{a} {_verb(mine)} {buf} and {b} {_verb(theirs)} it"


def _verb(accesses: tuple[Access, ...]) -> str:
    writes = {x.write for x in accesses}
    return "reads and writes" if len(writes) > 1 else ("writes" if True in writes else "reads")


def _list(accesses: tuple[Access, ...], code, limit: int = 3) -> str:
    """`reads it at c0 + 64*c1 over {c0: 8, c1: 64}, at …` (a StarDep has no index: `as a whole`)."""
    said = [f"{'writes' if x.write else 'reads'} it " +
            (f"at {code(x.dep.index)} over {code(x.dep.ranges)}" if x.dep.index else f"whole ({x.dep.kind})")
            for x in accesses[:limit]]
    return ", ".join(said) + (f" and {len(accesses) - limit} more" if len(accesses) > limit else "")


def refusals_figure(counts: list[tuple[str, int]]):
    """A horizontal bar per refusal kind, most frequent on top; `customdata` holds the kind."""
    import plotly.graph_objects as go

    kinds = [k for k, _ in counts][::-1]
    values = [n for _, n in counts][::-1]
    fig = go.Figure(go.Bar(x=values, y=[k.replace("_", " ") for k in kinds], orientation="h",
                           marker_color=BAR, customdata=kinds,
                           hovertemplate="%{y}: %{x} refused pairs<extra></extra>"))
    fig.update_layout(height=max(160, 34 * len(kinds) + 70), margin=dict(l=10, r=10, t=30, b=30),
                      title="Refused pairs by reason (click a bar)", xaxis_title="pairs")
    return fig


def rounds_html(graph: GraphParse, decisions: FusionDecisions, *, height_px: int = 360) -> str:
    """From the pre-fusion nodes to the post-fusion groups, round by round (for teaching)."""
    pre = len(graph.pre_fusion.nodes) if graph.pre_fusion else "?"
    groups = graph.post_fusion.fusion_groups if graph.post_fusion else ()
    rows = [f"<tr><td {_TD}>before</td><td {_TD}>{pre} scheduler nodes (ir_pre_fusion.txt)</td><td {_TD}></td></tr>"]
    for r in decisions.rounds:
        fused = [p for p in decisions.fused if p.round == r.index]
        refused = sum(1 for p in decisions.refused if p.round == r.index)
        made = ", ".join(f"<code>{escape(_short(p.result))}</code>" for p in fused[:8])
        more = f" and {len(fused) - 8} more" if len(fused) > 8 else ""
        after = "?" if r.nodes_after is None else r.nodes_after
        rows.append(f"<tr><td {_TD}>round {r.index}</td><td {_TD}>{r.nodes_before} → {after} nodes: "
                    f"{len(fused)} fused, {refused} refused</td><td {_TD}>{made}{more}</td></tr>")
    rows.append(f"<tr><td {_TD}>after</td><td {_TD}>{len(groups)} fusion groups (ir_post_fusion.txt)</td>"
                f"<td {_TD}>{', '.join(f'<code>{escape(_short(g.name))}</code>' for g in groups[:8])}</td></tr>")
    return _TABLE.format(h=height_px, rows="".join(rows))
