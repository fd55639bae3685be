"""The tool's compiled latency against do_bench in fresh processes (issue 17): one JSON per model, one table.

    python3 scripts/timing_table.py collect OUT NAME MODEL "FLAGS"   # after one model: OUT/NAME.json
    python3 scripts/timing_table.py table OUT                         # the markdown table of every OUT/*.json

`collect` reads the run folder named on the last line of OUT/NAME.capture.log (the capture's own
output) through compile_viz.measurements, and OUT/NAME.bench*.json (bench/timing_check.py).
Stdlib only. The two agree when the tool's interval of the compiled median overlaps the range
of the do_bench medians (one per fresh process); either way the table gives the gap in percent
from the median of those.
"""

from __future__ import annotations

import json
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compile_viz.measurements import read_run  # noqa: E402

HEADER = ("| model | flags | tool: compiled ms [interval] | rounds | do_bench ms, 3 fresh processes "
          "(median each) | do_bench spread | tool vs do_bench | CPU ms per call (tool / do_bench proc.) "
          "| GPU kernel ms per call | who sets the pace | speedup [interval] |")


def _log(out: Path, name: str) -> list[str]:
    log = out / f"{name}.capture.log"
    return log.read_text(errors="replace").splitlines() if log.is_file() else []


def _run_folder(out: Path, name: str) -> Path | None:
    """Return the run folder the capture printed last (its last line), or None."""
    for line in reversed(_log(out, name)):
        if line.startswith("/") and (Path(line.strip()) / "meta.json").is_file():
            return Path(line.strip())
    return None


def _failure(out: Path, name: str) -> str:
    lines = _log(out, name)
    return next((x.split("capture failed:", 1)[1].strip() for x in reversed(lines) if "capture failed:" in x),
                lines[-1] if lines else "no capture log")


def collect(out: Path, name: str, model: str, flags: str) -> dict:
    """Return (and write to OUT/NAME.json) the tool's figures and the do_bench runs of one model."""
    record: dict = {"name": name, "model": model, "flags": flags, "do_bench": []}
    for path in sorted(out.glob(f"{name}.bench*.json")):
        try:
            record["do_bench"].append(json.loads(path.read_text()))
        except (OSError, ValueError) as e:
            record["do_bench"].append({"error": f"{path.name}: {e}"})
    run = _run_folder(out, name)
    if run is None:
        record["error"] = f"capture failed: {_failure(out, name)}"
    else:
        meta = json.loads((run / "meta.json").read_text())
        summary, full = read_run(run, meta)
        record.update(run=str(run), versions=meta.get("versions"), hardware=meta.get("hardware"))
        if meta.get("status") != "complete":
            record["error"] = f"capture failed: {meta.get('reason') or _failure(out, name)}"
        elif full is None or summary is None:
            record["error"] = "not measured"
        else:
            lat = full.compiled.latency
            lb = full.launch()
            record["tool"] = {
                "compiled_ms": summary.compiled_median_ms, "low_ms": summary.compiled_low_ms,
                "high_ms": summary.compiled_high_ms, "rounds": lat.rounds if lat else None,
                "round_medians_ms": list(lat.round_medians_ms) if lat else [], "speedup": summary.speedup,
                "speedup_low": summary.speedup_low, "speedup_high": summary.speedup_high,
                "cpu_per_call_ms": full.cpu_per_call.median_ms if full.cpu_per_call else None,
                "gpu_kernel_ms": lb.gpu_ms if lb else None, "bound": lb.bound if lb else None,
                "method": full.timing().line(), "load_avg_1m": full.method.load_avg_1m if full.method else None,
                "errors": list(full.errors)}
    record["agreement"] = agreement(record)
    (out / f"{name}.json").write_text(json.dumps(record, indent=1))
    return record


