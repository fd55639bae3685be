"""The run store without torch: commit, list, search, export/import, zip safety, bundled runs."""

from __future__ import annotations

import json
import sqlite3
import stat
import zipfile
from pathlib import Path

import pytest

from compile_viz.store import SCHEMA_VERSION, RunStore, StoreError, bundled_runs, default_home, open_bundled


def fake_run(store: RunStore, model: str = "tiny_linear_relu", status: str = "complete", created: str = "2026-01-01"):
    run_id, tmp = store.begin(model)
    graph = tmp / "debug/torch_compile_debug/run_x-pid_1/torchinductor/model__0_inference_0.0"
    graph.mkdir(parents=True)
    (graph / "output_code.py").write_text("# kernel\n" * 50)
    (tmp / "trace/trace.log").write_text("{}\n")
    (tmp / "logs/stderr.txt").write_text("warning\n")
    meta = {"model": model, "status": status, "created": created, "reason": None if status == "complete" else "boom",
            "resolved": {"device": "cpu", "dtype": "fp32", "mode": "default", "train": False},
            "graphs": [str(graph.relative_to(tmp / "debug"))], "timings": {"compile_s": 1.5}}
    return store.commit(run_id, tmp, meta)


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_home_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "h"))
    store = RunStore()
    assert default_home() == tmp_path / "h"
    assert store.runs_dir == tmp_path / "h/runs" and store.index_path == tmp_path / "h/index.sqlite"
    assert store.index_path.is_file()


def test_list_newest_first_search_and_status(tmp_path):
    store = RunStore(tmp_path)
    old = fake_run(store, "mlp_gelu", created="2026-01-01T00:00:00")
    new = fake_run(store, "graph_break_item", status="failed", created="2026-02-01T00:00:00")
    assert [r.id for r in store.list_runs()] == [new.id, old.id]
    assert [r.id for r in store.list_runs("mlp")] == [old.id]
    assert [r.id for r in store.list_runs(status="failed")] == [new.id]
    assert [r.id for r in store.list_runs("boom")] == [new.id]
    assert store.get(old.id).meta["model"] == "mlp_gelu"
    assert store.get(old.id[-6:]).id == old.id  # unique suffix
    with pytest.raises(StoreError, match="no run"):
        store.get("does-not-exist")


def test_search_finds_runs_whose_meta_lacks_device_mode_dtype(tmp_path):
    store = RunStore(tmp_path)
    run_id, tmp = store.begin("bare_model")
    bare = store.commit(run_id, tmp, {"model": "bare_model", "status": "complete", "created": "2026-03-01"})
    full = fake_run(store, "mlp_gelu", created="2026-01-01T00:00:00")
    assert [r.id for r in store.list_runs("bare")] == [bare.id]  # no device, mode, dtype or reason
    assert [r.id for r in store.list_runs(bare.id[-6:])] == [bare.id]
    assert [r.id for r in store.list_runs("cpu")] == [full.id]


def test_index_follows_folders(tmp_path):
    store = RunStore(tmp_path)
    run = fake_run(store)
    store.index_path.unlink()
    assert [r.id for r in RunStore(tmp_path).list_runs()] == [run.id]  # rebuilt from folders
    store.delete(run.id)
    assert store.list_runs() == []


