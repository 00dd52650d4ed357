"""One benchmark, one place (issue 18): a benchmark that lives in its own package
(src/mpi_overlap/benchmarks/<name>/, found by benchmarks/discovery.py) is named, outside
tests/ and docs/, only by its C program, its line in native/bench/CMakeLists.txt and its
package; it has a section in docs/benchmarks.md; its flags, registry entry, report and
summary-card line come from the package. The benchmarks still written out in
benchmarks/registry.py may only shrink: a new one must be a package.

"Names it": a Python, JSON or template file holding the name as a string ("polling") or
its package (benchmarks.polling); a native or build file naming its program (mo_polling)
or its source (polling.c). Read from the tree with git, nothing is run."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mpi_overlap.benchmarks import registry
from mpi_overlap.benchmarks.discovery import specs
from mpi_overlap.cli import app

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = "src/mpi_overlap/benchmarks"

# The benchmarks written out in registry.py when the packages began (2026-11-27); each one
# moved into a package leaves this list.
NOT_YET_PACKAGES = {
    "pingpong", "collectives", "profile", "profiler-overhead",
    "study-halo", "study-cg",
}


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if (ROOT / p).is_file()]


def _naming_patterns(spec) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(for Python, JSON and templates; for native and build files). The program's name
    followed by "(" is a C function of that name (mo_progress writes the progress lines),
    not the program. A name that is also the profile's evidence key the spec declares
    (progress: the advice reads result["progress"], its rule is "progress") or a suite's
    name (overhead: every benchmark of `bench overhead-suite` says suite="overhead") is
    looked for as a module path only."""
    name, program = re.escape(spec.name), re.escape(spec.benchmark.program)
    package = re.escape(spec.package.rpartition(".")[2])
    source = re.escape(_source(spec).rpartition("/")[2])
    words = {spec.evidence, *(s.benchmark.suite for s in specs())}
    literal = "" if spec.name in words else rf"""["']{name}["']|"""
    text = re.compile(rf"""{literal}benchmarks[./]{package}\b""")
    native = re.compile(rf"\b{program}\b(?!\s*\()|\b{source}\b")
    return text, native


def _source(spec) -> str:
    """The benchmark's C program: native/bench/<program without mo_>.c unless it says."""
    return f"native/bench/{spec.source or spec.benchmark.program.removeprefix('mo_') + '.c'}"


def _outside_tests_and_docs(path: str) -> bool:
    parts = path.split("/")
    return not ({"tests", "docs"} & set(parts)) and not parts[-1].endswith(".md")


def _files_naming(spec, files: list[str]) -> set[str]:
    text, native = _naming_patterns(spec)
    found = set()
    for path in files:
        if not _outside_tests_and_docs(path):
            continue
        suffix = Path(path).suffix
        if suffix in (".py", ".json", ".j2", ".html", ".toml"):
            pattern = text
        elif suffix in (".c", ".h", ".f90", ".F90", ".cmake", ".txt") or path.endswith("Makefile"):
            pattern = native
        else:
            continue
        try:
            content = (ROOT / path).read_text()
        except UnicodeDecodeError:
            continue
        if pattern.search(content):
            found.add(path)
    return found


@pytest.mark.parametrize("spec", specs(), ids=lambda s: s.name)
def test_a_package_benchmark_is_named_by_its_program_and_its_package_only(spec) -> None:
    name = spec.name
    package = spec.package.rpartition(".")[2]
    assert spec.package == f"mpi_overlap.benchmarks.{package}"
    named = _files_naming(spec, _tracked())
    outside = sorted(p for p in named if not p.startswith(f"{PACKAGES}/{package}/"))
    assert outside == sorted({_source(spec), "native/bench/CMakeLists.txt"}), (
        f"{name} is named outside its program and its package: {outside}")


@pytest.mark.parametrize("spec", specs(), ids=lambda s: s.name)
def test_a_package_benchmark_has_its_parts(spec) -> None:
    from mpi_overlap import report
    from mpi_overlap.schema import has_schema

    name = spec.name
    assert registry.get_benchmark(name) is spec.benchmark
    assert spec.benchmark.analyze is not None and (ROOT / _source(spec)).is_file()
    assert name in app.commands["bench"].commands  # type: ignore[attr-defined]
    assert report.reporters()[name].summary is spec.module("report").summary
    assert has_schema(f"bench-{name}-v1")
    docs = (ROOT / "docs" / "benchmarks.md").read_text()
    assert re.search(rf"^## {re.escape(name)} —", docs, re.M), f"no '## {name} —' section"
    if spec.card is not None:
        from mpi_overlap.report.summary_card import card_items

        assert [i.label for i in card_items() if i.benchmark == name] == [spec.card.label]


def test_the_written_out_benchmarks_only_shrink() -> None:
    here = set(registry._HERE)
    assert here <= NOT_YET_PACKAGES, (
        f"new benchmarks belong in packages of their own (benchmarks/<name>/, spec.py), "
        f"not in registry.py: {sorted(here - NOT_YET_PACKAGES)}")
    assert not here & {s.name for s in specs()}
    moved = NOT_YET_PACKAGES - here
    assert moved <= {s.name for s in specs()}, "a benchmark left registry.py for no package"
