"""The linking layer: joins the parses of one compiled graph into a GraphIndex.

index.py builds it (build_index); post_grad.py and matcher.py place each launch's post-grad
FX nodes; aot.py maps those to the AOT graph; groups.py aligns fusion groups with launches;
model.py holds what it returns and reasons.py why a node has no kernel.
"""

from compile_viz.linking.index import build_index

__all__ = ["build_index"]
