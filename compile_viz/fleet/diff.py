"""Two sweeps side by side (`compile-viz fleet A B`): cells paired by model and setting name, each pair
compared by the compare engine, and the pairs that changed said in one line each, the most telling first.

Why a pair changed comes from what the runs recorded and from compare's launch groups: verdict,
status, graph breaks new or gone (with Dynamo's reason), recompiles (with the guard that failed),
graphs, fusion groups merged / split / regrouped / moved, kernels and launches, a clear change of speedup.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from compile_viz.compare import diff_runs
from compile_viz.compare.model import CLASSES, MERGED, MOVED, ONLY_A, ONLY_B, REGROUPED, SAME, SPLIT
from compile_viz.compare.sides import CompareError, load_side
from compile_viz.fleet.records import FleetError, load_record
from compile_viz.fleet.report import fleet_report, split_ref
from compile_viz.measurements import MeasureSummary
from compile_viz.store import RunStore

COUNTED = ("status", "verdict", "graphs", "graph_breaks", "recompiles", "kernels", "launches")
GROUP_WORDS = {MERGED: "merged (more fusion)", SPLIT: "split (less fusion)", REGROUPED: "fused differently",
               MOVED: "moved to another kernel kind", ONLY_A: "only in A", ONLY_B: "only in B"}


def fleet_diff(store: RunStore, ref_a: str, ref_b: str) -> dict[str, Any]:
    """Return {"a", "b", "changes": [{"model", "setting", "torch", "what", "why", "pair"}], "same": N,
    "unpaired": [...]}; changes sorted by impact (verdict, status, speedup, compile time, kernels)."""
    rep_a, rep_b = fleet_report(store, ref_a), fleet_report(store, ref_b)
    by_torch = _versioned(store, ref_a) and _versioned(store, ref_b)
    rows_a = {_key(r, by_torch): r for r in rep_a["cells"]}
    rows_b = {_key(r, by_torch): r for r in rep_b["cells"]}
    changes, same = [], 0
    for key in [k for k in rows_a if k in rows_b]:
        change = pair_change(store, rows_a[key], rows_b[key])
        if change is None:
            same += 1
        else:
            changes.append(change)
    changes.sort(key=_impact)
    unpaired = [{"model": r["model"], "setting": r["setting"], "torch": r["torch"], "only_in": side}
                for side, mine, other in (("a", rows_a, rows_b), ("b", rows_b, rows_a))
                for k, r in mine.items() if k not in other]
    return {"a": ref_a, "b": ref_b, "changes": changes, "same": same, "unpaired": unpaired}


def _versioned(store: RunStore, ref: str) -> bool:
    name, version = split_ref(ref)
    return version is None and any(c.torch for c in load_record(store, name).cells)


def _key(row: dict[str, Any], by_torch: bool) -> tuple:
    return (row["model"], row["setting"], row["torch"]) if by_torch else (row["model"], row["setting"])


def pair_change(store: RunStore, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any] | None:
    """Return the change of one pair of cells, or None when nothing that counts moved."""
    what = {f: [a[f], b[f]] for f in (*COUNTED, "compile_s", "speedup")}
    reasons: list[str] = []
    groups: Counter = Counter()
    if a["status"] != b["status"]:
        reasons.append(_status_words(a, b))
    elif a["status"] == "complete":
        if a["verdict"] != b["verdict"]:
            reasons.append(f"correctness {a['verdict'] or 'not measured'} -> {b['verdict'] or 'not measured'}")
        reasons += _run_reasons(store, a["run"], b["run"])
        groups = _groups(store, a["run"], b["run"])
        reasons += [f"{groups[c]} launch group{'s' * (groups[c] > 1)} {GROUP_WORDS[c]}" for c in CLASSES
                    if c != SAME and groups[c]]
        for f, unit in (("kernels", "kernels"), ("launches", "launches")):
            if what[f][0] != what[f][1] and None not in what[f]:
                reasons.append(f"{unit} {what[f][0]} -> {what[f][1]}")
        if speed := _speedup_words(store, a["run"], b["run"]):
            reasons.append(speed)
    if groups:
        what["groups"] = {c: n for c, n in groups.items() if n}
    if not reasons:
        return None
    return {"model": a["model"], "setting": a["setting"], "torch": [a["torch"], b["torch"]], "what": what,
            "why": "; ".join(reasons), "pair": [a["run"], b["run"]]}


def _status_words(a: dict[str, Any], b: dict[str, Any]) -> str:
    if b["status"] != "complete":
        return f"B {b['status']}: {b['reason'] or 'no reason recorded'}"
    return f"A {a['status']} ({a['reason'] or 'no reason recorded'}), B complete"


def _run_reasons(store: RunStore, run_a: str, run_b: str) -> list[str]:
    """Graph breaks and recompiles new or gone, with their recorded reasons; the number of graphs."""
    ma, mb = store.get(run_a).meta, store.get(run_b).meta
    out = []
    for field, noun, text in (("graph_breaks", "graph break", "summary"), ("recompiles", "recompile", "reason")):
        before = Counter(str(x.get(text) or "?") for x in ma.get(field) or ())
        after = Counter(str(x.get(text) or "?") for x in mb.get(field) or ())
        new, gone = after - before, before - after
        if new:
            out.append(f"{sum(new.values())} new {noun}{'s' * (sum(new.values()) > 1)} ({next(iter(new))})")
        if gone:
            out.append(f"{sum(gone.values())} {noun}{'s' * (sum(gone.values()) > 1)} gone ({next(iter(gone))})")
    ga, gb = len(ma.get("graphs") or ()), len(mb.get("graphs") or ())
    if ga != gb:
        out.append(f"graphs {ga} -> {gb}")
    return out


def _groups(store: RunStore, run_a: str, run_b: str) -> Counter:
    """Return class -> launch groups over every pair of graphs, by the compare engine."""
    try:
        a, b = load_side(run_a, store), load_side(run_b, store)
    except CompareError as e:
        raise FleetError(f"cannot compare {run_a} with {run_b}: {e}") from None
    out: Counter = Counter()
    for gm in diff_runs(a, b).graphs:
        out.update(gm.counts())
    return out


def _speedup_words(store: RunStore, run_a: str, run_b: str) -> str | None:
    """Return "speedup 1.40x -> 1.10x" when both runs were measured and their intervals do not overlap."""
    sa = MeasureSummary.from_json(store.get(run_a).meta.get("measure"))
    sb = MeasureSummary.from_json(store.get(run_b).meta.get("measure"))
    if not sa or not sb or not sa.speedup or not sb.speedup:
        return None
    if None in (sa.speedup_low, sa.speedup_high, sb.speedup_low, sb.speedup_high):
        return None
    if sa.speedup_high < sb.speedup_low or sb.speedup_high < sa.speedup_low:
        return f"speedup {sa.speedup:.2f}x -> {sb.speedup:.2f}x"
    return None


def _impact(change: dict[str, Any]) -> tuple:
    what = change["what"]

    def delta(f: str) -> float:
        x, y = what[f]
        return abs(y - x) if isinstance(x, (int, float)) and isinstance(y, (int, float)) else 0.0

    verdict = what["verdict"][0] != what["verdict"][1] or what["status"][0] != what["status"][1]
    return (not verdict, -delta("speedup"), -delta("compile_s"), -delta("kernels"), change["model"], change["setting"])

