"""No import circles in the Python package (issue 18): every `import` of a package module,
at the top of a file, inside a function or under TYPE_CHECKING, is an edge, and the graph
has no cycle. A function-level import is no way out: it hides the circle from Python, not
from the next reader. Read from the sources with ast, nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "mpi_overlap"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom,
             known: dict[str, Path]) -> list[str]:
    """The package modules an import statement names (a name imported from a package
    counts as its submodule when there is one)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module
                                                                   else []))
        else:
            base = node.module or ""
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    out = []
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module and name.startswith("mpi_overlap"):
            out.append(name)
    return out


def import_graph() -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, path in known.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[module].update(_targets(module, path, node, known))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 100 and graph["mpi_overlap.run.bench_run"] >= {
        "mpi_overlap.calibration.calibrate", "mpi_overlap.run.multilaunch",
        "mpi_overlap.run.runner"}
    assert cycles(graph) == []


def test_the_check_finds_a_cycle_hidden_in_a_function() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def include_graph(folder: Path) -> dict[str, set[str]]:
    """The C files of a folder as modules (x.c and x.h are module x), an edge where a
    module's file includes another module's header."""
    import re

    files = [*folder.glob("*.c"), *folder.glob("*.h")]
    stems = {f.stem for f in files}
    graph: dict[str, set[str]] = {s: set() for s in stems}
    for f in files:
        for name in re.findall(r'#include "([^"/]+)\.h"', f.read_text()):
            if name in stems and name != f.stem:
                graph[f.stem].add(name)
    return graph


def test_the_profiler_library_has_no_include_cycle() -> None:
    """Between the profiler's modules (x.c + x.h): the runtime, the region API, the traces,
    the clock, the wrappers' helpers (issue 18 named mop_runtime ↔ mop_regions ↔
    mop_trace_mpi)."""
    native = PACKAGE.parents[1] / "native"
    for folder in ("profiler", "common"):
        graph = include_graph(native / folder)
        assert len(graph) > 5, folder
        assert cycles(graph) == [], folder
    profiler = include_graph(native / "profiler")
    assert "mop_runtime" not in profiler["mop_regions"] or \
        "mop_regions" not in profiler["mop_runtime"]


# Between folders (the package's subpackages: benchmarks/, run/, profile/, ...): an edge
# A -> B where a module of A imports one of B, at the top, in a function or under
# TYPE_CHECKING, or names it in a string ("mpi_overlap.x.y" or f"mpi_overlap.x.{...}", the
# way import_module and lazy_analysis load a module on first use). The top-level modules
# (cli.py, session.py, rundir.py, ...) are no folder and are left out until issue 37 item 2
# puts them in layers.
#
# The folder edges that lie on a circle today, each with what makes it: the list may only
# shrink (issue 37 item 2 is to empty it). An edge not listed that closes a circle fails
# here, and so does a listed one that no longer lies on one (take it off).
KNOWN_CIRCLE_EDGES = {
    # analysis.replication finds which benchmark a run is (discovery.spec_of)
    ("analysis", "benchmarks"),
    # analysis.run_table reads the transfer-time table (calibration.xfer_table)
    ("analysis", "calibration"),
    # the benchmarks' analyses use the kit (stats, figures, knee, replication)
    ("benchmarks", "analysis"),
    # profiler_overhead and study calibrate the table their profiled launches use
    ("benchmarks", "calibration"),
    # nbc_overlap and overlap_validation read their runs' rank profiles (profiled_runs,
    # profile_values); profiler_overhead and study collect them (collect_profile); the
    # registry's entry for profile runs names their analysis; the advice rules progress and
    # sync_overlap declare (spec.Evidence) read the profile's pairs (advice_pairs,
    # profile_values). The one edge that keeps
    # profile/ on a circle: everything else it imports (run, calibration, analysis, report)
    # is below it, but those reach benchmarks/, which reaches back.
    ("benchmarks", "profile"),
    # the benchmarks' report modules are made of the kit (html, run_table, sections, ...)
    ("benchmarks", "report"),
    # profiler_overhead and study launch their programs themselves (launch, paired_launch)
    ("benchmarks", "run"),
    # calibrate and calibrate_check run the benchmark with the p2p/collective table role
    ("calibration", "benchmarks"),
    # calibrate launches (runner, procs, machine_load); job_classes reads slurm_launch
    ("calibration", "run"),
    # below the profile: compare_bare's interval (stats), the transfer table's rows
    ("profile", "analysis"),
    # session reads the registry (profile's entry) and collects the evidence the specs
    # declare (spec.Evidence); the analysis (profile, advice) runs the rules they declare,
    # found through discovery.specs: the profile names no benchmark, it iterates them
    ("profile", "benchmarks"),
    # the analysis reads the table (xfer_table), its trust (table_trust), session calibrates
    ("profile", "calibration"),
    # the profile's report parts are made of the kit (html, svg_chart)
    ("profile", "report"),
    # session launches (launch, runner, fault_signs, env_matrix), the table's guard words
    ("profile", "run"),
    # report.replication draws analysis.replication's figures
    ("report", "analysis"),
    # summary_card lists every benchmark's card line (discovery.specs)
    ("report", "benchmarks"),
    # html says what the table note and the run guard say (table_note, run_guard)
    ("report", "calibration"),
    ("report", "run"),
    # runner, bench_run, multilaunch and paired_launch look benchmarks up (registry, spec)
    ("run", "benchmarks"),
    # bench_run calibrates when a benchmark needs a table; runner reads its note
    ("run", "calibration"),
}


