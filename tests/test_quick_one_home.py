"""`--quick` has one home (issue 37 item 4): a benchmark's quick sizes and repetitions live
in its spec, and `bench NAME --quick`, the suites and `characterize --quick` (which runs
the suites' run_benchmarks) hand its program the same arguments; without --quick, the
same too. No MPI: the bench command's session is replaced by one that records its
arguments."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

import mpi_overlap.commands.session as session
from mpi_overlap.benchmarks.discovery import spec_of, specs
from mpi_overlap.cli import app
from mpi_overlap.commands.suite import native_args, suite_benchmarks

SUITE_BENCHMARKS = sorted({b.name for suite in ("overlap", "overhead")
                           for b in suite_benchmarks(suite)})


def _bench_command_args(monkeypatch: pytest.MonkeyPatch, name: str, *flags: str) -> list[str]:
    """What `mpi-overlap bench NAME FLAGS` hands its session as the program's arguments."""
    seen: list[list[str]] = []

    def record(bench: str, native: list[str], *args: Any, **kwargs: Any) -> bool:
        assert bench == name
        seen.append(list(native))
        return True

    monkeypatch.setattr(session, "bench_session", record)
    result = CliRunner().invoke(app, ["bench", name, *flags])
    assert result.exit_code == 0, result.output
    (native,) = seen
    return native


def test_every_suite_benchmark_is_a_package_with_its_own_bench_command() -> None:
    assert SUITE_BENCHMARKS
    for name in SUITE_BENCHMARKS:
        spec = spec_of(name)
        assert spec is not None and spec.command_group == "bench" and not spec.command, name


@pytest.mark.parametrize("name", SUITE_BENCHMARKS)
@pytest.mark.parametrize("quick", [True, False], ids=["quick", "full"])
def test_the_suites_pass_what_the_bench_command_passes(monkeypatch: pytest.MonkeyPatch,
                                                         name: str, quick: bool) -> None:
    bench = next(b for s in ("overlap", "overhead") for b in suite_benchmarks(s)
                 if b.name == name)
    cli = _bench_command_args(monkeypatch, name, *(["--quick"] if quick else []))
    assert native_args(bench, quick) == cli
    assert ("--quick" in cli) is quick


def test_quick_sizes_are_declared_once() -> None:
    """The benchmarks whose quick run differs from their program's own --quick say so in
    their spec only: the suites now run those sizes too (stack-floor: 9 sizes with 8
    repetitions, not the program's 0:4M with 4)."""
    stack = spec_of("stack-floor")
    assert stack is not None
    args = stack.default_native(True)
    assert args[args.index("--sizes") + 1] == "0,64,1k,4k,16k,64k,256k,1M,4M"
    assert args[args.index("--reps") + 1] == "8"
    # every spec's arguments can be made without a command line (no flag needs a value)
    for spec in specs():
        if spec.command_group == "bench" and not spec.command:
            assert isinstance(spec.default_native(True), list), spec.name
