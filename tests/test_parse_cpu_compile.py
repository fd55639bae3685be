"""A real CPU compile (torch on this machine, C++ kernels) parses like the GPU corpus."""

from __future__ import annotations

import pytest

from compile_viz.artifacts import parse_path
from tests.test_parse_corpus import expected_counts, parsed_counts, raw_files_of


@pytest.mark.slow
def test_cpu_compile_parses_like_the_corpus(cpu_run):
    parsed = parse_path(str(cpu_run))
    kinds = sorted(g.kind for g in parsed.graphs)
    assert kinds == ["backward", "forward"]
    raw = raw_files_of(cpu_run)
    for g in parsed.graphs:
        assert not g.warnings, [str(w) for w in g.warnings]
        assert parsed_counts(g) == expected_counts(raw[g.folder.name])
        oc = g.output_code
        assert oc.kernels and all(k.backend == "cpp" and k.kind == "cpp" for k in oc.kernels)
        assert any(not la.is_extern for la in oc.launches)
        assert any(la.kernel == "extern_kernels.addmm" for la in oc.launches) or g.kind == "backward"
        assert g.aot_graph.node("output") is not None
        assert any(n.source and n.source.file.endswith("model.py") for n in g.aot_graph.nodes)
