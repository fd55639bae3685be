"""The profile's figures and words: pure functions of linking.time_report's values."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # plotly only where a figure is drawn: `compile-viz profile` prints summary_line alone
    import plotly.graph_objects as go


def summary_line(s: dict) -> str:
    """One line: steps, device time, the share in compiled graphs, what was joined; then, when the
    window spanned a compile, what was set apart (compile_line)."""
    if not s:
        return "No profile."
    share = f", {s['compiled_share']:.0%} of it inside compiled graphs" if s.get("compiled_share") is not None else ""
    line = (f"{s.get('steps', 0)} profiled steps, {s.get('total_us', 0) / 1e3:.2f} ms of {s.get('device')} time{share}; "
            f"{s.get('launches_timed', 0)} of {s.get('launches', 0)} launches timed "
            f"({s.get('joined_us', 0) / 1e3:.2f} ms), {s.get('unjoined_regions', 0)} calls of compiled graphs not joined")
    extra = compile_line(s)
    return f"{line}. {extra}" if extra else line


def compile_line(s: dict) -> str:
    """"step 7 compiled: 3.2 s on the host, 175 ms of autotune kernels (10,506), not counted", or ""."""
    c = s.get("compile") if s else None
    if not c:
        return ""
    steps = c.get("steps") or []
    who = (f"step {steps[0]}" if len(steps) == 1 else f"steps {', '.join(map(str, steps))}") if steps else "the window"
    kernels = (f", {_duration(c['device_us'])} of autotune kernels ({c['kernels']:,})" if c.get("kernels") else "")
    return f"{who} compiled: {_duration(c.get('host_us', 0), 1e5)} on the host{kernels}, not counted"


def _duration(us: float, seconds_from: float = 1e6) -> str:
    """Microseconds as "190 ms", or as "30.9 s" from `seconds_from` on."""
    return f"{us / 1e6:.3g} s" if us >= seconds_from else f"{us / 1e3:.3g} ms"


def share_figure(items: list[tuple[str, float]], title: str) -> go.Figure:
    """Horizontal bars, the longest on top: (name, microseconds) -> milliseconds."""
    import plotly.graph_objects as go

    items = list(reversed(items))
    fig = go.Figure(go.Bar(x=[us / 1e3 for _, us in items], y=[_short(name) for name, _ in items], orientation="h",
                           hovertext=[name for name, _ in items], hoverinfo="text+x"))
    fig.update_layout(title=title, xaxis_title="ms", height=max(240, 22 * len(items) + 80),
                      margin={"l": 10, "r": 10, "t": 40, "b": 30})
    return fig


def _short(name: str) -> str:
    """A path's last two parts: `models/gpt2/modeling_gpt2.py:697` -> `gpt2/modeling_gpt2.py:697`."""
    parts = name.split("/")
    return "/".join(parts[-2:]) if len(parts) > 2 else name


def line_times_text(by_line: list[tuple[str, float]], file: str, most: int = 6) -> str:
    """The measured time of `file`'s lines, the longest first: "line 119: 2.92 ms · line 120: 0.33 ms";
    "" when none of its lines has any. `by_line` is TimeReport.by_line() ("path:line", us)."""
    mine = [(key.rsplit(":", 1)[1], us) for key, us in by_line if key.rsplit(":", 1)[0] == file]
    return " · ".join(f"line {line}: {us / 1e3:.3g} ms" for line, us in mine[:most])
