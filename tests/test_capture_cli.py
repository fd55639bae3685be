"""compile-viz capture | runs | export | import: exit codes, one-line errors, last line = run folder."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from compile_viz.cli import main


def test_registered_in_the_main_cli():
    from compile_viz.cli import _build_parser

    parser = _build_parser()
    for argv in (["capture", "x"], ["capture-all", "--out", "d"], ["runs"], ["export", "r", "o.zip"], ["import", "f.zip"]):
        assert callable(parser.parse_args(argv).func)


def test_unknown_model_is_one_line_and_stores_nothing(tmp_path, capsys):
    assert main(["capture", "no_such_model", "--home", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("compile-viz: unknown model 'no_such_model'") and "\n" not in err
    assert not list((tmp_path / "runs").iterdir())


def test_user_file_refused_when_disabled(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COMPILE_VIZ_ALLOW_USER_CODE", "0")
    model = tmp_path / "m.py"
    model.write_text("SPEC = None\n")
    assert main(["capture", f"{model}:SPEC", "--home", str(tmp_path)]) == 2
    assert "COMPILE_VIZ_ALLOW_USER_CODE=0" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["capture", "mlp_gelu", "--device", "tpu"], "device 'tpu'"),
    (["capture", "mlp_gelu", "--option", "no_equals"], "is not KEY=VALUE"),
    (["capture", "mlp_gelu", "--timeout", "0"], "timeout"),
])
def test_bad_options_are_one_line(tmp_path, capsys, argv, message):
    assert main([*argv, "--home", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_import_refuses_dotdot(tmp_path, capsys):
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("meta.json", "{}")
        zf.writestr("../escape.txt", "x")
    assert main(["import", str(bad), "--home", str(tmp_path / "home")]) == 2  # unusable input
    err = capsys.readouterr().err.strip()
    assert "unsafe entry" in err and "'..'" in err and "\n" not in err
    assert not (tmp_path / "escape.txt").exists()


def test_export_unknown_run(tmp_path, capsys):
    assert main(["export", "nope", str(tmp_path / "o.zip"), "--home", str(tmp_path)]) == 1
    assert "no run 'nope'" in capsys.readouterr().err


@pytest.mark.slow
def test_capture_runs_export_import(tmp_path, capsys):
    home = str(tmp_path / "home")
    assert main(["capture", "matmul_softmax", "--device", "cpu", "--home", home]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert any("compiling" in line for line in out)
    run_dir = Path(out[-1])
    assert run_dir.is_dir() and (run_dir / "meta.json").is_file() and run_dir.parent == tmp_path / "home/runs"

    assert main(["runs", "--home", home]) == 0
    listing = capsys.readouterr().out
    assert run_dir.name in listing and "complete" in listing

    zip_path = tmp_path / "run.zip"
    assert main(["export", run_dir.name, str(zip_path), "--home", home]) == 0
    assert capsys.readouterr().out.strip() == str(zip_path)
    assert main(["import", str(zip_path), "--home", str(tmp_path / "other")]) == 0
    imported = Path(capsys.readouterr().out.strip())
    assert imported.name == run_dir.name and (imported / "meta.json").read_bytes() == (run_dir / "meta.json").read_bytes()
