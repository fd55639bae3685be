"""TORCH_TRACE logs: `read.py` reads one into a record per compile id (`build.py` assembles them,
`model.py` holds what it returns), `graphs.py` turns its payloads into the same `GraphParse` a
debug folder gives, `discover.py` finds logs in a file, folder or zip and joins a run's `trace/` to
its `debug/` graphs, `kernel_stacks.py` reads Inductor's per-launch user stacks and
`module_paths.py` the Dynamo input names (`blocks.3.qkv.weight` -> module `blocks.3.qkv`).

Empty on purpose: import the module that holds a name, so that reading a debug folder loads none
of this.
"""
