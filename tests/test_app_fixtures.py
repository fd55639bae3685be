"""Helpers shared by the dashboard tests: run zips built at test time from ../shared/corpus.

Never hand-written artifacts: the debug trees are the corpus's real captures, packed with the
store's own export into the layout of sample_runs/<name>.zip.
"""

from __future__ import annotations

import datetime as _dt
import shutil
from pathlib import Path

import pytest

from compile_viz.store import RunStore

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "gpu-h100-torch2.11"
BUNDLED_CASES = ("mlp_train_step", "graph_break_item", "pointwise_chain")


def need_corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"needs the GPU corpus at {CORPUS} (../shared is absent)")
    return CORPUS


def store_run(store: RunStore, case: str, **meta) -> str:
    """Return the id of a store run holding corpus `case`'s debug tree (and its source file)."""
    corpus = need_corpus()
    run_id, tmp = store.begin(case)
    shutil.copytree(corpus / case / "torch_compile_debug", tmp / "debug" / "torch_compile_debug")
    shutil.copy(corpus / "capture_cases.py", tmp / "capture_cases.py")
    base = {"model": case, "title": case.replace("_", " "), "status": "complete", "reason": None,
            "created": _dt.datetime.now(_dt.UTC).isoformat(), "options": {"device": "cuda", "mode": "default", "dtype": "fp32"},
            "versions": {"torch": "2.11.0+cu130", "triton": "3.6.0"}, "hardware": {"gpu": "NVIDIA H100", "device": "cuda"}}
    return store.commit(run_id, tmp, {**base, **meta}).id


def failed_run(store: RunStore) -> str:
    """Return the id of a stored failed run (as the capture stores one: reason and stderr tail)."""
    run_id, tmp = store.begin("broken")
    meta = {"model": "broken", "status": "failed", "options": {"device": "cpu", "mode": "default", "dtype": "fp32"}, "created": _dt.datetime.now(_dt.UTC).isoformat(),
            "reason": "model raised RuntimeError while compiling: shapes do not match",
            "stderr_tail": "Traceback (most recent call last):\n  ...\nRuntimeError: shapes do not match\n"}
    return store.commit(run_id, tmp, meta).id


def make_bundled(folder: Path, cases=BUNDLED_CASES) -> Path:
    """Write sample_runs-style zips of corpus cases into `folder`; return it."""
    store = RunStore(folder / "_build")
    folder.mkdir(parents=True, exist_ok=True)
    for case in cases:
        store.export_run(store_run(store, case), folder / f"{case}.zip")
    shutil.rmtree(folder / "_build")
    return folder


def run_app(script: str | Path, **params):
    """Run a page under AppTest with these query parameters: `script` is app.py (a path) or the
    source of a one-page app (a string)."""
    from streamlit.testing.v1 import AppTest

    at = (AppTest.from_file(str(script), default_timeout=60) if isinstance(script, Path)
          else AppTest.from_string(script, default_timeout=60))
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def no_errors(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def fresh_store(home: Path, sample_runs: Path, monkeypatch):
    """Generator for a page-test fixture: an empty store at `home`, `sample_runs` as the bundled runs,
    no warm capture child, Streamlit's caches cleared before and after (they outlive a script run)."""
    import streamlit as st

    monkeypatch.setenv("COMPILE_VIZ_HOME", str(home))
    monkeypatch.setenv("COMPILE_VIZ_SAMPLE_RUNS", str(sample_runs))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")  # no warm capture child behind page tests
    st.cache_resource.clear()
    st.cache_data.clear()
    yield RunStore(home)
    st.cache_resource.clear()
    st.cache_data.clear()
