"""`python -m mpi_overlap.tools.devtools schemas DIR`: the JSON schema of every typed
document, generated from its model (core/schema.py), written as DIR/<name>.schema.json
for whoever reads schema files (editors, other tools, docs). Nothing in the package reads
these files: documents are checked by their models."""

from __future__ import annotations

import json
from pathlib import Path

from ..benchmarks.documents import load
from ..core.schema import json_schema, typed_names


def write_schemas(out: Path) -> list[Path]:
    load()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in typed_names():
        path = out / f"{name}.schema.json"
        path.write_text(json.dumps(json_schema(name), indent=2, ensure_ascii=False) + "\n")
        written.append(path)
    return written
