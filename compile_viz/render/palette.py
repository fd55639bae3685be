"""Colours and labels for kernel kinds: the one place that says what a kind looks like."""

from __future__ import annotations

NO_KERNEL = "none"

# kind -> (fill colour, label); kinds not listed fall back to "other".
KINDS: dict[str, tuple[str, str]] = {
    "pointwise": ("#a8dadc", "pointwise"),
    "reduction": ("#ffd166", "reduction"),
    "persistent_reduction": ("#f4a261", "persistent reduction"),
    "template": ("#cdb4db", "template"),
    "extern": ("#ced4da", "extern call"),
    "foreach": ("#b7e4c7", "foreach"),
    "split_scan": ("#ffc8dd", "scan"),
    "cpp": ("#90be6d", "C++ kernel"),
    "other": ("#e9ecef", "other"),
    NO_KERNEL: ("#ffffff", "no kernel"),
}
SELECTED = "#d62828"  # outline of the selection, in the graph and in the tables


def kind_color(kind: str) -> str:
    """Return the fill colour of a kernel kind."""
    return KINDS.get(kind, KINDS["other"])[0]


def kind_label(kind: str) -> str:
    """Return the human name of a kernel kind."""
    return KINDS.get(kind, (None, kind.replace("_", " ") or "other"))[1]


def legend_html(kinds: list[str] | None = None) -> str:
    """Return a one-line HTML legend of the kinds given (all by default)."""
    chips = []
    for kind in kinds or list(KINDS):
        color, label = KINDS.get(kind, KINDS["other"])
        chips.append(
            f'<span style="display:inline-block;margin:0 8px 2px 0;white-space:nowrap">'
            f'<span style="display:inline-block;width:11px;height:11px;border:1px solid #666;'
            f'background:{color};vertical-align:middle;margin-right:4px"></span>{label}</span>'
        )
    return '<div style="font-size:12px;line-height:1.6">' + "".join(chips) + "</div>"
