"""Capture: compile a model with TORCH_COMPILE_DEBUG=1 in a child process and store the run.

The parent side (this package minus child.py) never imports torch or streamlit.
"""

from compile_viz.capture.options import DTYPES, MODES, CaptureOptions, parse_option
from compile_viz.capture.protocol import Progress
from compile_viz.capture.runner import capture
from compile_viz.capture.userfile import ModelRefError, resolve_model_ref, user_code_allowed
from compile_viz.capture.warm import prewarm

__all__ = ["DTYPES", "MODES", "CaptureOptions", "ModelRefError", "Progress", "capture", "parse_option",
           "prewarm", "resolve_model_ref", "user_code_allowed"]
