"""Validation of every JSON document mpi-overlap writes, and the JSON schemas it serves.

A document is one typed model (a `Document`, a msgspec Struct) in the layer that writes it;
its JSON schema is generated from the model (json_schema), not written by hand. msgspec was
picked over pydantic by validation speed on the 8 192-rank profile result.json (209 MiB,
every rank's document; measured 2026-11-30 on this 2-core machine under load, best of 3):
jsonschema-rs on the hand-written schemas 0.26-0.49 s, msgspec.convert into Structs
0.35-0.64 s (with gc=False; 1.7 s without), pydantic 2.14 model_validate 6.1-11.8 s and
model_validate_json 5.9-10.5 s, which alone would take most of the report's 10 s.

A model is registered under its schema name (`register`, "profile-run-v1") by the module
that declares it; benchmarks/documents.py loads those modules and checks a document by
the name its kind gives. Documents not yet typed are still checked against their schema
files (schemas/, the benchmark packages) with jsonschema-rs, and explained with
jsonschema.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema_rs
import msgspec

from .errors import UserError

if TYPE_CHECKING:
    from referencing import Registry

SCHEMA_ID = "https://mpi-overlap.invalid/schemas/{}.schema.json"


class Document(msgspec.Struct, kw_only=True, gc=False):
    """Base of every document model. Fields are keyword-only (a required field may follow
    an optional one, in the document's own order); gc=False: a model is validated, never
    kept in a cycle, and tracking 8 192 rank documents' Structs tripled the time. Keys a
    model does not name are allowed, as in JSON Schema, unless its class says
    forbid_unknown_fields=True."""


_MODELS: dict[str, type[Document]] = {}


def register(models: dict[str, type[Document]]) -> None:
    """The models of a module by schema name ("profile-run-v1")."""
    _MODELS.update(models)


def require_keys(value: Any, where: str, keys: tuple[str, ...]) -> None:
    """A dict field's keys that must be there (a model's __post_init__: msgspec types a
    dict's values, not which keys it holds); its JSON schema says so with `required`."""
    if isinstance(value, dict):
        for key in keys:
            if key not in value:
                raise ValueError(f"Object `{where}` missing required key `{key}`")


def typed_names() -> list[str]:
    """The schema names of the registered models."""
    return sorted(_MODELS)


def model(name: str) -> type[Document] | None:
    return _MODELS.get(name)


def _where(path: str) -> str:
    """msgspec's `$.ranks[0].rank` as jsonschema's path `ranks/0/rank`."""
    parts = [p for p in path.removeprefix("$").replace("[", ".").replace("]", "").split(".")
             if p]
    return "/".join(parts) or "(root)"


def model_errors(doc: Any, document: type[Document]) -> list[str]:
    """The first validation error of `doc` against a model, as one readable line (an empty
    list when it is valid): msgspec stops at the first."""
    try:
        msgspec.convert(doc, document)
    except msgspec.ValidationError as err:
        message, _, path = str(err).rpartition(" - at `")
        if not message:
            return [f"(root): {str(err)[:200]}"]
        return [f"{_where(path.rstrip('`'))}: {message[:200]}"]
    return []


@cache
def json_schema(name: str) -> dict[str, Any]:
    """The JSON schema (draft 2020-12) generated from the model of `name`."""
    document = _MODELS[name]
    generated = msgspec.json.schema(document)
    root = generated.pop("$ref").rpartition("/")[2]
    defs = generated.pop("$defs")
    body = defs.pop(root)
    out: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                           "$id": SCHEMA_ID.format(name), **body}
    if defs:
        out["$defs"] = defs
    return out


def _literal(document: type[Document], field: str) -> Any:
    """The one value a model's Literal field takes (its `schema`, `schema_version`)."""
    for f in msgspec.structs.fields(document):
        if f.encode_name == field:
            args = getattr(f.type, "__args__", ())
            return args[0] if len(args) == 1 else None
    return None


_PACKAGE = Path(__file__).parents[1]
SCHEMA_DIR = _PACKAGE / "schemas"
PACKAGE_SCHEMAS = _PACKAGE / "benchmarks"


def _schema_paths() -> list[Path]:
    """schemas/*.schema.json, the result and analysis schemas the benchmark packages
    keep beside their code (benchmarks/<name>/): the documents not yet typed; file names
    are unique across them."""
    return sorted([*SCHEMA_DIR.glob("*.schema.json"), *PACKAGE_SCHEMAS.glob("*/*.schema.json")],
                  key=lambda p: p.name)


@cache
def _schema_files() -> dict[str, dict[str, Any]]:
    """Every schema file's document by file name, read once."""
    return {path.name: json.loads(path.read_text()) for path in _schema_paths()}


@cache
def _registry() -> Registry:
    from referencing import Registry, Resource  # with jsonschema: invalid documents only

    resources = []
    files = {**_schema_files(), **{f"{n}.schema.json": json_schema(n) for n in _MODELS}}
    for file_name, doc in files.items():
        resource = Resource.from_contents(doc)
        # Register under the file name too, so relative $refs between files resolve.
        resources.append((doc["$id"], resource))
        resources.append((file_name, resource))
    return Registry().with_resources(resources)


def has_schema(name: str) -> bool:
    return name in _MODELS or f"{name}.schema.json" in _schema_files()


def load_schema(name: str) -> dict[str, Any]:
    if name in _MODELS:
        return json_schema(name)
    doc = _schema_files().get(f"{name}.schema.json")
    if doc is None:
        raise UserError(f"no schema named {name}")
    return doc


def _versions() -> dict[str, int]:
    """The newest schema_version of each document kind ("mpi-overlap/run", ...), from the
    `schema` and `schema_version` constants of the models and the schema files: declared
    once, there."""
    versions: dict[str, int] = {}
    pairs = [(_literal(m, "schema"), _literal(m, "schema_version")) for m in _MODELS.values()]
    for doc in _schema_files().values():
        props = doc.get("properties") or {}
        pairs.append(((props.get("schema") or {}).get("const"),
                      (props.get("schema_version") or {}).get("const")))
    for name, version in pairs:
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
    by_id.update({SCHEMA_ID.format(name): json_schema(name) for name in _MODELS})
    return jsonschema_rs.validator_for(load_schema(name), retriever=by_id.__getitem__)


def errors_against(doc: Any, name: str) -> list[str]:
    """All validation errors of `doc` against schema `name`, as readable one-liners. A
    valid document is recognised by jsonschema-rs; the errors of an invalid one are
    jsonschema's, whose messages the rest of the tool (and its users) know. A typed
    document is checked by its model."""
    if name in _MODELS:
        return model_errors(doc, _MODELS[name])
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
