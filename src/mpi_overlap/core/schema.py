"""Validation of every JSON document mpi-overlap writes, and the JSON schemas it serves.

A document is one typed model (a `Document`, a msgspec Struct) in the layer that writes it;
its JSON schema is generated from the model (json_schema), not written by hand. msgspec was
picked over pydantic by validation speed on the 8 192-rank profile result.json (209 MiB,
every rank's document; measured 2026-11-30 on this 2-core machine under load, best of 3):
jsonschema-rs on the hand-written schemas 0.26-0.49 s, msgspec.convert into Structs
0.35-0.64 s (with gc=False; 1.7 s without), pydantic 2.14 model_validate 6.1-11.8 s and
model_validate_json 5.9-10.5 s, which alone would take most of the report's 10 s.

A model is registered under its schema name (`register`, "profile-run-v1") by the module
that declares it, in the layer that writes the document (profile/documents/models.py,
run/documents.py, benchmarks/<name>/documents.py, ...); benchmarks/documents.py loads
those modules and checks a document by the name its kind gives. A document that does not
match is one line, "path: message", msgspec's first error. No schema file is written by
hand: `python -m mpi_overlap.tools.devtools schemas DIR` writes the generated ones.
"""

from __future__ import annotations

import contextlib
import json
import sys
from functools import cache
from typing import Any, ClassVar

import msgspec

from .errors import UserError

SCHEMA_ID = "https://mpi-overlap.invalid/schemas/{}.schema.json"


class Document(msgspec.Struct, kw_only=True, gc=False):
    """Base of every document model. Fields are keyword-only (a required field may follow
    an optional one, in the document's own order); gc=False: a model is validated, never
    kept in a cycle, and tracking 8 192 rank documents' Structs took 2-3 times as long. Keys a
    model does not name are allowed, as in JSON Schema, unless its class says
    forbid_unknown_fields=True."""

    # A rule between fields that their types cannot say (keys required once another has
    # a value, a type that depends on another's), as JSON Schema merged into the model's
    # generated schema; the model's __post_init__ checks it (require_fields, a ValueError).
    schema_extra: ClassVar[dict[str, Any]] = {}


# by schema name: a Document class, or a type made of them (figures-v1: a list)
_MODELS: dict[str, Any] = {}


def register(models: dict[str, Any]) -> None:
    """The models of a module by schema name ("profile-run-v1")."""
    _MODELS.update(models)


def require_keys(value: Any, where: str, keys: tuple[str, ...], *, each: bool = False) -> None:
    """A dict field's keys that must be there (a model's __post_init__: msgspec types a
    dict's values, not which keys it holds); its JSON schema says so with `required`.
    each: the keys of every value of the dict (a dict of dicts)."""
    if not isinstance(value, dict):
        return
    for where_, one in ([(f"{where}.{k}", v) for k, v in value.items()] if each
                        else [(where, value)]):
        for key in keys:
            if isinstance(one, dict) and key not in one:
                raise ValueError(f"Object `{where_}` missing required key `{key}`")


def require_fields(document: Document, names: tuple[str, ...], why: str) -> None:
    """Fields that must be there (not UNSET) because of another's value (`why`)."""
    for name in names:
        if getattr(document, name) is msgspec.UNSET:
            raise ValueError(f"Object missing required field `{name}` ({why})")


def _subclasses(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_subclasses(sub))]


def typed_names() -> list[str]:
    """The schema names of the registered models."""
    return sorted(_MODELS)


def _where(path: str) -> str:
    """msgspec's `$.ranks[0].rank` as jsonschema's path `ranks/0/rank`."""
    parts = [p for p in path.removeprefix("$").replace("[", ".").replace("]", "").split(".")
             if p]
    return "/".join(parts) or "(root)"


def model_errors(doc: Any, document: Any) -> list[str]:
    """The first validation error of `doc` against a model, as one readable line (an empty
    list when it is valid): msgspec stops at the first."""
    try:
        msgspec.convert(doc, document)
    except msgspec.ValidationError as err:
        if "got `numpy.float" in str(err):
            # numpy's floats subclass float and are written as JSON numbers; msgspec takes
            # only float itself, so a document made in memory by numpy code is checked as
            # it will be read back (what json cannot write stays the error it is)
            with contextlib.suppress(TypeError, ValueError):
                return model_errors(json.loads(json.dumps(doc)), document)
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
    defs = generated.pop("$defs", {})
    # msgspec names a $defs entry after its class: the classes with a schema_extra have
    # names of their own (test_document_models)
    for cls in _subclasses(Document):
        if cls.schema_extra and cls.__name__ in defs:
            defs[cls.__name__].update(cls.schema_extra)
    # a Struct's schema is a $ref to its $defs entry; a list of them (figures) is itself
    body = defs.pop(generated.pop("$ref").rpartition("/")[2]) if "$ref" in generated \
        else generated
    out: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                           "$id": SCHEMA_ID.format(name), **body}
    if defs:
        out["$defs"] = defs
    return out


def _literal(document: Any, field: str) -> Any:
    """The one value a model's Literal field takes (its `schema`, `schema_version`).
    Only that field's annotation is evaluated: msgspec.structs.fields evaluates every
    field's (~0.8 ms a model), and each process asks this of all ~100 models (88 ms of a
    2-rank profile; 42 s of a report of 1 000 rank documents while it was asked per
    document)."""
    if not (isinstance(document, type) and issubclass(document, Document)):
        return None
    for klass in document.__mro__:
        annotation = vars(klass).get("__annotations__", {}).get(field)
        if annotation is not None:
            break
    else:
        return None
    if isinstance(annotation, str):  # from __future__ import annotations
        annotation = eval(annotation, vars(sys.modules[klass.__module__]))
    args = getattr(annotation, "__args__", ())
    return args[0] if len(args) == 1 else None


def has_schema(name: str) -> bool:
    return name in _MODELS


def load_schema(name: str) -> dict[str, Any]:
    if name not in _MODELS:
        raise UserError(f"no schema named {name}")
    return json_schema(name)


def _versions() -> dict[str, int]:
    """The newest schema_version of each document kind ("mpi-overlap/run", ...), from the
    `schema` and `schema_version` constants of the registered models: declared once,
    there."""
    versions: dict[str, int] = {}
    for m in _MODELS.values():
        name, version = _kind_and_version(m)
        if isinstance(name, str) and isinstance(version, int):
            versions[name] = max(version, versions.get(name, 0))
    return versions


@cache
def _kind_and_version(model: Any) -> tuple[Any, Any]:
    """A model's `schema` and `schema_version` constants, read once per model: every
    document read asks for the versions of all ~100 models."""
    return _literal(model, "schema"), _literal(model, "schema_version")


def supported_version(name: str | None) -> int:
    """The newest schema_version this mpi-overlap reads for documents of kind `name`; for
    an unknown kind, the newest of any kind (1 while no model is loaded: json_input, below
    the layers that declare them, asks before any is, and every kind is at version 1)."""
    versions = _versions()
    return versions.get(name or "", max(versions.values(), default=1))


def errors_against(doc: Any, name: str) -> list[str]:
    """The validation error of `doc` against the model of schema `name` as one readable
    line ([] when valid)."""
    if name not in _MODELS:
        raise UserError(f"no schema named {name}")
    return model_errors(doc, _MODELS[name])