def test_an_index_of_another_schema_version_is_rebuilt_from_the_folders(tmp_path):
    store = RunStore(tmp_path)
    runs = [fake_run(store, "mlp_gelu", created="2026-01-01"), fake_run(store, "pointwise_chain", created="2026-02-01")]
    with sqlite3.connect(store.index_path) as db:  # an index laid out by an older release, one run missing
        db.execute("DROP TABLE runs")
        db.execute("CREATE TABLE runs (id TEXT PRIMARY KEY, model TEXT)")
        db.execute("INSERT INTO runs VALUES (?, ?)", (runs[0].id, "stale"))
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    again = RunStore(tmp_path)
    with sqlite3.connect(again.index_path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("SELECT COUNT(*), COUNT(device) FROM runs").fetchone() == (2, 2)  # rebuilt, not patched
    db.close()
    assert [r.id for r in again.list_runs()] == [runs[1].id, runs[0].id]
    assert [r.id for r in again.list_runs("mlp")] == [runs[0].id]


def test_an_index_of_this_version_is_kept(tmp_path):
    store = RunStore(tmp_path)
    run = fake_run(store)
    with sqlite3.connect(store.index_path) as db:
        db.execute("UPDATE runs SET model = 'marked' WHERE id = ?", (run.id,))
    db.close()
    assert [r.id for r in RunStore(tmp_path).list_runs("marked")] == [run.id]


def test_temporary_folders_are_not_runs(tmp_path):
    store = RunStore(tmp_path)
    _, tmp = store.begin("half_written")
    (tmp / "meta.json").write_text("{}")
    assert store.list_runs() == []


def test_export_import_roundtrip(tmp_path):
    src = RunStore(tmp_path / "a")
    run = fake_run(src)
    zip_path = src.export_run(run.id, tmp_path / "out/run.zip")
    dst = RunStore(tmp_path / "b")
    imported = dst.import_zip(zip_path)
    assert imported.id == run.id and imported.meta == run.meta
    assert files_of(imported.path) == files_of(run.path)
    again = dst.import_zip(zip_path)  # same id already there: imported under a new id
    assert again.id != run.id and again.meta == {**run.meta, "id": again.id}
    assert {k: v for k, v in files_of(again.path).items() if k != "meta.json"} == \
        {k: v for k, v in files_of(run.path).items() if k != "meta.json"}


def _zip_with(path: Path, name: str, data: bytes = b"x", mode: int | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("meta.json", json.dumps({"model": "m", "status": "complete"}))
        info = zipfile.ZipInfo(name)
        if mode is not None:
            info.external_attr = mode << 16
        zf.writestr(info, data)
    return path


@pytest.mark.parametrize("name, why", [
    ("../evil.py", "'..'"),
    ("debug/../../evil.py", "'..'"),
    ("/etc/evil", "absolute path"),
    ("C:/evil", "absolute path"),
])
def test_unsafe_paths_refused(tmp_path, name, why):
    store = RunStore(tmp_path / "home")
    with pytest.raises(StoreError, match=why) as e:
        store.import_zip(_zip_with(tmp_path / "bad.zip", name))
    assert "\n" not in str(e.value)
    assert store.list_runs() == [] and not list(store.runs_dir.iterdir())
    assert not (tmp_path / "evil.py").exists()


def test_symlink_refused(tmp_path):
    bad = _zip_with(tmp_path / "link.zip", "debug/link", b"/etc/passwd", stat.S_IFLNK | 0o777)
    with pytest.raises(StoreError, match="symbolic link"):
        RunStore(tmp_path / "home").import_zip(bad)


def test_size_cap(tmp_path):
    big = _zip_with(tmp_path / "big.zip", "debug/big.txt", b"0" * 100_000)
    with pytest.raises(StoreError, match="cap"):
        RunStore(tmp_path / "home").import_zip(big, max_bytes=50_000)


def test_not_a_run_zip(tmp_path):
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("hello.txt", "hi")
    with pytest.raises(StoreError, match="no meta.json"):
        RunStore(tmp_path / "home").import_zip(path)
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(StoreError, match="cannot open"):
        RunStore(tmp_path / "home").import_zip(tmp_path / "junk.zip")


def test_bundled_runs_list_and_open(tmp_path, monkeypatch):
    src = RunStore(tmp_path / "src")
    run = fake_run(src, "matmul_softmax")
    bundled = tmp_path / "sample_runs"
    src.export_run(run.id, bundled / "matmul_softmax.zip")
    _zip_with(bundled / "evil.zip", "../x")  # unsafe zips are left out of the list
    monkeypatch.setenv("COMPILE_VIZ_SAMPLE_RUNS", str(bundled))
    listed = bundled_runs()
    assert [b.name for b in listed] == ["matmul_softmax"] and listed[0].meta["model"] == "matmul_softmax"
    store = RunStore(tmp_path / "home")
    opened = open_bundled("matmul_softmax", store)
    assert opened.bundled and opened.ok and files_of(opened.path) == files_of(run.path)
    assert open_bundled("matmul_softmax", store).path == opened.path  # unpacked once
    assert store.list_runs() == []  # bundled runs stay out of the user's runs
    with pytest.raises(StoreError, match="no bundled run"):
        open_bundled("nope", store)
