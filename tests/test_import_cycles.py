"""No import circles in the Python package (issue 18): every `import` of a package module,
at the top of a file, inside a function or under TYPE_CHECKING, is an edge, and the graph
has no cycle. A function-level import is no way out: it hides the circle from Python, not
from the next reader. Read from the sources with ast, nothing is imported."""

from __future__ import annotations

import ast
from functools import cache
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


@cache
def _tree(path: Path) -> ast.Module:
    """A file parsed once for all the checks here (each parsed the whole package again:
    1.4 s a test)."""
    return ast.parse(path.read_text())


@cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(_tree(path)))


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
        for node in _nodes(path):
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
    assert len(graph) > 100 and graph["mpi_overlap.commands.bench_run"] >= {
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
# way import_module and lazy_analysis load a module on first use;
# test_every_dynamic_import_is_seen keeps the other spellings to a module's own folder).
# Every module but cli.py and the package's __init__ lies in a folder (LAYERS below).
#
# No folder edge lies on a circle (issue 37 item 2 emptied the list of those that did:
# run -> benchmarks, calibration -> benchmarks and profile -> benchmarks were the edges
# up; what the lower folders needed of the benchmarks is now defined there and filled in
# from above: run/run_kind.py, calibration/table_benchmarks.py, profile/analysis/
# evidence.py, profile/run/entry.py, core/documents.py). A new circle fails here, with
# its edges named.


def _folder(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (PACKAGE / parts[-1]).is_dir() else None


def _string_imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules a file names in a string: a whole "mpi_overlap.x.y" or the
    fixed start of an f-string (its longest known module)."""
    out = set()
    for node in _nodes(path):
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
    assert "profile" in graph["benchmarks"] and "calibration" in graph["profile"]
    edges = circle_edges(graph)
    assert not edges, f"folder circle through: {sorted(edges)}"


def test_the_folder_check_sees_strings_and_long_circles() -> None:
    # a circle of three folders, none of them a pair
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circle_edges(graph) == {("a", "b"), ("b", "c"), ("c", "a")}
    assert circle_edges({"a": {"b"}, "b": set()}) == set()
    known = _modules()
    # the profile's run kind loads its analysis by name only: the string counts
    path = PACKAGE / "profile" / "run" / "entry.py"
    assert "mpi_overlap.profile.analysis.profile" in _string_imports(
        "mpi_overlap.profile.run.entry", path, known)


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


# The layers, bottom first (docs/architecture.md draws them). A folder imports folders of
# its own layer or below, never one above: where a lower folder needs what an upper one
# declares, it defines the record and the upper one fills it in or hands it over
# (run/run_kind.py, calibration/table_benchmarks.py, profile/analysis/evidence.py,
# core/documents.py).
# cli.py, on top, is no folder.
LAYERS = (
    ("core",),                   # errors, formatting, files, schemas, paths, processes, ui
    ("platform",),               # toolchains, the native build
    ("run",),                    # launches, run directories, the run guard
    ("calibration",),            # the transfer-time table
    ("analysis",),               # the shared kit of statistics and table rows
    ("report",),                 # the shared kit of pages, tables, figures
    ("profile",),                # the profiler wing
    ("benchmarks",),             # the benchmark packages (some read their runs' profiles)
    ("predict",),                # replays of traced runs
    ("commands", "cluster"),     # what each command does; the emulated cluster's commands
    ("tools",),                  # developer tools, imported by nothing of the product
)


def _layer(folder: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if folder in layer)


def test_every_module_lies_in_a_layer() -> None:
    """No module at the top but cli.py (argument handling) and the package's __init__
    (mpi_overlap.load, __version__); every folder is in one layer."""
    top = {m for m, path in _modules().items()
           if m.count(".") == 1 and not (PACKAGE / m.split(".")[1]).is_dir()}
    assert top == {"mpi_overlap.cli"}
    graph = folder_graph()
    listed = [f for layer in LAYERS for f in layer]
    assert sorted(listed) == sorted(set(listed)) == sorted(graph)


def test_folders_import_down_the_layers() -> None:
    graph = folder_graph()
    up = {(a, b) for a, targets in graph.items() for b in targets if _layer(b) > _layer(a)}
    assert not up, f"imports up the layers (put the code lower, or hand it in): {sorted(up)}"


def test_only_the_cli_is_above_the_commands() -> None:
    """cli.py is imported by nothing; cluster and tools name it only to start it as a child
    process (`python -m mpi_overlap.cli`), which is no import."""
    known = _modules()
    graph = import_graph()
    importers = {m for m in known if "mpi_overlap.cli" in graph[m]}
    assert importers == set()
    named = {m for m, path in known.items()
             if "mpi_overlap.cli" in _string_imports(m, path, known)}
    assert {_folder(m) for m in named} <= {"cluster", "tools"}


_OWN_PACKAGE = {"__package__", "__name__"}


def _seen_dynamic_target(call: ast.Call, enclosing: set[str]) -> bool:
    """Whether the module a call of import_module or lazy_analysis loads is one the folder
    graph sees: a literal "mpi_overlap.x" (or an f-string starting with one), or one
    spelled from the caller's own package (__package__, __name__, a benchmark spec's
    package: no other folder), or a parameter of lazy_analysis or spec.declare (their
    callers are checked: declare's package is its caller's __name__)."""
    arg = call.args[0] if call.args else None
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value.startswith("mpi_overlap.")
    if isinstance(arg, ast.Name):
        return arg.id in _OWN_PACKAGE or arg.id in enclosing
    if isinstance(arg, ast.JoinedStr) and arg.values:
        first = arg.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            if first.value.startswith("mpi_overlap."):
                return True
            relative_to_self = (len(call.args) > 1 and isinstance(call.args[1], ast.Name)
                                and call.args[1].id in _OWN_PACKAGE)
            return first.value.startswith(".") and relative_to_self
        if isinstance(first, ast.FormattedValue):
            value = first.value
            return (isinstance(value, ast.Name) and value.id in _OWN_PACKAGE | enclosing) or (
                isinstance(value, ast.Attribute) and value.attr == "package"
                and isinstance(value.value, ast.Name) and value.value.id == "self")
    return False


def _dynamic_imports(path: Path) -> list[tuple[int, bool]]:
    out = []

    def visit(node: ast.AST, params: set[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = {a.arg for a in node.args.args + node.args.kwonlyargs} \
                if node.name in {"lazy_analysis", "declare"} else params
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else None
            if name in {"import_module", "lazy_analysis", "__import__"}:
                out.append((node.lineno, _seen_dynamic_target(node, params)))
            if name == "declare":
                package = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "package"), None)
                out.append((node.lineno, isinstance(package, ast.Name)
                            and package.id in _OWN_PACKAGE))
        for child in ast.iter_child_nodes(node):
            visit(child, params)

    visit(_tree(path), set())
    return out


def test_every_dynamic_import_is_seen() -> None:
    """A module loaded by name cannot hide an edge between folders: each import_module /
    lazy_analysis names its module in a string the folder graph reads, or loads from its
    own package."""
    found = {f"{m}:{line}": ok for m, path in _modules().items()
             for line, ok in _dynamic_imports(path)}
    assert len(found) >= 5  # discovery, spec, analysis/__init__, the lazy analyses
    assert [where for where, ok in found.items() if not ok] == []
    hidden = ast.parse("import_module(name)\nimport_module(f'{other}.report')").body
    assert not any(_seen_dynamic_target(n.value, set()) for n in hidden)  # type: ignore
