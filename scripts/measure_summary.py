"""Write the markdown table of scripts/measure-third-party.sh from its OUT folder (stdlib only).

Usage: python3 scripts/measure_summary.py OUT "name|spec|flags" ...   (prints the table)
Each run's meta.json and measure.json are read through compile_viz.measurements.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compile_viz.measurements import read_run  # noqa: E402

HEADER = ("| run | model, flags | verdict | max abs error vs reference (eager's own) | worst | speedup "
          "| eager → compiled ms | kernels per call eager → compiled | how it was checked |")


def _num(v, fmt: str = "{:.3g}") -> str:
    return "?" if v is None else fmt.format(v)


def _failed_reason(log: Path) -> str:
    lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
    return next((x.split("capture failed:", 1)[1].strip() for x in reversed(lines) if "capture failed:" in x),
                lines[-1] if lines else "no log")


def row(out: Path, name: str, spec: str, flags: str) -> tuple[str, dict]:
    """Return one table row and the run's meta.json (empty when the capture failed)."""
    marker = out / f"{name}.run"
    if not marker.is_file():
        reason = _failed_reason(out / f"{name}.log").replace("|", "/")[:160]
        return f"| {name} | `{spec}` {flags} | capture failed: {reason} | | | | | | |", {}
    run = Path(marker.read_text().strip())
    meta = json.loads((run / "meta.json").read_text())
    s, full = read_run(run, meta)
    if s is None:
        return f"| {name} | `{spec}` {flags} | not measured | | | | | | |", meta
    verdict = s.correctness or {True: "ok", False: "wrong"}.get(s.ok, "not compared")
    if s.correctness_note and s.correctness != "ok":
        verdict += f": {s.correctness_note}"
    err = _num(s.max_abs) + (f" ({_num(s.eager_max_abs)})" if s.eager_max_abs is not None else " (vs eager)")
    worst = full.correctness.worst if full and full.correctness else None
    cells = [name, f"`{spec}` {flags}", verdict.replace("|", "/"), err, f"`{worst}`" if worst else "",
             _num(s.speedup, "{:.2f}x"), f"{_num(s.eager_median_ms)} → {_num(s.compiled_median_ms)}",
             f"{_num(s.eager_kernels_per_call, '{:g}')} → {_num(s.compiled_kernels_per_call, '{:g}')}",
             (s.correctness_method or "").replace("|", "/")]
    return "| " + " | ".join(cells) + " |", meta


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    rows, metas = [], []
    for spec_line in argv[1:]:
        name, spec, flags = spec_line.split("|")
        if not (out / f"{name}.log").is_file():  # not run (ONLY= left it out)
            continue
        text, meta = row(out, name, spec, flags)
        rows.append(text)
        metas.append(meta)
    meta = next((m for m in metas if m), {})
    hw, ver = meta.get("hardware", {}), meta.get("versions", {})
    print(f"# Third-party models: eager vs compiled ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)\n")
    print(f"Device: {hw.get('gpu') or hw.get('cpu') or '?'}; torch {ver.get('torch', '?')}, "
          f"triton {ver.get('triton') or '-'}, CUDA {ver.get('cuda') or '-'}. "
          "Made by scripts/measure-third-party.sh; each run's folder is in home/runs/.\n")
    print(HEADER)
    print("|" + " --- |" * HEADER.count(" | ") + " --- |")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
