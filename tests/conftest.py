"""Shared fixtures: where the real captures are, and skips that say why."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
GPU_CORPUS = CORPUS / "gpu-h100-torch2.11"
SAMPLE_RUNS = ROOT / "sample_runs"
ARTIFACT_NAMES = (
    "fx_graph_readable.py",
    "fx_graph_transformed.py",
    "ir_pre_fusion.txt",
    "ir_post_fusion.txt",
    "output_code.py",
    "inductor_provenance_tracking_node_mappings.json",
)


def corpus_required():
    if not CORPUS.is_dir():
        if os.environ.get("COMPILE_VIZ_CI"):
            pytest.fail(f"CI must have the corpus at {CORPUS}")
        pytest.skip(f"../shared/corpus is absent ({CORPUS}): corpus tests need it")


def corpus_sets() -> list[Path]:
    """Every capture in ../shared/corpus: a folder holding a torch_compile_debug tree (or graph folders)."""
    if not CORPUS.is_dir():
        return []
    sets = set()
    for path in glob.glob(str(CORPUS / "**" / "output_code.py"), recursive=True):
        p = Path(path)
        # the case folder is the one above torch_compile_debug, else the graph folder's grandparent
        parts = p.parts
        if "torch_compile_debug" in parts:
            sets.add(Path(*parts[: parts.index("torch_compile_debug")]))
        else:
            sets.add(p.parent.parent)
    return sorted(sets)


def corpus_graph_dirs() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted({Path(p).parent for p in glob.glob(str(CORPUS / "**" / "output_code.py"), recursive=True)})


def artifact_files(name: str) -> list[Path]:
    return sorted(Path(p) for p in glob.glob(str(CORPUS / "**" / name), recursive=True))


@pytest.fixture
def corpus():
    corpus_required()
    return CORPUS
