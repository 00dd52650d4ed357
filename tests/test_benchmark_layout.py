"""One benchmark, one place (issue 18): every benchmark lives in its own package
(src/mpi_overlap/benchmarks/<name>/, found by benchmarks/discovery.py) and is named,
outside tests/ and docs/, only by its C program, its line in native/bench/CMakeLists.txt
and its package; it has a section in docs/benchmarks.md (or the page its spec names); its
flags or command, registry entry, report, summary-card line and step of `characterize`
come from the package. The registry holds nothing else but the profiler's own run kind.

"Names it": a Python, JSON or template file holding the name as a string ("polling"), its
package (benchmarks.polling) or its command in a text ("bench polling"); a native or build
file naming its program (mo_polling) or its source (polling.c). Read from the tree with
git, nothing is run."""

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

# Benchmark names that are also words of the data, and the files where they are that word:
# there (only there) the name as a string is not looked for, its package and its command
# are. Renaming these words would change the documents the golden outputs pin.
WORDS = {
    # the advice rule "progress" (an item's "rule" in analysis.json: the model's enum, the
    # replay of that rule in predict/gains.py), the analysis key of that rule's evidence
    # (the model's field; the key is declared by the progress package's Evidence) and
    # the replay target's progress mode (predict's report and words)
    "progress": {"src/mpi_overlap/predict/gains.py", "src/mpi_overlap/predict/report.py",
                 "src/mpi_overlap/predict/words.py",
                 "src/mpi_overlap/profile/analysis/document.py"},
    # the profile's waits by kind (analysis.json, the report's waits table) and the number
    # of collective operations of a traced run (two_sided, the replay's report and gains)
    "collectives": {"src/mpi_overlap/profile/analysis/twosided.py",
                    "src/mpi_overlap/profile/report/profile_waits.py",
                    "src/mpi_overlap/predict/gains.py", "src/mpi_overlap/predict/report.py"},
}


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if (ROOT / p).is_file()]


def _naming_patterns(spec) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(for Python, JSON and templates; the same in a file where the name is a word of the
    data (WORDS); for native and build files). The program's name followed by "(" is a C
    function of that name (mo_progress writes the progress lines), not the program. A
    suite's name (overhead: every benchmark of `bench overhead-suite` says
    suite="overhead", and the suite's --help points to `bench overhead`) is looked for as
    a module path only."""
    name, program = re.escape(spec.name), re.escape(spec.benchmark.program)
    package = re.escape(spec.package.rpartition(".")[2])
    source = re.escape(_source(spec).rpartition("/")[2])
    module = rf"benchmarks[./]{package}\b"
    if spec.name in {s.benchmark.suite for s in specs()}:
        text = word = re.compile(module)
    else:
        command = rf"\bbench {name}\b(?!-)"
        text = re.compile(rf"""["']{name}["']|{module}|{command}""")
        word = re.compile(rf"{module}|{command}")
    native = (re.compile(rf"\b{program}\b(?!\s*\()|\b{source}\b") if program
              else re.compile(r"(?!)"))  # no program of its own: nothing native names it
    return text, word, native


def _source(spec) -> str:
    """The benchmark's C program: native/bench/<program without mo_>.c unless it says."""
    return f"native/bench/{spec.source or spec.benchmark.program.removeprefix('mo_') + '.c'}"


def _outside_tests_and_docs(path: str) -> bool:
    parts = path.split("/")
    return not ({"tests", "docs"} & set(parts)) and not parts[-1].endswith(".md")


def _files_naming(spec, files: list[str]) -> set[str]:
    text, word, native = _naming_patterns(spec)
    found = set()
    for path in files:
        if not _outside_tests_and_docs(path):
            continue
        suffix = Path(path).suffix
        if suffix in (".py", ".json", ".j2", ".html", ".toml"):
            pattern = word if path in WORDS.get(spec.name, ()) else text
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
    # a benchmark of many launches (the profiler's cost, the studies) has no C program
    # of its own: its package launches the programs
    native = {_source(spec), "native/bench/CMakeLists.txt"} if spec.benchmark.program else set()
    assert outside == sorted(native), (
        f"{name} is named outside its program and its package: {outside}")


def test_the_words_let_through_are_words_there() -> None:
    """Each file where WORDS lets a benchmark's name through as a string holds it (a file
    that no longer does comes off the list), and each such name is a benchmark's."""
    names = {s.name for s in specs()}
    for name, paths in WORDS.items():
        assert name in names
        for path in paths:
            assert re.search(rf"""["']{name}["']""", (ROOT / path).read_text()), (name, path)


@pytest.mark.parametrize("spec", specs(), ids=lambda s: s.name)
def test_a_package_benchmark_has_its_parts(spec) -> None:
    """Its registry entry, its command (or the command of its package, or the one that
    runs it for its role), its report and schemas, its docs section and card line."""
    from mpi_overlap.commands import reporting as report
    from mpi_overlap.core.documents import has_schema

    name = spec.name
    assert registry.get_benchmark(name) is spec.benchmark
    if spec.benchmark.program:
        assert (ROOT / _source(spec)).is_file() and has_schema(f"bench-{name}-v1")
    else:  # its package writes the run document: its model is beside it
        assert any(n.endswith("-run-v1") for n in spec.module("documents").MODELS), \
            f"{name}: no run document model"
    if spec.command_group == "bench":
        assert name in app.commands["bench"].commands  # type: ignore[attr-defined]
    elif spec.command_group == "":
        assert spec.command and spec.function(spec.command).__module__ == f"{spec.package}.cli"
        assert any(c.callback.__module__ == f"{spec.package}.cli"  # type: ignore[union-attr]
                   for c in app.commands.values()), f"{name}: its command is not in the CLI"
    else:  # run by its package's command, or by calibrate for its role
        siblings = [s for s in specs() if s.package == spec.package and s.command]
        assert siblings or spec.role, f"{name}: nothing runs it"
    if spec.benchmark.analyze is not None:
        assert report.reporters()[name].summary is spec.module("report").summary
    docs = (ROOT / "docs" / spec.docs).read_text()
    assert re.search(rf"^## {re.escape(name)} —", docs, re.M), (
        f"no '## {name} —' section in docs/{spec.docs}")
    if spec.card is not None:
        from mpi_overlap.benchmarks.discovery import card_items

        assert [i.label for i in card_items() if i.benchmark == name] == [spec.card.label]
    if spec.step is not None:
        assert callable(spec.function(spec.step))


def test_every_run_kind_but_the_profilers_is_a_package() -> None:
    """The registry is the packages' specs plus the profiler's own run kind (`profile`,
    not a benchmark); a benchmark written into registry.py instead of a package fails."""
    assert set(registry.BENCHMARKS) == {registry.PROFILE.name, *(s.name for s in specs())}
    assert registry.PROFILE.program == ""


def test_characterize_runs_the_declared_steps_in_their_order() -> None:
    import mpi_overlap.commands.characterize as ch

    assert [label for label, _ in ch._steps()] == [
        "profiler-overhead", "study halo", "study cg"]


def test_calibrate_finds_one_benchmark_per_role() -> None:
    from mpi_overlap.benchmarks.discovery import spec_with_role
    from mpi_overlap.benchmarks.spec import COLLECTIVE_TABLE, P2P_TABLE

    for role in (P2P_TABLE, COLLECTIVE_TABLE):
        assert spec_with_role(role).benchmark.program
    with pytest.raises(RuntimeError):
        spec_with_role("no such role")
