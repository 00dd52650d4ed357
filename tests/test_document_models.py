"""The typed documents (core/schema.py, benchmarks/documents.py): each is a model whose
JSON schema is generated from it. The model and its generated schema accept the golden
fixtures and refuse what the hand-written schemas they replace refused (a wrong type, a
value out of range or of its enum, a missing key, an unknown schema tag, a key a closed
object does not have), each refusal one line naming where."""

from __future__ import annotations

import copy
import json
import lzma
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from fixture_archives import unpack
from mpi_overlap.benchmarks.documents import load
from mpi_overlap.core.documents import errors_against
from mpi_overlap.core.schema import SCHEMA_ID, json_schema, supported_version, typed_names
from mpi_overlap.tools.devtools import main as devtools
from test_analysis_profile import KIB, MIB, Group, make_result, rank_doc

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
PROFILE = ("profile-rank-v1", "profile-stats-v1", "profile-run-v1", "analysis-profile-v1")


@cache
def _generated(name: str) -> jsonschema.Draft202012Validator:
    """jsonschema's validator of the schema generated from the model of `name`."""
    load()
    registry = Registry().with_resources(
        [(SCHEMA_ID.format(n), Resource.from_contents(json_schema(n))) for n in typed_names()])
    return jsonschema.Draft202012Validator(json_schema(name), registry=registry)


def _golden_profile(tmp_path: Path) -> list[tuple[str, Any]]:
    """The documents of the golden 2-rank profile of mo_halo: its result.json, each rank's
    document, and the analysis.json its report wrote."""
    unpack(GOLDEN / "profile-halo.tar.xz", tmp_path)
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    result = json.loads((run_dir / "result.json").read_text())
    with lzma.open(GOLDEN / "profile-halo.expected.json.xz") as f:
        expected = json.loads(f.read())
    (analysis,) = expected["analysis.json"].values()
    return [("profile-run-v1", result), ("analysis-profile-v1", analysis),
            *[("profile-rank-v1", doc) for doc in result["ranks"]]]


def test_the_golden_profile_is_valid_by_model_and_generated_schema(tmp_path: Path) -> None:
    docs = _golden_profile(tmp_path)
    assert {name for name, _ in docs} == {"profile-run-v1", "analysis-profile-v1",
                                          "profile-rank-v1"}
    for name, doc in docs:
        assert errors_against(doc, name) == [], name
        assert list(_generated(name).iter_errors(doc)) == [], name


def test_the_job_statistics_are_valid_by_model_and_generated_schema(tmp_path: Path) -> None:
    from mpi_overlap.tools.report_scale import synthesize

    source = tmp_path / "golden"
    source.mkdir()
    _golden_profile(source)
    (run_dir,) = [p for p in source.iterdir() if p.is_dir()]
    synthesize(run_dir, 5, tmp_path / "stats", "statistics")
    result = json.loads((tmp_path / "stats" / "result.json").read_text())
    assert errors_against(result["job_stats"], "profile-stats-v1") == []
    assert list(_generated("profile-stats-v1").iter_errors(result["job_stats"])) == []
    assert errors_against(result, "profile-run-v1") == []


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


# What the hand-written profile-run-v1 (and the rank document it referred to) refused,
# with where the one line must point.
MUTATIONS = {
    "type": (_set(["ranks", 1, "profile", "totals", "xfer_s"], "1 ms"),
             "ranks/1/profile/totals/xfer_s: "),
    "minimum": (_set(["ranks", 0, "rank"], -3), "ranks/0/rank: "),
    "enum": (_set(["ranks", 0, "clock", "source"], "sundial"), "ranks/0/clock/source: "),
    "required": (_drop(["ranks", 1, "profile"]), "ranks/1: "),
    "required key of a map": (_drop(["ranks", 0, "profile", "cases", "in-call"]),
                              "ranks/0/profile: "),
    "map value": (_set(["ranks", 0, "profile", "counters", "new_counter"], -1),
                  "ranks/0/profile/counters: "),
    "unknown schema tag": (_set(["schema"], "mpi-overlap/other"), "schema: "),
    "closed object": (_set(["ranks", 0, "cpu", "extra"], 1), "ranks/0/cpu: "),
    "null where not allowed": (_set(["ranks_expected"], None), "ranks_expected: "),
    "ref across documents": (_set(["ranks", 0, "schema_version"], "one"),
                             "ranks/0/schema_version: "),
}


def test_a_valid_document_passes_both() -> None:
    doc = _result()
    assert errors_against(doc, "profile-run-v1") == []
    assert _generated("profile-run-v1").is_valid(doc)


@pytest.mark.parametrize("rule", sorted(MUTATIONS))
def test_model_and_generated_schema_refuse_what_the_old_schema_did(rule: str) -> None:
    doc = copy.deepcopy(_result())
    doc["ranks"][0]["cpu"] = {"clock": "CLOCK_THREAD_CPUTIME_ID", "min_piece_s": None,
                              "reads": 0, "pieces": 0, "pieces_bounded": 0, "pieces_s": 0,
                              "pieces_cpu_s": 0, "off_cpu_s": 0, "thread_cpu_s": None,
                              "run_delay_s": None}
    assert errors_against(doc, "profile-run-v1") == []
    change, where = MUTATIONS[rule]
    change(doc)
    assert not _generated("profile-run-v1").is_valid(doc), rule
    errors = errors_against(doc, "profile-run-v1")
    assert len(errors) == 1 and "\n" not in errors[0], errors
    assert errors[0].startswith(where), errors[0]


