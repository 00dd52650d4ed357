"""Validation of every JSON document mpi-overlap writes against the schemas in schemas/.

Benchmark result documents have a common envelope (result-v1) whose `results` are
validated by the benchmark's own schema (bench-<name>-v1); analysis documents by
analysis-<name>-v1. A profile run's result is the profile-run-v1 document that collects
every rank's profile-rank-v1 document.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from .errors import UserError

if TYPE_CHECKING:
    from referencing import Registry

_PACKAGE = Path(__file__).parents[1]
SCHEMA_DIR = _PACKAGE / "schemas"
PACKAGE_SCHEMAS = _PACKAGE / "benchmarks"
PROFILE_SCHEMAS = _PACKAGE / "profile" / "schemas"


def _schema_paths() -> list[Path]:
    """schemas/*.schema.json, the result and analysis schemas the benchmark packages
    keep beside their code (benchmarks/<name>/) and the profile's (profile/schemas/); file
    names are unique across them."""
    return sorted([*SCHEMA_DIR.glob("*.schema.json"), *PACKAGE_SCHEMAS.glob("*/*.schema.json"),
                   *PROFILE_SCHEMAS.glob("*.schema.json")], key=lambda p: p.name)


@cache
def _schema_files() -> dict[str, dict[str, Any]]:
    """Every schema file's document by file name, read once."""
    return {path.name: json.loads(path.read_text()) for path in _schema_paths()}


@cache
def _registry() -> Registry:
    from referencing import Registry, Resource  # with jsonschema: invalid documents only

    resources = []
    for file_name, doc in _schema_files().items():
        resource = Resource.from_contents(doc)
        # Register under the file name too, so relative $refs between files resolve.
        resources.append((doc["$id"], resource))
        resources.append((file_name, resource))
    return Registry().with_resources(resources)


def has_schema(name: str) -> bool:
    return f"{name}.schema.json" in _schema_files()


@cache
def load_schema(name: str) -> dict[str, Any]:
    doc = _schema_files().get(f"{name}.schema.json")
    if doc is None:
        raise UserError(f"no schema named {name}")
    return doc


@cache
def _versions() -> dict[str, int]:
    """The newest schema_version of each document kind ("mpi-overlap/run", ...), from the
    `schema` and `schema_version` constants of the schema files: declared once, there."""
    versions: dict[str, int] = {}
    for doc in _schema_files().values():
        props = doc.get("properties") or {}
        name = (props.get("schema") or {}).get("const")
        version = (props.get("schema_version") or {}).get("const")
        if isinstance(name, str) and isinstance(version, int):
            versions[name] = max(version, versions.get(name, 0))
    return versions


def supported_version(name: str | None) -> int:
    """The newest schema_version this mpi-overlap reads for documents of kind `name`; for
    an unknown kind, the newest of any kind."""
    versions = _versions()
    return versions.get(name or "", max(versions.values(), default=1))


@cache
def _fast_validator(name: str) -> Any:
    """jsonschema-rs's validator of schema `name` (Rust: a 30 MB profile of 1024 ranks in
    0.07 s, where jsonschema takes 16 s); refs between the files resolve by their $id."""
    by_id = {doc["$id"]: doc for doc in _schema_files().values()}
    return jsonschema_rs.validator_for(load_schema(name), retriever=by_id.__getitem__)


def errors_against(doc: Any, name: str) -> list[str]:
    """All validation errors of `doc` against schema `name`, as readable one-liners. A
    valid document is recognised by jsonschema-rs; the errors of an invalid one are
    jsonschema's, whose messages the rest of the tool (and its users) know."""
    if _fast_validator(name).is_valid(doc):
        return []
    # jsonschema (0.1–0.3 s to import) only for a document that is invalid
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema(name), registry=_registry())
    out = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        out.append(f"{where}: {err.message[:200]}")
    return out


def result_errors(doc: dict[str, Any]) -> list[str]:
    if doc.get("schema") == "mpi-overlap/profile-run":
        ranks = doc.get("ranks")
        if not isinstance(ranks, list) and hasattr(ranks, "check"):
            # rank documents read one at a time (result_file.RankSequence; not
            # imported: this module is below it): each is checked as it is read, the rest
            # of the document now
            ranks.check = lambda d: errors_against(d, "profile-rank-v1")
            return errors_against(dict(doc, ranks=[]), "profile-run-v1")
        return errors_against(doc, "profile-run-v1")
    kind = str(doc.get("schema") or "").removeprefix("mpi-overlap/")
    if kind.endswith("-run") and has_schema(f"{kind}-v1"):
        # the run document of a benchmark of many launches (profiler-overhead, the
        # studies): its schema beside it, named after it
        return errors_against(doc, f"{kind}-v1")
    errors = errors_against(doc, "result-v1")
    bench = doc.get("benchmark")
    if isinstance(bench, str) and has_schema(f"bench-{bench}-v1"):
        errors += ["results/" + e for e in errors_against(doc.get("results"), f"bench-{bench}-v1")]
    elif isinstance(bench, str):
        errors.append(f"benchmark: no schema for results of '{bench}'")
    return errors


def analysis_errors(doc: dict[str, Any]) -> list[str]:
    bench = doc.get("benchmark")
    return errors_against(doc, f"analysis-{bench}-v1")


def run_errors(doc: dict[str, Any]) -> list[str]:
    return errors_against(doc, "run-v1")


def report_errors(doc: dict[str, Any]) -> list[str]:
    """report.json (any command's report: a benchmark's, a suite's, characterize's)."""
    return errors_against(doc, "report-v1")
