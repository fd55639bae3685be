from compile_viz.cli import entry

entry()