def _folder(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (PACKAGE / parts[-1]).is_dir() else None


def _string_imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules a file names in a string: a whole "mpi_overlap.x.y" or the
    fixed start of an f-string (its longest known module)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(
                node.values[0], ast.Constant) and isinstance(node.values[0].value, str):
            name = node.values[0].value.rstrip(".")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
        else:
            continue
        if not name.startswith("mpi_overlap.") or not all(
                part.isidentifier() for part in name.split(".")):
            continue
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            out.add(name)
    return out


def folder_graph() -> dict[str, set[str]]:
    """Folder -> the folders its modules import (imports of every kind and strings)."""
    known = _modules()
    graph = import_graph()
    for module, path in known.items():
        graph[module] |= _string_imports(module, path, known)
    folders: dict[str, set[str]] = {f: set() for m in graph if (f := _folder(m))}
    for a, targets in graph.items():
        for b in targets:
            fa, fb = _folder(a), _folder(b)
            if fa and fb and fa != fb:
                folders[fa].add(fb)
    return folders


def circle_edges(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The edges that lie on a circle: both ends in one strongly connected component."""
    component = {v: i for i, comp in enumerate(cycles(graph)) for v in comp}
    return {(a, b) for a, targets in graph.items() for b in targets
            if a in component and component[a] == component.get(b)}


def test_no_new_circle_between_folders() -> None:
    graph = folder_graph()
    assert {"profile", "benchmarks", "run", "report"} <= set(graph)
    # the registry loads the profile's analysis by name only: the string counts
    assert "profile" in graph["benchmarks"]
    edges = circle_edges(graph)
    new = edges - set(KNOWN_CIRCLE_EDGES)
    assert not new, f"new folder circle through: {sorted(new)}"
    gone = set(KNOWN_CIRCLE_EDGES) - edges
    assert not gone, f"no longer on a circle (take them off KNOWN_CIRCLE_EDGES): {sorted(gone)}"


def test_the_folder_check_sees_strings_and_long_circles() -> None:
    # a circle of three folders, none of them a pair
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circle_edges(graph) == {("a", "b"), ("b", "c"), ("c", "a")}
    assert circle_edges({"a": {"b"}, "b": set()}) == set()
    known = _modules()
    path = PACKAGE / "benchmarks" / "registry.py"
    assert "mpi_overlap.profile.analysis.profile" in _string_imports(
        "mpi_overlap.benchmarks.registry", path, known)


def test_the_profile_is_above_what_it_imports_but_benchmarks() -> None:
    """profile/'s one way in from a circle is benchmarks/ (KNOWN_CIRCLE_EDGES says why):
    no other folder on a circle imports it, so a new way in fails here by name."""
    graph = folder_graph()
    edges = circle_edges(graph)
    assert {a for a, b in edges if b == "profile"} == {"benchmarks"}


def test_the_product_imports_nothing_from_tools() -> None:
    """tools/ holds the developer's entry points (the Makefile's ctest, fuzz and scale
    benchmarks): they may import the product, no product module may import them, by any
    kind of import or by name in a string."""
    known = _modules()
    graph = import_graph()
    tools = "mpi_overlap.tools"
    assert {m for m in known if m.startswith(tools + ".")} >= {
        "mpi_overlap.tools.devtools", "mpi_overlap.tools.report_scale"}
    wrong = sorted(f"{m} -> {t}" for m, path in known.items()
                   if m != tools and not m.startswith(tools + ".")
                   for t in graph[m] | _string_imports(m, path, known)
                   if t == tools or t.startswith(tools + "."))
    assert not wrong, f"the product imports the developer tools: {wrong}"
