"""The Compile page: a sample model or your own file, the capture options, live progress, cancel."""

from __future__ import annotations

import hashlib

import streamlit as st

from compile_viz.capture import DTYPES, MODES, CaptureOptions, parse_option, user_code_allowed
from compile_viz.ui import jobs, loaders, page_registry

JOB = "capture_job"


def page() -> None:
    st.subheader("Compile a model")
    job: jobs.CaptureJob | None = st.session_state.get(JOB)
    if job is not None and not job.done:
        _progress(job)
        return
    if job is not None:
        _outcome(job)
    jobs.prewarm(loaders.get_store())  # a torch-imported capture child waits for the Compile button
    model = _model_picker()
    options = _options(model)
    if st.button("Compile", type="primary", disabled=not model or options is None):
        st.session_state[JOB] = jobs.start(model, options, loaders.get_store())
        st.rerun()


def _model_picker() -> str:
    from sample_models import get_sample, sample_names

    sources = ["Sample model"] + (["Your file"] if user_code_allowed() else [])
    source = st.radio("Model", sources, horizontal=True)
    if source == "Sample model":
        name = st.selectbox("Sample", sample_names(), format_func=lambda n: f"{get_sample(n).title} ({n})")
        spec = get_sample(name)
        st.info(spec.teaching_note)
        if spec.large:
            st.caption("Large sample: minutes on a CPU.")
        return name
    st.caption("A Python file defining `SPEC = SampleSpec(...)` (see sample_models/); it runs in a child process.")
    up = st.file_uploader("Upload a model file", type=["py"])
    if up is not None:
        data = up.getvalue()
        folder = loaders.get_store().home / "user_models" / hashlib.sha256(data).hexdigest()[:12]
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (up.name if up.name.endswith(".py") else "model.py")
        path.write_bytes(data)
        return str(path)
    return st.text_input("…or a path on the server", placeholder="/path/to/model.py[:NAME]").strip()


def _options(model: str) -> CaptureOptions | None:
    with st.expander("Compile options", expanded=False):
        c1, c2, c3 = st.columns(3)
        device = c1.selectbox("Device", ("auto", "cpu", "cuda"))
        mode = c2.selectbox("Mode", MODES)
        dtype = c3.selectbox("Dtype", (None, *DTYPES), format_func=lambda d: d or "sample default")
        c1, c2, c3 = st.columns(3)
        train = {"sample default": None, "inference": False, "training step": True}[
            c1.selectbox("Train", ("sample default", "inference", "training step"))]
        dynamic = {"sample default": None, "static": False, "dynamic": True}[
            c2.selectbox("Shapes", ("sample default", "static", "dynamic"))]
        fullgraph = c3.checkbox("fullgraph")
        aoti = st.checkbox("Ahead of time: torch.export, then AOTInductor (inference)",
                           help="aoti_compile_and_package instead of torch.compile; not measured (docs/aoti.md)")
        measure = st.checkbox("Measure eager vs compiled (correctness, speedup, time per kernel)", value=True,
                              disabled=aoti, help="Runs both after compiling, in the same child: adds a few seconds.")
        extra = st.text_area("Inductor options (KEY=VALUE per line)", placeholder="max_autotune=True")
        timeout = st.number_input("Timeout (s)", 10, 3600, 600)
    try:
        inductor = dict(parse_option(line) for line in extra.splitlines() if line.strip())
        return CaptureOptions.make(device=device, mode=mode, dtype=dtype, train=train, dynamic=dynamic,
                                   fullgraph=fullgraph, timeout_s=float(timeout), inductor_options=inductor,
                                   measure=measure and not aoti, aoti=aoti)
    except ValueError as e:
        st.error(str(e))
        return None


@st.fragment(run_every=0.5)
def _progress(job: jobs.CaptureJob) -> None:
    if job.done:
        st.rerun(scope="app")
    st.markdown(f"**Compiling `{job.model}`** · {job.phase} · {job.elapsed_s:.0f} s")
    st.progress(min(0.95, job.elapsed_s / max(job.options.timeout_s, 1.0)))
    st.code("\n".join(job.log_lines()) or "starting…", language=None)
    if st.button("Cancel", disabled=job.cancel.is_set()):
        job.cancel.set()


def _outcome(job: jobs.CaptureJob) -> None:
    run = job.run
    if job.error or run is None:
        st.error(f"The capture could not run: {job.error or 'no run was stored'}")
        return
    if run.ok:
        st.success(f"Compiled `{run.model}` in {job.elapsed_s:.0f} s: run {run.id}")
        if st.button("Open in the viewer", type="primary"):
            del st.session_state[JOB]
            page_registry.switch("viewer", run=run.id)
        return
    st.error(f"The run failed: {run.reason}")
    tail = run.meta.get("stderr_tail")
    if tail:
        with st.expander("stderr (last lines)"):
            st.code(tail, language=None)
