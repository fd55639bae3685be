"""Parse `inductor_provenance_tracking_node_mappings.json` (written with INDUCTOR_PROVENANCE=1)."""

from __future__ import annotations

from compile_viz.artifacts.model import ParseWarning, ProvenanceMap
from compile_viz.artifacts.text import read_json_object

# JSON key -> ProvenanceMap field. Older torch wrote "cppCodeToPost" for Triton too.
SECTIONS = {
    "preToPost": "pre_to_post",
    "postToPre": "post_to_pre",
    "cppCodeToPost": "code_to_post",
    "postToCppCode": "post_to_code",
}


def parse_provenance(data: bytes | str, *, path: str) -> ProvenanceMap:
    """Return the node and kernel mappings; a cut or malformed file gives empty maps and a warning."""
    doc, warnings = read_json_object(data, path, "mappings")
    maps: dict[str, dict[str, tuple[str, ...]]] = {field: {} for field in SECTIONS.values()}
    if not doc:
        warnings.append(ParseWarning(path, 0, "no mappings in file"))
    for key, value in doc.items():
        field = SECTIONS.get(key)
        if field is None:
            warnings.append(ParseWarning(path, 0, f"unknown section {key!r} ignored"))
            continue
        if not isinstance(value, dict):
            warnings.append(ParseWarning(path, 0, f"section {key!r} is not an object; ignored"))
            continue
        maps[field] = {
            str(k): tuple(map(str, v)) if isinstance(v, list) else (str(v),) for k, v in value.items()
        }
    return ProvenanceMap(path, warnings=tuple(warnings), **maps)
