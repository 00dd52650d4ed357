"""schema.errors_against recognises a valid document with jsonschema-rs and explains an
invalid one with jsonschema: the two must agree on every verdict, or a document that
jsonschema refuses would pass unchecked. Checked on a profile run and on mutations of it
that break each kind of rule the schemas use."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest

from mpi_overlap.core.schema import _fast_validator, _registry, errors_against, load_schema
from test_analysis_profile import KIB, MIB, Group, make_result, rank_doc


def _result() -> dict[str, Any]:
    groups = [Group("MPI_Isend", "halo", 4 * KIB, 8 * KIB, 10, 1e-3, 2e-4, 8e-4),
              Group("MPI_Irecv", "(no region)", MIB, 2 * MIB, 4, 4e-3, 0.0, 1e-3)]
    return make_result([rank_doc(r, groups, size=2) for r in range(2)])


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


def _drop(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return change


MUTATIONS = {
    "type": _set(["ranks", 1, "profile", "totals", "xfer_s"], "1 ms"),
    "minimum": _set(["ranks", 0, "rank"], -3),
    "enum": _set(["ranks", 0, "clock", "source"], "sundial"),
    "required": _drop(["ranks", 1, "profile"]),
    "additional properties": _set(["ranks", 0, "profile", "counters", "new_counter"], -1),
    "const": _set(["schema"], "mpi-overlap/other"),
    "ref across files": _set(["ranks", 0, "schema_version"], "one"),
}


def test_a_valid_document_passes_both() -> None:
    doc = _result()
    python = jsonschema.Draft202012Validator(load_schema("profile-run-v1"), registry=_registry())
    assert python.is_valid(doc) and _fast_validator("profile-run-v1").is_valid(doc)
    assert errors_against(doc, "profile-run-v1") == []


@pytest.mark.parametrize("rule", sorted(MUTATIONS))
def test_both_refuse_what_breaks_a_rule_and_jsonschema_explains_it(rule: str) -> None:
    doc = copy.deepcopy(_result())
    MUTATIONS[rule](doc)
    python = jsonschema.Draft202012Validator(load_schema("profile-run-v1"), registry=_registry())
    assert not python.is_valid(doc), rule
    assert not _fast_validator("profile-run-v1").is_valid(doc), rule
    errors = errors_against(doc, "profile-run-v1")
    assert errors and errors[0] == next(
        f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message[:200]}"
        for e in sorted(python.iter_errors(doc), key=lambda e: list(e.absolute_path)))
