"""docs/cli.md is the --help of every compile-viz command, regenerated here from the argparse definitions."""

from __future__ import annotations

import importlib.util
import re

from tests.conftest import ROOT


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_page_is_generated_from_the_parser():
    gen = _generator()
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert page == gen.render(), f"docs/cli.md is stale: run {gen.COMMAND}"


def test_cli_page_has_every_command_and_does_not_depend_on_the_terminal(monkeypatch):
    gen = _generator()
    monkeypatch.setenv("COLUMNS", "40")
    text = gen.render()
    for command in ("parse", "capture", "capture-all", "runs", "export", "import"):
        assert f"\n## compile-viz {command}\n" in text and f"usage: compile-viz {command} [-h]" in text
    assert text == (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def test_capture_docs_link_the_reference_instead_of_a_synopsis():
    capture = (ROOT / "docs" / "capture.md").read_text(encoding="utf-8")
    assert "(cli.md)" in capture and "compile-viz runs [QUERY]" not in capture


def _options_by_command() -> dict[str, set[str]]:
    subs = _generator()._subcommands(_generator()._build_parser())
    return {name: {s for action in sub._actions for s in action.option_strings} for name, sub in subs.items()}


def _problems(line: str, options: dict[str, set[str]]) -> list[str]:
    """Return what is wrong with one hand-written `compile-viz ...` line (commands may be joined by " | ")."""
    problems = []
    for i, segment in enumerate(line.split("#", 1)[0].removeprefix("compile-viz ").split(" | ")):
        command = segment.split()[0] if segment.split() else ""
        if i and command not in options:
            continue  # "a | b" inside one option's choices
        if command not in options:
            problems.append(f"no command {command!r}")
            continue
        ours = segment.split(" -- ", 1)[0]  # after a bare --, the options are the recorded job's
        problems += [f"compile-viz {command} has no {flag}" for flag in
                     re.findall(r"(?<![\w-])--[a-z][a-z-]*", ours) if flag not in options[command]]
    return problems


def _synopsis_lines() -> list[tuple[str, str]]:
    pages = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "cli.md")]
    return [(p.name, line) for p in pages for line in p.read_text(encoding="utf-8").splitlines()
            if line.startswith("compile-viz ")]


def test_hand_written_command_lines_name_real_commands_and_options():
    """The short synopses left in README.md and docs/ may only name commands and options that exist."""
    options, lines = _options_by_command(), _synopsis_lines()
    assert len(lines) >= 4
    for page, line in lines:
        assert not _problems(line, options), f"{page}: {_problems(line, options)} in: {line}"


def test_a_synopsis_naming_a_missing_option_or_command_is_caught():
    options = _options_by_command()
    (_, line), *_ = [(p, x) for p, x in _synopsis_lines() if "--fullgraph" in x]
    assert _problems(line.replace("--fullgraph", "--full-graph"), options) == ["compile-viz capture has no --full-graph"]
    assert _problems(line.replace("capture", "kapture", 1), options) == ["no command 'kapture'"]
