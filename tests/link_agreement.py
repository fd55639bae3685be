"""How far our inferred links agree with PyTorch's own, on one capture: its provenance JSON and the
trace's per-launch user stacks hidden, as in a debug folder of torch before 2.8 or one captured
without TORCH_TRACE.

- Node sets: a launch agrees when its post-grad nodes, inferred, are the set the provenance JSON
  gives it (launches the JSON lists; torch 2.11 lists forward and inference graphs only).
- Source lines: a launch agrees when every innermost frame of the trace's stacks for it is among
  its inferred source lines (as tests/test_trace_stacks.py counts them).

`python -m tests.link_agreement RUN.zip ...` prints the figures of captures kept out of the
fixtures (too big), for the report of tests/test_linking.py.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace

from compile_viz.artifacts import parse_path
from compile_viz.linking import build_index


@dataclass
class Agreement:
    nodes: int = 0  # launches whose inferred nodes are the JSON's
    nodes_total: int = 0
    lines: int = 0  # launches whose inferred source lines hold every line of the trace's stacks
    lines_total: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, other: Agreement) -> None:
        self.nodes += other.nodes
        self.nodes_total += other.nodes_total
        self.lines += other.lines
        self.lines_total += other.lines_total

    def figures(self) -> str:
        return (f"launches {self.nodes}/{self.nodes_total} ({_pct(self.nodes, self.nodes_total)}), "
                f"source lines {self.lines}/{self.lines_total} ({_pct(self.lines, self.lines_total)})")


def agreement(source) -> Agreement:
    """The agreement of one capture (a folder or a zip), with a line per launch that disagrees."""
    out = Agreement()
    for g in parse_path(str(source)).graphs:
        guess = build_index(replace(g, provenance=None, kernel_stacks=None))
        if g.provenance is not None and g.provenance.code_to_post:
            for truth, ours in zip(build_index(g).launches, guess.launches, strict=True):
                if truth.evidence != "provenance":
                    continue
                out.nodes_total += 1
                missing = sorted(set(truth.post_grad_nodes) - set(ours.post_grad_nodes))
                extra = sorted(set(ours.post_grad_nodes) - set(truth.post_grad_nodes))
                if not missing and not extra:
                    out.nodes += 1
                else:
                    out.misses.append(f"  {g.id} launch {ours.index} {ours.kernel[:80]} ({ours.evidence}): nodes "
                                      f"missing {_names(missing)} extra {_names(extra)}")
        if g.kernel_stacks is None:
            continue
        for ours in guess.launches:
            traced = g.kernel_stacks.of_launch(ours.index, ours.kernel,
                                               g.output_code.launches[ours.index].comments.provenance_handle)
            if traced is None or not traced.innermost:
                continue
            out.lines_total += 1
            missing = sorted(set(traced.innermost) - set(ours.source_lines))
            if not missing:
                out.lines += 1
            else:
                out.misses.append(f"  {g.id} launch {ours.index} {ours.kernel[:80]} ({ours.evidence}): the trace's "
                                  f"{_where(missing)} not among ours {_where(ours.source_lines)}")
    return out


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:.1f}%" if total else "-"


def _names(names: list[str], limit: int = 12) -> str:
    return "[" + ", ".join(names[:limit]) + (f", … +{len(names) - limit}" if len(names) > limit else "") + "]"


def _where(lines, limit: int = 8) -> str:
    shown = [f"{f.rsplit('/', 1)[-1]}:{n}" for f, n in lines]
    return ", ".join(shown[:limit]) + (f", … +{len(shown) - limit}" if len(shown) > limit else "")


if __name__ == "__main__":
    for path in sys.argv[1:]:
        a = agreement(path)
        print(f"{path}: {a.figures()}  # (nodes, nodes_total, lines, lines_total) = "
              f"{(a.nodes, a.nodes_total, a.lines, a.lines_total)}")
        print("\n".join(a.misses))
