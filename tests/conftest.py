"""Shared fixtures: where the real captures are, and skips that say why."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
GPU_CORPUS = CORPUS / "gpu-h100-torch2.11"
SAMPLE_RUNS = ROOT / "sample_runs"
THIRD_PARTY = ROOT / "tests" / "fixtures" / "third_party"  # H100 captures of transformers/timm/torchvision models


def corpus_required():
    if not CORPUS.is_dir():
        if os.environ.get("COMPILE_VIZ_CI"):
            pytest.fail(f"CI must have the corpus at {CORPUS}")
        pytest.skip(f"../shared/corpus is absent ({CORPUS}): corpus tests need it")


def in_parallel(*calls):
    """Run the zero-argument callables in threads at once; return their results in order."""
    import threading

    results = [None] * len(calls)

    def one(i):
        results[i] = calls[i]()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def corpus_sets() -> list[Path]:
    """Every capture in ../shared/corpus: a folder holding a torch_compile_debug tree (or graph folders)."""
    if not CORPUS.is_dir():
        return []
    sets = set()
    for path in glob.glob(str(CORPUS / "**" / "output_code.py"), recursive=True):
        # a set is a folder two levels down: corpus/<collection>/<set>/...
        rel = Path(path).relative_to(CORPUS).parts
        if len(rel) > 2:
            sets.add(CORPUS / rel[0] / rel[1])
    return sorted(sets)


def artifact_files(name: str) -> list[Path]:
    return sorted(Path(p) for p in glob.glob(str(CORPUS / "**" / name), recursive=True))


def modules_after_parse_json(path, names: tuple[str, ...]) -> list[str]:
    """Which of the modules `names` a fresh process has imported once `parse --json PATH --jobs 1` ran."""
    script = (
        "import sys, io, contextlib\n"
        "from compile_viz.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['parse', '--json', {str(path)!r}, '--jobs', '1'])\n"
        f"print(' '.join(sorted(m for m in {tuple(names)!r} if m in sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def compile_viz_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run `python -m compile_viz.cli ARGS` from the repository root on the CPU, as a user would."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", COMPILE_VIZ_WARM="0")
    return subprocess.run([sys.executable, "-m", "compile_viz.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def corpus():
    corpus_required()
    return CORPUS


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


@pytest.fixture(scope="session")
def cpu_run(tmp_path_factory):
    """A real torch.compile on this machine's CPU (C++ kernels), made once per test session."""
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


def pytest_addoption(parser):
    parser.addoption("--update-goldens", action="store_true", help="rewrite tests/goldens/ from the current parse")


def _torchrun() -> str:
    found = shutil.which("torchrun") or str(Path(sys.executable).parent / "torchrun")
    if not Path(found).exists():
        pytest.skip("torchrun is not installed (it comes with torch)")
    return found


DDP_JOBS = {"same": [], "recompile": ["--recompile-rank", "1"]}


@pytest.fixture(scope="session")
def ddp_job(tmp_path_factory):
    """`ddp_job(name)`: a real 2-rank gloo DDP job (tests/jobs/ddp_gloo.py) recorded with
    `compile-viz record -- torchrun ...` on first use, once per session: "same" (both ranks compile
    alike) or "recompile" (rank 1 alone gets a batch of another size at the last step, so it alone
    recompiles). Returns (run folder, the command's CompletedProcess). A test that needs one job
    records only that one (about a minute and a half on two shared cores)."""
    pytest.importorskip("torch")
    made: dict = {}

    def get(name: str):
        if name not in made:
            work = tmp_path_factory.mktemp(f"ddp_{name}")
            done = compile_viz_cli("record", "--home", str(work / "home"), "--", _torchrun(), "--nproc-per-node", "2",
                                   str(ROOT / "tests" / "jobs" / "ddp_gloo.py"), *DDP_JOBS[name])
            assert done.returncode == 0, done.stderr[-3000:]
            made[name] = (Path(done.stdout.strip().splitlines()[-1]), done)
        return made[name]

    return get


@pytest.fixture(scope="session")
def ddp_runs(ddp_job):
    """Both DDP jobs of `ddp_job`: {"same": ..., "recompile": ...}."""
    return {name: ddp_job(name) for name in DDP_JOBS}


@pytest.fixture(scope="session")
def postgres():
    """One real PostgreSQL for the session (tests/services.py), stopped by its PID at the end."""
    from tests.services import remove, start_postgres

    pg = start_postgres()
    try:
        yield pg
    finally:
        remove(pg)
