"""Measurements as typed records: measure.json and the summary in meta.json's `measure`, read in
one place, and how their latencies were timed. Stdlib only.

`records.py`: the parts of measure.json and meta.json's summary; `ladder.py`: the backend ladder
of a wrong result and what the compiler bisector named; `method.py`: how a latency was
timed, and who sets the pace of a call; `measurement.py`: measure.json as one `Measurement`, the
reading of a run's files, and what follows from them (its method, launch-bound or not, whether two
runs' timings compare); `json_fields.py`: typed reads of JSON values. The modules here import one
another directly, never this package.
"""

from compile_viz.measurements.ladder import Bisect, Ladder, LadderStage, headline_note, next_step
from compile_viz.measurements.measurement import (
    FILE,
    Measurement,
    comparable,
    inferred_method,
    launch_bound,
    launch_overhead_us,
    method_of,
    read_measurement,
    read_run,
)
from compile_viz.measurements.method import LaunchBound, Method
from compile_viz.measurements.records import (
    Bandwidth,
    Check,
    Correctness,
    GraphCosts,
    KernelCost,
    Latency,
    MeasureSummary,
    OutsideCost,
    Profile,
    Variant,
)

__all__ = ["FILE", "Bandwidth", "Bisect", "Check", "Correctness", "GraphCosts", "KernelCost", "Ladder",
           "LadderStage", "Latency", "LaunchBound", "MeasureSummary", "Measurement", "Method", "OutsideCost", "Profile", "Variant", "comparable",
           "headline_note", "inferred_method", "launch_bound", "launch_overhead_us", "method_of", "next_step",
           "read_measurement", "read_run"]
