"""The shared file's page: its Content-Security-Policy, the run's summary as escaped HTML, the
drawings as inert <template>s, the data as JSON, and the script that links them (share_assets).

What keeps an artifact's text from running: every string we write here goes through html.escape;
the drawings' text was escaped by Graphviz (and our DOT quoting before it); the data is JSON whose
every `<` is written `\\u003c`, read with JSON.parse and put in with textContent. Under all of it the
CSP lets only our own script run (by its hash): an injected <script> or onerror= would not run even
if it got through, and no request can leave the page (default-src 'none').
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html import escape

from compile_viz.render.fusion_notes import reason_note
from compile_viz.render.share_assets import CSS, SCRIPT
from compile_viz.render.summary import graph_break_rows, run_cards

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")


def csp(script: str) -> str:
    """The policy: nothing fetched or sent, only the script whose hash this is runs."""
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
            "base-uri 'none'; form-action 'none'")


def json_for_html(value: object) -> str:
    """`value` as JSON that an HTML parser cannot end early: every `<` written as \\u003c."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def page_html(run, data: dict, svgs: list[str]) -> str:
    """The whole file (`run`: render.share.SharedRun)."""
    templates = "".join(f'<template id="cv-d{k}">{svg}</template>' for k, svg in enumerate(svgs))
    kinds = sorted({p[4] for g in data["graphs"] if g.get("fusion") for p in g["fusion"]["pairs"]})
    notes = "".join(f'<div data-kind="{escape(k)}">{markdown_html(reason_note(k))}</div>' for k in kinds)
    title = escape(run.title)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{csp(SCRIPT)}">\n'
        '<meta name="referrer" content="no-referrer"><meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title} · compile_viz</title><style>{CSS}</style></head>\n<body>\n"
        f"{summary_html(run)}\n"
        '<noscript><p class="cv-warn">This page needs JavaScript for its drawings and code (its own script only: '
        "it fetches nothing).</p></noscript>\n"
        '<nav id="cv-nav"></nav>\n<main id="cv-graph"></main>\n<section id="cv-profile"></section>\n'
        f'<div id="cv-notes" hidden>{notes}</div>\n{templates}\n'
        f'<script type="application/json" id="cv-data">{json_for_html(data)}</script>\n'
        f"<script>{SCRIPT}</script>\n</body></html>\n")


def markdown_html(text: str) -> str:
    """Our notes' Markdown (**bold**, `code`) as HTML, escaped first."""
    return _CODE.sub(r"<code>\1</code>", _BOLD.sub(r"<b>\1</b>", escape(text)))


def summary_html(run) -> str:
    """The run at a glance: what it is, versions and device, the verdict, graph breaks, recompiles,
    ranks and how they differ."""
    meta = run.meta
    facts = [f'<span title="{escape(c.help)}"><b>{escape(c.label)}</b> {escape(c.value)}</span>' for c in run_cards(meta)]
    if meta.get("model") and meta.get("model") != run.title:
        facts.insert(0, f"<span><b>model</b> {escape(str(meta['model']))}</span>")
    if meta.get("status") == "failed":
        facts.append(f'<span class="cv-bad"><b>failed</b> {escape(str(meta.get("reason") or ""))[:300]}</span>')
    n = len(run.graph_ids)
    facts.append(f"<span><b>graphs</b> {n} shared</span>")
    parts = [f'<header><h1>{escape(run.title)}</h1><div class="cv-facts">{" · ".join(facts)}</div>',
             _verdict(run), _breaks(run), _recompiles(run), _ranks(run), "</header>"]
    return "\n".join(p for p in parts if p)


def _verdict(run) -> str:
    if run.measure is None:
        return ""
    from compile_viz.render.perf import correctness_word, verdict

    word, sentence = verdict(run.measure)
    tone = {"faster": "cv-good", "slower": "cv-warnword", "mismatch": "cv-bad"}.get(word, "")
    check = correctness_word(run.measure)
    return (f'<div class="cv-verdict"><span class="{tone}">{escape(sentence)}</span>'
            f"{f' Correctness: {escape(check)}.' if check else ''}</div>")


def _breaks(run) -> str:
    rows = graph_break_rows(run.meta, run.parse.graph_breaks)
    if not rows:
        return '<div class="cv-line">No graph breaks.</div>'
    items = "".join(f"<li>{escape(b.reason)}" + (f" · <code>{escape(b.where)}</code>" if b.where else "")
                    + (f" · <code>{escape(b.code)}</code>" if b.code else "") + "</li>" for b in rows[:100])
    return f"<details><summary>Graph breaks ({len(rows)})</summary><ul>{items}</ul></details>"


def _recompiles(run) -> str:
    found = [(log.rank, c) for log in run.logs for c in log.compiles if c.recompile_reasons]
    if found:
        items = "".join(f"<li>{'rank ' + str(r) + ' · ' if r is not None else ''}[{escape(c.id)}] {escape(c.co_name or '')}"
                        f": {escape('; '.join(c.recompile_reasons)[:400])}</li>" for r, c in found[:100])
        return f"<details><summary>Recompiles ({len(found)})</summary><ul>{items}</ul></details>"
    listed = run.meta.get("recompiles") or []
    if listed:
        items = "".join(f"<li>{escape(str(r.get('reason') or r.get('summary') or r) if isinstance(r, dict) else str(r))}</li>"
                        for r in listed[:100])
        return f"<details><summary>Recompiles ({len(listed)})</summary><ul>{items}</ul></details>"
    return ""


def _ranks(run) -> str:
    report = run.rank_report
    if report is None:
        return ""
    from compile_viz.render.ranks import KIND_TITLES  # a job of several ranks only: it loads compare/

    per = "".join(f"<li>rank {s.rank}: {s.compile_ids} compile ids, {s.graphs} graphs, {s.kernels} kernels, "
                  f"{s.launches} launches</li>" for s in report.summaries)
    if not report.divergences:
        said = f"<p>The {len(report.ranks)} ranks compiled the same: same compile ids, graphs, guards, collectives and cache outcomes.</p>"
    else:
        said = "<ol class=\"cv-divs\">" + "".join(
            f'<li><b>{escape(KIND_TITLES.get(d.kind, d.kind))}</b> · rank{"s" if len(d.ranks) > 1 else ""} '
            f"{escape(', '.join(map(str, d.ranks)))}: {escape(d.detail)}"
            f'<br><span class="cv-muted">{escape(d.meaning)}</span></li>' for d in report.divergences) + "</ol>"
    head = f"{len(report.ranks)} ranks" + (f", {len(report.divergences)} divergence{'s' if len(report.divergences) != 1 else ''}"
                                            if report.divergences else ", no divergence")
    return f"<details{' open' if report.divergences else ''}><summary>Ranks: {head}</summary><ul>{per}</ul>{said}</details>"
