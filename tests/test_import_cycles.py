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


# The folders that import each other today (docs/architecture.md names them; issue 37
# item 2 is to remove them): the list may only shrink. A new pair fails here.
# profile/ gathered profiling/, trace/ and the profile's modules of analysis/ and report/:
# the pairs it was in became pairs with profile/ (and those of its old parts with report/
# and predict/, inside one folder before, show now).
KNOWN_FOLDER_PAIRS = {
    ("analysis", "benchmarks"), ("benchmarks", "calibration"), ("benchmarks", "profile"),
    ("benchmarks", "report"), ("benchmarks", "run"), ("calibration", "run"),
}


def folder_pairs(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Pairs of the package's folders (top-level modules left out) that import each other."""
    def folder(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 2 or (PACKAGE / parts[-1]).is_dir() else None

    edges = {(folder(a), folder(b)) for a, targets in graph.items() for b in targets}
    edges = {(a, b) for a, b in edges if a and b and a != b}
    return {(a, b) for a, b in edges if (b, a) in edges and a < b}


def test_no_new_circle_between_folders() -> None:
    pairs = folder_pairs(import_graph())
    assert pairs <= KNOWN_FOLDER_PAIRS, f"new: {sorted(pairs - KNOWN_FOLDER_PAIRS)}"
    gone = KNOWN_FOLDER_PAIRS - pairs
    assert not gone, f"gone (take them off KNOWN_FOLDER_PAIRS): {sorted(gone)}"
