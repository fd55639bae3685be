"""`compile-viz import` of TORCH_TRACE logs written by other people (tlparse's own test inputs, a
public deep-dive capture): one log, a folder of per-rank logs, gzip, a zip of a folder, a failed
compile, a corrupted line. The stored run parses like the logs themselves and is listed by `runs`."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from compile_viz.artifacts import parse_path
from compile_viz.cli import main
from compile_viz.store import RunStore
from compile_viz.ui.runs import first_page
from tests.conftest import CORPUS, corpus_required

TRACES = CORPUS / "traces" / "tlparse-tests"
RANKS = TRACES / "multi_rank_logs"
DEEP_DIVE = CORPUS / "public" / "noisystreet-deep-dive-torch-compile"


@pytest.fixture(autouse=True)
def _corpus():
    corpus_required()


def imported(tmp_path: Path, source: Path, capsys) -> tuple[Path, str]:
    """Import `source` into the store at tmp_path/home; return (run folder, the stderr line)."""
    assert main(["import", str(source), "--home", str(tmp_path / "home")]) == 0
    out, err = capsys.readouterr()
    return Path(out.strip()), err.strip()


def graph_names(path: Path) -> list[tuple[str, int, int]]:
    """(graph id, kernels, launches) of every graph the parse of `path` gives."""
    return [(g.id, len(g.output_code.kernels) if g.output_code else 0, len(g.output_code.launches) if g.output_code else 0)
            for g in parse_path(str(path)).graphs]


def test_one_log_becomes_a_listed_run_that_parses_like_the_log(tmp_path, capsys):
    run, said = imported(tmp_path, TRACES / "simple.log", capsys)
    assert run.parent == tmp_path / "home" / "runs" and said.startswith(f"imported as {run.name}: ")
    assert "1 compile id (1 ok), 1 graph" in said and "\n" not in said
    assert sorted(p.name for p in (run / "trace").iterdir()) == ["simple.log"]
    assert (run / "trace" / "simple.log").read_bytes() == (TRACES / "simple.log").read_bytes()
    meta = json.loads((run / "meta.json").read_text())
    assert meta["model"] == "simple" and meta["status"] == "complete"
    assert meta["source"]["kind"] == "torch_trace" and meta["source"]["path"] == str(TRACES / "simple.log")
    assert meta["trace"]["compile_ids"] == 1 and meta["trace"]["graphs"] == 1
    assert graph_names(run) == graph_names(TRACES / "simple.log") and graph_names(run)[0][2] > 0
    assert main(["runs", "--home", str(tmp_path / "home")]) == 0
    listing = capsys.readouterr().out
    assert run.name in listing and "complete" in listing


def test_the_same_logs_again_are_the_run_already_stored(tmp_path, capsys):
    first, _ = imported(tmp_path, TRACES / "simple.log", capsys)
    again, said = imported(tmp_path, TRACES / "simple.log", capsys)
    assert again == first and said.startswith(f"already in the store as {first.name}")
    assert len(RunStore(tmp_path / "home").list_runs()) == 1


def test_a_folder_of_per_rank_logs_keeps_every_rank(tmp_path, capsys):
    run, said = imported(tmp_path, RANKS, capsys)
    assert "4 logs (ranks 0, 1, 2, 3)" in said and "24 compile ids (22 ok, 2 failed)" in said and "22 graphs" in said
    assert sorted(p.name for p in (run / "trace").iterdir()) == sorted(p.name for p in RANKS.iterdir())
    parsed = parse_path(str(run))
    assert [log.rank for log in parsed.logs] == [0, 1, 2, 3]
    assert graph_names(run) == graph_names(RANKS)
    assert json.loads((run / "meta.json").read_text())["trace"]["statuses"] == {"ok": 22, "failed": 2}


def test_gzip_logs_and_a_zip_of_the_folder_give_the_same_run(tmp_path, capsys):
    gz = tmp_path / "gz"
    gz.mkdir()
    for log in RANKS.iterdir():  # the real logs, compressed as a job's log shipper would
        (gz / f"{log.name}.gz").write_bytes(gzip.compress(log.read_bytes()))
    run, said = imported(tmp_path, gz, capsys)
    assert "4 logs (ranks 0, 1, 2, 3)" in said
    assert sorted(p.name for p in (run / "trace").iterdir()) == sorted(p.name for p in RANKS.iterdir())
    assert graph_names(run) == graph_names(RANKS)

    zipped = tmp_path / "ranks.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as zf:
        for log in sorted(RANKS.iterdir()):
            zf.write(log, f"multi_rank_logs/{log.name}")
    run2, said = imported(tmp_path, zipped, capsys)
    assert run2 != run and "4 logs" in said  # not the same files: names differ (.gz)
    assert json.loads((run2 / "meta.json").read_text())["model"] == "ranks"
    assert graph_names(run2) == graph_names(RANKS)

    one = tmp_path / "simple.log.gz"
    one.write_bytes(gzip.compress((TRACES / "simple.log").read_bytes()))
    run3, said = imported(tmp_path, one, capsys)
    assert [p.name for p in (run3 / "trace").iterdir()] == ["simple.log"]
    assert graph_names(run3) == graph_names(TRACES / "simple.log")


def test_a_failed_compile_is_a_run_that_opens_on_the_compiles_page(tmp_path, capsys):
    run, said = imported(tmp_path, TRACES / "comp_failure.log", capsys)
    assert "1 compile id (1 failed), 0 graphs" in said
    parsed = parse_path(str(run))
    assert parsed.graphs == () and parsed.logs[0].compiles[0].status == "failed"
    assert first_page(run.name, RunStore(tmp_path / "home")) == "compiles"
    simple, _ = imported(tmp_path, TRACES / "simple.log", capsys)
    assert first_page(simple.name, RunStore(tmp_path / "home")) == "viewer"


def test_a_corrupted_line_is_a_warning_not_a_refusal(tmp_path, capsys):
    run, said = imported(tmp_path, TRACES / "simple_corrupted_json.log", capsys)
    assert "2 warnings (`compile-viz parse` lists them)" in said
    assert len(parse_path(str(run)).warnings) == len(parse_path(str(TRACES / "simple_corrupted_json.log")).warnings) == 2
    assert graph_names(run) == graph_names(TRACES / "simple.log")


def test_a_log_cut_short_still_imports(tmp_path, capsys):
    data = (TRACES / "simple.log").read_bytes()
    cut = tmp_path / "cut.log"
    cut.write_bytes(data[: len(data) * 2 // 3])
    run, said = imported(tmp_path, cut, capsys)
    assert "1 compile id" in said and (run / "trace" / "cut.log").read_bytes() == cut.read_bytes()


def test_a_debug_folder_with_its_trace_comes_whole(tmp_path, capsys):
    run, said = imported(tmp_path, DEEP_DIVE, capsys)
    assert "1 compile id (1 ok), 1 graph" in said and "debug folder with 1 graphs" in said
    assert [p.name for p in (run / "trace").iterdir()] == ["dedicated_log_torch_trace_9nr9u9z0.log"]
    assert not list((run / "debug").rglob("dedicated_log_*"))  # the log is in trace/, not twice
    (g,) = parse_path(str(run)).graphs
    assert g.folder.name == "model__0_inference_0.0" and g.pre_fusion is not None  # the debug folder's graph
    assert g.kernel_stacks is not None  # joined with the trace beside it, as for a captured run
    assert graph_names(run) == graph_names(DEEP_DIVE)


def test_what_is_not_a_trace_is_refused_in_one_line(tmp_path, capsys):
    home = str(tmp_path / "home")
    assert main(["import", str(TRACES / "LICENSE"), "--home", home]) == 2
    err = capsys.readouterr().err.strip()
    assert "holds no TORCH_TRACE log and no Inductor debug folder: give a log written with TORCH_TRACE=DIR" in err
    assert "\n" not in err
    assert main(["import", str(tmp_path / "nope.log"), "--home", home]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.write(TRACES / "simple.log", "../simple.log")
    assert main(["import", str(bad), "--home", home]) == 2
    err = capsys.readouterr().err.strip()
    assert "unsafe entry" in err and "\n" not in err
    assert RunStore(home).list_runs() == []


def test_whole_process_import_then_parse(tmp_path):
    """As a user runs it: `compile-viz import` then `compile-viz parse` of the stored run."""
    home = tmp_path / "home"
    shutil.copytree(RANKS, tmp_path / "job")
    cmd = [sys.executable, "-m", "compile_viz"]
    proc = subprocess.run([*cmd, "import", str(tmp_path / "job"), "--home", str(home)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    run = Path(proc.stdout.strip())
    proc = subprocess.run([*cmd, "parse", str(run), "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["graphs"]) == 22
