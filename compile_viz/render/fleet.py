"""A sweep and the diff of two sweeps as tables and figures, from the plain documents `compile-viz fleet`
prints (fleet/report.py, fleet/diff.py): failed cells first; compile time against kernels; speedup per
model. Pure functions: no Streamlit, nothing read from disk."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

_STATUS_ORDER = {"error": 0, "failed": 1, "missing": 2, "complete": 3}
STATUS_COLOURS = {"complete": "#2e7d32", "failed": "#c62828", "error": "#6a1b9a", "missing": "#9e9e9e"}


def cell_table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Return one row a cell for a table, failed cells first: blank where a cell has no number."""
    rows = []
    for c in sorted(report["cells"], key=lambda c: _STATUS_ORDER.get(c["status"], 9)):
        rows.append({
            "status": c["status"], "model": c["model"], "setting": c["setting"], "torch": c["torch"] or "",
            "compile s": _num(c["compile_s"], 1), "graphs": _num(c["graphs"]), "graph breaks": _num(c["graph_breaks"]),
            "recompiles": _num(c["recompiles"]), "kernels": _num(c["kernels"]), "launches": _num(c["launches"]),
            "speedup": _num(c["speedup"], 2), "verdict": c["verdict"] or "", "reason": c["reason"] or "",
            "run": c["run"] or "",
        })
    return _drop_empty(rows, keep=("status", "model", "setting", "run"))


def _drop_empty(rows: list[dict[str, Any]], keep: tuple[str, ...]) -> list[dict[str, Any]]:
    """Leave out the columns no row has a value in (speedup and verdict of a sweep that measured nothing)."""
    empty = [k for k in (rows[0] if rows else {}) if k not in keep and all(r[k] in (None, "") for r in rows)]
    return [{k: v for k, v in r.items() if k not in empty} for r in rows]


def _num(value: Any, digits: int = 0) -> float | int | None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return round(float(value), digits) if digits else int(value)


def summary_line(report: dict[str, Any]) -> str:
    """Return "8 cells: 7 complete, 1 failed · 312 s on Ray (local)"."""
    cells = report["cells"]
    counts: dict[str, int] = {}
    for c in cells:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: _STATUS_ORDER.get(kv[0], 9)))
    wall = f" · {report['wall_s']:.0f} s" if isinstance(report.get("wall_s"), (int, float)) else ""
    where = f"Ray at {report['address']}" if report.get("address") else "a local Ray"
    return f"{len(cells)} cells: {parts}{wall} on {where}"


def compile_vs_kernels(report: dict[str, Any]) -> go.Figure:
    """Return a scatter of compile time against kernels, one point a complete cell, a colour a setting."""
    fig = go.Figure()
    by_setting: dict[str, list[dict[str, Any]]] = {}
    for c in report["cells"]:
        if c["status"] == "complete" and c["compile_s"] is not None and c["kernels"] is not None:
            by_setting.setdefault(c["setting"], []).append(c)
    for setting, cells in by_setting.items():
        fig.add_trace(go.Scatter(
            x=[c["kernels"] for c in cells], y=[c["compile_s"] for c in cells], mode="markers", name=setting,
            text=[c["model"] for c in cells], marker={"size": 10},
            hovertemplate="%{text}<br>%{x} kernels, %{y:.1f} s<extra>" + _safe(setting) + "</extra>"))
    fig.update_layout(xaxis_title="kernels", yaxis_title="compile time (s)", height=360,
                      margin={"l": 40, "r": 10, "t": 30, "b": 40}, title="compile time against kernels")
    return fig


def short_models(models: list[str]) -> dict[str, str]:
    """Return model -> its name on an axis: a model file's name without its folders ("models.py:GPT2_TRAIN"
    for "tests/third_party/models.py:GPT2_TRAIN"), unless two models would then read the same."""
    short = {m: m.rpartition("/")[2] for m in models}
    seen: dict[str, int] = {}
    for label in short.values():
        seen[label] = seen.get(label, 0) + 1
    return {m: label if seen[label] == 1 else m for m, label in short.items()}


def speedup_per_model(report: dict[str, Any]) -> go.Figure | None:
    """Return bars of speedup over eager per model, a group a setting; None when no cell was measured."""
    measured = [c for c in report["cells"] if c["status"] == "complete" and c["speedup"] is not None]
    if not measured:
        return None
    short = short_models([c["model"] for c in measured])
    fig = go.Figure()
    for setting in dict.fromkeys(c["setting"] for c in measured):
        cells = [c for c in measured if c["setting"] == setting]
        fig.add_trace(go.Bar(x=[short[c["model"]] for c in cells], y=[c["speedup"] for c in cells], name=setting,
                             text=[c["model"] for c in cells], textposition="none",
                             hovertemplate="%{text}<br>%{y:.2f}x<extra>" + _safe(setting) + "</extra>"))
    fig.add_hline(y=1.0, line_dash="dot", line_color="#757575")
    fig.update_layout(barmode="group", yaxis_title="speedup over eager (x)", height=360,
                      margin={"l": 40, "r": 10, "t": 30, "b": 80}, title="speedup per model")
    return fig


def change_table(diff: dict[str, Any]) -> list[dict[str, Any]]:
    """Return one row a changed pair of cells, in the diff's order (most telling first)."""
    rows = []
    for c in diff["changes"]:
        what = c["what"]
        rows.append({
            "model": c["model"], "setting": c["setting"], "why": c["why"],
            "status": _arrow(what["status"]), "graphs": _arrow(what["graphs"]),
            "graph breaks": _arrow(what["graph_breaks"]), "recompiles": _arrow(what["recompiles"]),
            "kernels": _arrow(what["kernels"]), "speedup": _arrow(what["speedup"], 2),
            "A": c["pair"][0] or "", "B": c["pair"][1] or "",
        })
    return rows


def _arrow(pair: list[Any], digits: int = 0) -> str:
    a, b = (("-" if v is None else f"{v:.{digits}f}" if isinstance(v, float) else str(v)) for v in pair)
    return a if a == b else f"{a} → {b}"


def diff_line(diff: dict[str, Any]) -> str:
    """Return "A → B: 1 changed, 1 the same, 5 in one sweep only"."""
    only = f", {len(diff['unpaired'])} in one sweep only" if diff["unpaired"] else ""
    return f"{diff['a']} → {diff['b']}: {len(diff['changes'])} changed, {diff['same']} the same{only}"


def _safe(text: str) -> str:
    """Plotly hover templates read %{…} and HTML: a setting's name is shown as text."""
    from html import escape

    return escape(text).replace("%", "%%").replace("{", "&#123;")

