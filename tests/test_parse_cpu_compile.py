"""A real CPU compile (torch on this machine, C++ kernels) parses like the GPU corpus."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from compile_viz.artifacts import parse_path
from tests.test_parse_corpus import expected_counts, parsed_counts, raw_files_of

MODEL = textwrap.dedent(
    """
    import torch

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(64, 32)
            self.norm = torch.nn.LayerNorm(32)

        def forward(self, x):
            y = self.norm(self.lin(x))
            return torch.softmax(y, dim=-1) * 0.5 + torch.relu(y)

    torch.manual_seed(0)
    model = Block()
    x = torch.randn(8, 64, requires_grad=True)
    out = torch.compile(model)(x)
    out.sum().backward()
    """
)


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    pytest.importorskip("torch")
    work = tmp_path_factory.mktemp("cpu_compile")
    (work / "model.py").write_text(MODEL)
    env = dict(
        os.environ,
        TORCH_COMPILE_DEBUG="1",
        TORCH_COMPILE_DEBUG_DIR=str(work),
        TORCHINDUCTOR_FORCE_DISABLE_CACHES="1",
        TORCHINDUCTOR_CACHE_DIR=str(work / "cache"),
        INDUCTOR_PROVENANCE="1",
        CUDA_VISIBLE_DEVICES="",
    )
    proc = subprocess.run([sys.executable, "model.py"], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return work / "torch_compile_debug"


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
        assert g.fx_graph.node("output") is not None
        assert any(n.source and n.source.file.endswith("model.py") for n in g.fx_graph.nodes)
