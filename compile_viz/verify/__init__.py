"""Verify: the win and the wrong, in the capture child: timings (measure.py, timing.py, spread.py, kernel_costs.py),
correctness (correctness.py, accuracy.py), the backend ladder (ladder.py) and PyTorch's bisector (bisect.py)."""