def agreement(record: dict) -> dict | None:
    """Return {"agree", "gap", "db_low", "db_high"}: the tool's interval against the do_bench range."""
    tool = record.get("tool") or {}
    runs = [r for r in record.get("do_bench", []) if isinstance(r.get("median_ms"), (int, float))]
    if not runs or tool.get("compiled_ms") is None:
        return None
    medians = [r["median_ms"] for r in runs]
    lo, hi = min(medians), max(medians)
    t, t_lo, t_hi = tool["compiled_ms"], tool.get("low_ms") or tool["compiled_ms"], tool.get("high_ms") or tool["compiled_ms"]
    mid = statistics.median(medians)
    return {"agree": t_lo <= hi and lo <= t_hi, "gap": t / mid - 1 if mid else None, "db_median": mid,
            "db_low": lo, "db_high": hi, "db_spread": (max(medians) - min(medians)) / mid if mid else None}


def _ms(v) -> str:
    return "?" if v is None else f"{v:.4g}"


def row(record: dict) -> str:
    """Return one table row of a collected record."""
    name, flags = record["name"], record.get("flags") or ""
    if record.get("error"):
        return f"| {name} | {flags} | {record['error'][:120].replace('|', '/')} | | | | | | | | |"
    t, a = record["tool"], record.get("agreement")
    runs = [r for r in record["do_bench"] if isinstance(r.get("median_ms"), (int, float))]
    benches = ", ".join(_ms(r["median_ms"]) for r in runs) or "failed"
    spread = f"{a['db_spread']:.0%}" if a and a["db_spread"] is not None else ""
    verdict = ("agree" if a["agree"] else "**differ**") + f" ({a['gap']:+.0%})" if a and a["gap"] is not None else ""
    cpu_db = statistics.median([r["cpu_per_call_ms"] for r in runs if r.get("cpu_per_call_ms") is not None] or [0]) \
        if runs else None
    sp = f"{t['speedup']:.2f}x [{_ms(t['speedup_low'])}–{_ms(t['speedup_high'])}]" if t.get("speedup") else "?"
    cells = [name, flags, f"{_ms(t['compiled_ms'])} [{_ms(t['low_ms'])}–{_ms(t['high_ms'])}]", str(t.get("rounds") or "?"),
             benches, spread, verdict, f"{_ms(t['cpu_per_call_ms'])} / {_ms(cpu_db or None)}", _ms(t["gpu_kernel_ms"]),
             t.get("bound") or "", sp]
    return "| " + " | ".join(cells) + " |"


def table(out: Path) -> str:
    """Return the markdown table of every collected model in OUT, with a line on the machine."""
    records = [json.loads(p.read_text()) for p in sorted(out.glob("*.json")) if ".bench" not in p.name]
    records = [r for r in records if "name" in r and "do_bench" in r]
    first = next((r for r in records if r.get("versions")), {})
    hw, ver = first.get("hardware") or {}, first.get("versions") or {}
    bench = next((b.get("bench") for r in records for b in r["do_bench"] if b.get("bench")), "?")
    agreed = sum(1 for r in records if (r.get("agreement") or {}).get("agree"))
    lines = [f"Made {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by scripts/timing-check.sh on {hw.get('gpu') or hw.get('cpu') or '?'}"
             f" ({hw.get('cpu_count') or '?'} CPUs), torch {ver.get('torch', '?')}, triton {ver.get('triton') or '-'}; "
             f"reference: {bench}. {agreed} of {len(records)} agree.", "", HEADER,
             "|" + " --- |" * (HEADER.count(" | ") + 1)]
    lines += [row(r) for r in records]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) == 5 and argv[0] == "collect":
        record = collect(Path(argv[1]), argv[2], argv[3], argv[4])
        print(row(record))
        return 0
    if len(argv) == 2 and argv[0] == "table":
        sys.stdout.write(table(Path(argv[1])))
        return 0
    print("usage: timing_table.py collect OUT NAME MODEL FLAGS | table OUT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