def test_the_generated_schemas_are_schemas_and_name_their_kind(tmp_path: Path) -> None:
    assert devtools(["schemas", str(tmp_path)]) == 0
    for name in PROFILE:
        schema = json.loads((tmp_path / f"{name}.schema.json").read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema == json_schema(name) and schema["$id"] == SCHEMA_ID.format(name)
        assert schema["properties"]["schema_version"] == {"enum": [1]}
    assert supported_version("mpi-overlap/profile-run") == 1


def _golden_characterization(tmp_path: Path) -> list[tuple[str, Any]]:
    """Every document of the golden `characterize --quick`: each run's run.json, its
    result.json (and its launches'), and the analysis.json its report wrote."""
    unpack(GOLDEN / "characterize-quick.tar.xz", tmp_path)
    with lzma.open(GOLDEN / "characterize-quick.expected.json.xz") as f:
        expected = json.loads(f.read())
    docs: list[tuple[str, Any]] = []
    for path in sorted(tmp_path.rglob("*.json")):
        doc = json.loads(path.read_text())
        if path.name == "run.json":
            docs.append(("run-v1", doc))
        elif path.name == "result.json" and doc["schema"] == "mpi-overlap/result":
            docs += [("result-v1", doc), (f"bench-{doc['benchmark']}-v1", doc["results"])]
        elif path.name == "result.json":
            docs.append((f"{doc['schema'].removeprefix('mpi-overlap/')}-v1", doc))
    for analysis in expected["analysis.json"].values():
        if f"analysis-{analysis.get('benchmark')}-v1" in typed_names():
            docs.append((f"analysis-{analysis['benchmark']}-v1", analysis))
            docs.append(("figures-v1", analysis.get("figures", [])))
    return docs


def test_every_golden_document_is_valid_by_model_and_generated_schema(tmp_path: Path) -> None:
    docs = _golden_characterization(tmp_path)
    with lzma.open(GOLDEN / "profile-halo-cli.expected.json.xz") as f:
        report = json.loads(f.read())["report.json"]
    # the stored report.json is normalised: its generation time and version taken out
    docs.append(("report-v1", dict(report, generated_utc="2026-11-26T18:33:26Z",
                                   tool_version="0.0.0")))
    names = {name for name, _ in docs}
    assert len(names) >= 40, sorted(names)
    for name, doc in docs:
        assert errors_against(doc, name) == [], name
        assert list(_generated(name).iter_errors(doc)) == [], name


# A value of another JSON type than the one a field declares.
OTHER_TYPE = {"string": 17, "integer": "17", "number": "1.5", "boolean": "yes",
              "array": {"a": 1}, "object": [1]}


def _refusals(name: str, doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """What the hand-written schemas refused, made of a valid document: each required key
    missing, each typed top-level field of another type, an unknown schema tag."""
    schema = json_schema(name)
    out = [(f"no {key}", {k: v for k, v in doc.items() if k != key})
           for key in schema.get("required", [])]
    for key, prop in schema.get("properties", {}).items():
        if key in doc and isinstance(prop.get("type"), str) and prop["type"] in OTHER_TYPE:
            out.append((f"{key} of another type", dict(doc, **{key: OTHER_TYPE[prop["type"]]})))
    if "schema" in doc:
        out.append(("unknown schema tag", dict(doc, schema="mpi-overlap/other")))
    return out


def test_every_model_and_its_schema_refuse_what_the_old_schemas_did(tmp_path: Path) -> None:
    firsts: dict[str, Any] = {}
    for name, doc in _golden_characterization(tmp_path):
        if isinstance(doc, dict):
            firsts.setdefault(name, doc)
    tried = 0
    for name, doc in firsts.items():
        for what, bad in _refusals(name, doc):
            errors = errors_against(bad, name)
            assert len(errors) == 1, (name, what)
            assert not _generated(name).is_valid(bad), (name, what)
            tried += 1
    assert tried > 300


def test_the_rules_between_fields_are_in_the_schemas_and_checked(tmp_path: Path) -> None:
    """A rule a type cannot say (schema_extra) reaches the generated schema of the right
    class: msgspec names $defs after classes, so those classes' names are their own."""
    from mpi_overlap.core.schema import Document, _subclasses

    load()
    ruled = [c for c in _subclasses(Document) if c.schema_extra]
    assert len(ruled) >= 3
    names = [c.__name__ for c in _subclasses(Document)]
    for cls in ruled:
        assert names.count(cls.__name__) == 1, cls.__name__
    halo = json_schema("bench-halo-v1")["$defs"]["HaloMode"]
    assert halo["then"]["required"][0] == "checksum"
    results = next(doc for name, doc in _golden_characterization(tmp_path)
                   if name == "bench-halo-v1")
    assert results["modes"][0]["complete"] is True
    del results["modes"][0]["sum"]  # a complete mode without its sum
    (error,) = errors_against(results, "bench-halo-v1")
    assert error.startswith("modes/0: ") and "`sum` (complete)" in error
    assert not _generated("bench-halo-v1").is_valid(results)
