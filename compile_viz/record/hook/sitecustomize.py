"""The record hook: `compile-viz record` puts this folder first on the job's PYTHONPATH, so every
Python process of the job (the script, torchrun and each rank, their own children) runs this at
start-up, before the script's first line. Nothing happens unless COMPILE_VIZ_RECORD names a run
folder. Then, in each process:

- a rank's debug tree goes apart: TORCH_COMPILE_DEBUG_DIR becomes `debug/rank_<RANK>` when the
  launcher set RANK (torchrun, or any launcher that sets it); so does its Inductor cache when
  `record --keep-caches` keeps the caches on;
- Inductor's fusion log (what TORCH_LOGS="+fusion" prints) goes to a file of the process's own
  (`fusion.log` beside its graph folders), not to the job's stderr; installed when Inductor's
  scheduler is imported, so a process that never compiles pays nothing;
- `logs/processes/<pid>.json` says who the process was (argv, rank, world size, parent) and, at
  exit, the torch and triton versions, the device and an uncaught exception in one line. Written
  for the job's own process, for each rank, and for any other process that compiles or fails:
  Inductor's helper processes (compile workers, `python -c` probes) leave none.

Stdlib only, and torch is never imported here: only read from sys.modules once the job has
imported it. A site's own sitecustomize, when there is one further down sys.path, still runs.
"""

import os
import sys

ENV = "COMPILE_VIZ_RECORD"
PARENT_ENV = "COMPILE_VIZ_RECORD_PARENT"  # the pid of `compile-viz record`, whose child is the job
PROFILE_ENV = "COMPILE_VIZ_RECORD_PROFILE"  # "WARMUP,STEPS" under `record --profile`
RANK_MARK = "COMPILE_VIZ_RECORD_RANK_PID"  # set by a rank's first process, inherited by its children
HERE = os.path.dirname(os.path.abspath(__file__))


def _install(run: str) -> None:
    rank = os.environ.get("RANK", "")
    if rank.isdigit():
        os.environ["TORCH_COMPILE_DEBUG_DIR"] = os.path.join(run, "debug", f"rank_{rank}")
        if os.environ.get(ENV + "_CACHES"):  # caches kept: one per rank, or rank 1 hits rank 0's entries
            cache = os.path.join(run, "inductor_cache", f"rank_{rank}")
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
            os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    record = _Process(run, rank)
    # The job's own process, and each rank's first process (its children, such as Inductor's compile
    # workers, inherit RANK but also the mark set here), are recorded from the start; any other
    # process only if it compiles or fails.
    first_of_rank = rank.isdigit() and not os.environ.get(RANK_MARK)
    if first_of_rank:
        os.environ[RANK_MARK] = str(os.getpid())
    if first_of_rank or str(os.getppid()) == os.environ.get(PARENT_ENV):
        record.write()
    watch = {"torch._inductor.scheduler": _on_scheduler(run, record)}
    if os.environ.get(PROFILE_ENV):
        watch["torch.optim.optimizer"] = _on_optimizer(run, record, os.environ[PROFILE_ENV])
    sys.meta_path.insert(0, _ModuleWatch(watch))
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        record.error(kind, value, tb)
        previous(kind, value, tb)

    sys.excepthook = excepthook
    import atexit

    atexit.register(record.finish)


class _Process:
    """This process's record, rewritten whole at start, when it compiles and at exit."""

    def __init__(self, run: str, rank: str) -> None:
        import time

        folder = os.path.join(run, "logs", "processes")
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, f"{os.getpid()}.json")
        self.written = False
        env = os.environ
        self.data = {"pid": os.getpid(), "ppid": os.getppid(), "argv": list(sys.argv), "started": time.time(),
                     "rank": int(rank) if rank.isdigit() else None,
                     "local_rank": _int(env.get("LOCAL_RANK")), "world_size": _int(env.get("WORLD_SIZE")),
                     "debug_dir": env.get("TORCH_COMPILE_DEBUG_DIR")}

    def write(self) -> None:
        import json

        self.written = True
        try:
            tmp = self.path + ".part"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(self.data, f, default=str)
            os.replace(tmp, self.path)
        except Exception:  # a record must never break the job
            pass

    def error(self, kind, value, tb) -> None:
        try:
            where = None
            while tb is not None:  # the innermost frame outside the standard library and torch
                code = tb.tb_frame.f_code
                if not _is_library(code.co_filename):
                    where = f"{code.co_filename}:{tb.tb_lineno}"
                tb = tb.tb_next
            text = " ".join(str(value).split())
            self.data["error"] = f"{kind.__name__}: {text}" if text else kind.__name__
            self.data["error_at"] = where
            triton = _triton_error(value)
            if triton is not None:  # kept whole: the parent makes its line (record/reasons.triton_error)
                src = getattr(triton, "src", None)
                self.data["triton_error"] = {"kind": type(triton).__name__, "text": str(triton)[:TRITON_TEXT],
                                             "src": src[:TRITON_SRC] if isinstance(src, str) else None}
            self.write()
        except Exception:
            pass

    def compiling(self) -> None:
        self.data["compiled"] = True
        self.finish(ended=False)

    def finish(self, ended: bool = True) -> None:
        if ended and not self.written:  # a helper process that neither compiled nor failed
            return
        try:
            import time

            self.data.update(_versions())
            if ended:
                self.data["ended"] = time.time()
            self.write()
        except Exception:
            pass


