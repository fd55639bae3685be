"""Fleets: sweeps of many models x settings run as Ray tasks, read as a fleet, and two sweeps compared.

sweep_file.py reads a sweep file into cells; records.py keeps a sweep's record and finds its runs;
task.py is one cell (the child-process capture, stored once); driver.py runs the cells on Ray (imported
only when a sweep runs); report.py the fleet's rows; diff.py two sweeps, with why each pair changed.
The package's __init__ imports nothing: the dashboard reads a report without the driver or Ray.
"""
