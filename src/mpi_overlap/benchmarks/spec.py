"""What a benchmark is, declared as data: its native program and run limits (`Benchmark`,
the run layer's record of a kind of run: run/run_kind.py), and, for a benchmark that
lives in its own package under benchmarks/ (`BenchmarkSpec`), its `bench NAME` flags and
how each reaches the program, where its analysis and report are, its summary-card line
and what it gives a profile and the advice rule it feeds (`Evidence`, the profile's
record of it: profile/analysis/evidence.py). The registry, the `bench` subcommands, the
report's reporters, the card, the quantities compared across launches and the profile's
evidence and advice rules are derived from the specs (discovery.py); nothing else names
the benchmark.

The lowest module of benchmarks/: it imports nothing of the package but errors, sizes and
what the layers below define for the benchmarks to fill in (the run kind: `Benchmark`,
`Launch`, `lazy_analysis`; the calibration's roles P2P_TABLE and COLLECTIVE_TABLE; the
profile's `Evidence`), which the packages take from here, so that the CLI, the registry
and the report can all read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import import_module
from typing import Any

from ..calibration.table_benchmarks import COLLECTIVE_TABLE as COLLECTIVE_TABLE
from ..calibration.table_benchmarks import P2P_TABLE as P2P_TABLE
from ..core.errors import UserError
from ..core.sizes import parse_sizes
from ..profile.analysis.evidence import Evidence
from ..run.run_kind import Benchmark, lazy_analysis
from ..run.run_kind import Launch as Launch  # the packages declare their launches here

# ---- flags: `bench NAME --flag VALUE` -> the program's arguments, checked before any build

def count_flag(flag: str, value: int | None, minimum: int) -> list[str]:
    """`[flag, value]` for a count given on the command line (checked); [] when not given."""
    if value is None:
        return []
    if value < minimum:
        raise UserError(f"{flag} must be at least {minimum} (got {value})")
    return [flag, str(value)]


def size_list(flag: str, value: str | None) -> list[str]:
    """`[flag, value]` for a size list given on the command line (checked); []."""
    if value is None:
        return []
    parse_sizes(value)
    return [flag, value]


def choice_list(flag: str, value: str, known: tuple[str, ...], every: str) -> str:
    """A comma-separated list of known names (case-insensitive), checked here."""
    names = [p.strip() for p in value.split(",") if p.strip()]
    lower = {k.lower(): k for k in known}
    bad = [n for n in names if n.lower() not in lower and n != every]
    if not names or bad:
        raise UserError(f"{flag}: unknown value '{(bad or [value])[0]}' "
                        f"(known: {', '.join(known)}, {every})")
    return ",".join(names)


def size_sweep(quick_sizes: str, default_reps: tuple[int | None, int | None] = (None, None),
               ) -> Callable[[dict[str, Any], bool, bool], list[str]]:
    """The arguments of the benchmarks that time a list of sizes with repeated samples
    (--sizes, --reps, --iters): under --quick, `quick_sizes` when no sizes are given;
    `default_reps` samples per point (full, quick) when --reps is not (None: the
    program's default)."""
    def args(values: dict[str, Any], quick: bool, verbose: bool) -> list[str]:
        sizes, reps = values.get("sizes"), values.get("reps")
        out = size_list("--sizes", sizes)
        if sizes is None and quick:
            out += ["--sizes", quick_sizes]
        if quick:
            out.append("--quick")
        out += count_flag("--reps", reps if reps is not None else default_reps[quick], 2)
        out += count_flag("--iters", values.get("iters"), 1)
        return out + (["--verbose"] if verbose else [])
    return args


@dataclass(frozen=True)
class Flag:
    """One flag of `bench NAME` (not --quick, --verbose or the run options every benchmark
    has) and how its value becomes the program's arguments. `kind` is the value's type on
    the command line: "count" (an int, at least `minimum`), "sizes" (a size list),
    "float", "text", "choices" (a comma-separated list of `choices`, or `every`) or
    "switch" (a flag without a value, passed on when given); `native` overrides the
    mapping (it raises UserError on bad input)."""

    name: str  # as typed, e.g. "--max-n"; the program's flag unless `native` says otherwise
    help: str
    kind: str = "count"
    minimum: int = 1
    metavar: str | None = None
    native: Callable[[Any], list[str]] | None = None
    default: Any = None  # shown in --help when set
    short: str | None = None  # e.g. "-t"
    choices: tuple[str, ...] = ()  # kind "choices": the known names
    every: str = "all"  # kind "choices": the name that means all of them

    @property
    def dest(self) -> str:
        """The keyword the command receives the value under (click's naming)."""
        return self.name.lstrip("-").replace("-", "_")

    def to_native(self, value: Any) -> list[str]:
        if value is None or value is False:
            return []
        if self.kind == "switch":
            return [self.name]
        if self.native is not None:
            return self.native(value)
        if self.kind == "count":
            return count_flag(self.name, value, self.minimum)
        if self.kind == "sizes":
            return size_list(self.name, value)
        if self.kind == "choices":
            return [self.name, choice_list(self.name, value, self.choices, self.every)]
        return [self.name, str(value)]


@dataclass(frozen=True)
class CommandParts:
    """What the CLI's commands share, handed to a package that makes its own command
    (BenchmarkSpec.command) so that it need not import the CLI: the option decorators
    (each a click decorator; out_option takes its help text; launches_options below), the
    consoles of stdout and stderr, and the end of a session (commands/session.py's
    finish_session: the report, then each run's status line), so that a package's own
    command need not import the commands above it."""

    mpi_option: Callable[[Any], Any]
    ranks_option: Callable[[Any], Any]
    launcher_option: Callable[[Any], Any]
    out_option: Callable[..., Callable[[Any], Any]]
    seconds: Any  # click's type of a positive number of seconds
    out: Any
    err: Any
    finish: Callable[..., bool]

    def launches_options(self, report_help: str) -> Callable[[Any], Any]:
        """--launcher, --timeout (per launch), --out and --report/--no-report: how a
        command of many launches runs, in that order in --help."""
        import click  # here: spec.py is read by commands that need no CLI

        def apply(f: Any) -> Any:
            f = click.option("--report/--no-report", default=True, help=report_help)(f)
            f = self.out_option("directory for run directories")(f)
            f = click.option("--timeout", type=self.seconds,
                             help="seconds before one launch is stopped")(f)
            return self.launcher_option(f)
        return apply


# ---- the summary card: one line per question, from a run's headline figures

@dataclass(frozen=True)
class CardLine:
    """A benchmark's line on the summary card (report/summary_card.py): its label and its
    place among the card's lines (`order`, ascending). The cell comes from the package's
    report module: `card_cell(figures)`, or `card_from_analysis(analysis)` where figures
    are not enough (None: the run gave no number) and, for the colour, `card_share(analysis)`
    when it has one (the share hidden, in %)."""

    label: str
    order: int


@dataclass(frozen=True)
class BenchmarkSpec:
    """A benchmark that is its C program plus its own package: `benchmark` is its registry
    entry (its `analyze` is filled in from the package's analysis module), `help` the
    `bench NAME` description, `flags` its own flags in the order --help lists them,
    `quick_help`/`verbose_help` what --quick and -v do for it, and `card` its summary-card
    line. Its section of docs/<docs> is the one headed "## <name> —". The package's
    `analysis` module has what the registry entry's `analyze` calls (declare(): its
    `analyze(result)`); where the entry has an analysis, its `report` module has the
    reporter functions (print_run, print_comparison, html_sections, summary, extent,
    to_json). A benchmark of many launches has no program (`program=""`), its own
    `command` and a `step`; one run by another command has a `role` instead."""

    benchmark: Benchmark
    package: str  # the declaring package's import name (its __name__)
    help: str
    flags: tuple[Flag, ...] = ()
    quick_help: str = "fewer, shorter samples"
    verbose_help: str | None = None  # None: no -v
    quick_at: int | None = None  # --help lists --quick before flags[quick_at]; None: after all
    # What a profile takes from the newest run of this benchmark (of the profile's
    # toolchain) and the advice rule it feeds (Evidence); None: nothing.
    evidence: Evidence | None = None
    # Its C file in native/bench/ when not the program's name without mo_ (alignment is
    # datatypes.c built with MO_ALIGNMENT).
    source: str | None = None
    timeout_help: str = "seconds before the run is stopped"
    # The page of docs/ with its section, headed "## <name> —".
    docs: str = "benchmarks.md"
    # The HTML sections, in page order: functions of the report module, or "module.name"
    # for another module of the package.
    sections: tuple[str, ...] = ("html_sections",)
    # (parsed values, quick, verbose) -> the program's arguments, where flags must be
    # checked together (overlap-validation's regions); None: flag by flag.
    args: Callable[[dict[str, Any], bool, bool], list[str]] | None = None
    card: CardLine | None = None
    # Where its command is: "bench" (`bench NAME`, made from the flags above, or by
    # `command`), "" (a command of its own at the top, made by `command`), or None: no
    # command; another command runs it (`calibrate` runs the benchmarks with a `role`).
    command_group: str | None = "bench"
    # "module.function" of the package: function(CommandParts) -> click.Command, for a
    # command of another shape than `bench NAME` (its own launches, an argument); one
    # spec of a package's SPECS declares a command the others share.
    command: str | None = None
    # "module.function" of the package: function(toolchain, CharacterizeOptions, runs
    # directory, ui) -> Run, its step of `characterize` after the suites, labelled
    # `step_label` and ordered by `step_order`; None: none of its own (a suite's runs it).
    step: str | None = None
    step_label: str = ""
    step_order: int = 0
    # What another command takes its results for: P2P_TABLE or COLLECTIVE_TABLE (the
    # calibration runs one of each for the transfer-time table: its point-to-point times
    # and its collectives' series; calibration/table_benchmarks.py).
    role: str | None = None

    @property
    def name(self) -> str:
        return self.benchmark.name

    def module(self, part: str) -> Any:
        """One of the package's modules (`analysis`, `report`, `evidence`, `advice`, ...),
        imported on first use: analysis pulls in numpy and scipy, which
        commands that only list benchmarks do not need."""
        return import_module(f"{self.package}.{part}")

    def section_functions(self) -> list[Callable[..., Any]]:
        """The functions of `sections`, imported."""
        return [self.function(name if "." in name else f"report.{name}")
                for name in self.sections]

    def function(self, name: str) -> Callable[..., Any]:
        """A "module.function" of the package, imported."""
        part, _, function = name.rpartition(".")
        return getattr(self.module(part), function)

    def to_native(self, values: dict[str, Any], *, quick: bool, verbose: bool) -> list[str]:
        """The program's arguments for what `bench NAME` parsed (each flag checked)."""
        if self.args is not None:
            return self.args(values, quick, verbose)
        args: list[str] = []
        for flag in self.flags:
            args += flag.to_native(values.get(flag.dest))
        return args + (["--quick"] if quick else []) + (["--verbose"] if verbose else [])


    def default_native(self, quick: bool) -> list[str]:
        """The program's arguments of `bench NAME [--quick]` with every flag at its
        default: what the suites and `characterize` pass, so that a benchmark measures
        alike whichever command runs it (its quick sizes and repetitions live here, in
        its spec, and nowhere else)."""
        return self.to_native({flag.dest: flag.default for flag in self.flags}, quick=quick,
                              verbose=False)


def declare(benchmark: Benchmark, package: str, *, with_run_dir: bool = False,
            **kwargs: Any) -> BenchmarkSpec:
    """A package's spec, its registry entry's `analyze` taken from its analysis module (on
    first use). `package` is the declaring package's __name__; with_run_dir: the analysis
    also reads the rank profiles in the run directory (analyze(result, run_dir))."""
    analyze = lazy_analysis(f"{package}.analysis", "analyze", with_run_dir=with_run_dir)
    return BenchmarkSpec(benchmark=replace(benchmark, analyze=analyze), package=package,
                         **kwargs)