def _int(text):
    return int(text) if text and text.isdigit() else None


TRITON_TEXT, TRITON_SRC = 8000, 40000  # a CompilationError's message (12 lines of source) and its kernel


def _triton_error(exc):
    """Triton's CompilationError in an exception's chain (Inductor wraps it), else None."""
    for _ in range(20):
        if exc is None:
            return None
        if type(exc).__name__ == "CompilationError" or type(exc).__module__.split(".")[0] == "triton":
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _is_library(filename: str) -> bool:
    parts = filename.replace("\\", "/").split("/")
    return ("site-packages" in parts or "dist-packages" in parts or filename.startswith("<")
            or filename.startswith(sys.base_prefix) or filename.startswith(sys.prefix))


def _versions() -> dict:
    """What the job's own imports say: torch and triton versions, the device, the process group."""
    out = {}
    torch = sys.modules.get("torch")
    if torch is None:
        return out
    out["torch"] = getattr(torch, "__version__", None)
    version = getattr(torch, "version", None)
    out["cuda"] = getattr(version, "cuda", None)
    out["hip"] = getattr(version, "hip", None)
    triton = sys.modules.get("triton")
    if triton is not None:
        out["triton"] = getattr(triton, "__version__", None)
    try:
        cuda = torch.cuda
        if cuda.is_initialized():
            index = cuda.current_device()
            out["device"] = f"cuda:{index}"
            out["device_name"] = cuda.get_device_name(index)
            out["device_count"] = cuda.device_count()
    except Exception:
        pass
    try:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            out["backend"] = str(dist.get_backend())
            out["world_size"] = dist.get_world_size()
            out["rank"] = dist.get_rank()
    except Exception:
        pass
    return out


class _ModuleWatch:
    """A meta path finder that waits for the modules it is given, lets the usual finders load each,
    then calls that module's function with the module; it leaves sys.meta_path once all are seen."""

    def __init__(self, then: dict) -> None:
        self.then = dict(then)  # module name -> function(module)

    def find_spec(self, name, path=None, target=None):
        if name not in self.then:
            return None
        then = self.then.pop(name)
        if not self.then:
            sys.meta_path.remove(self)
        spec = None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None) if finder is not self else None
            spec = find(name, path, target) if find else None
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_call(module):
            exec_module(module)
            try:
                then(module)
            except Exception as e:  # the hook's part is lost, the job goes on
                print(f"compile-viz record: {name}: {type(e).__name__}: {e}", file=sys.stderr)

        spec.loader.exec_module = exec_and_call
        return spec


def _on_scheduler(run: str, record: "_Process"):
    """What to do once Inductor's scheduler is imported: send its fusion log to this process's file."""

    def then(_module):
        _attach_fusion_log(run)
        record.compiling()

    return then


def _on_optimizer(run: str, record: "_Process", setting: str):
    """What to do once torch.optim.optimizer is imported (`record --profile`): register the step
    hook that profiles a few steps (compile_viz/record/step_profile.py, loaded by its path)."""

    def then(module):
        try:
            profile = _load("step_profile")
            profile.install(module, run=run, setting=setting, record=record)
        except Exception as e:
            record.data["profile"] = {"error": f"{type(e).__name__}: {e}"}
            raise

    return then


def _load(name: str):
    """Load compile_viz/record/<name>.py by its path: the job need not have compile_viz on its path."""
    import importlib.util

    source = os.path.join(os.path.dirname(HERE), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_compile_viz_{name}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _attach_fusion_log(run: str) -> None:
    """Attach compile_viz's fusion-log handler."""
    try:
        module = _load("fusion_log")
        fallback = os.path.join(run, "logs", f"fusion-pid_{os.getpid()}.log")
        module.attach(module.beside_graphs(fallback))
    except Exception:  # no fusion log, but the job goes on
        pass


def _chain() -> None:
    """Run the sitecustomize that this one hides (Debian's, a site's own), if any."""
    try:
        import importlib.machinery
        import importlib.util

        path = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
    except Exception as e:
        print(f"compile-viz record: the site's own sitecustomize failed: {type(e).__name__}: {e}", file=sys.stderr)


if os.environ.get(ENV):
    try:
        _install(os.environ[ENV])
    except Exception as e:  # recording must never stop the job
        print(f"compile-viz record: the record hook failed: {type(e).__name__}: {e}", file=sys.stderr)
_chain()
