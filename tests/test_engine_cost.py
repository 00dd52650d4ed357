"""`mop_engine_cost`: the profiler's event processing timed without MPI (native/profiler).

The figures are timings, so the tests check what the program reports and that it measured
real processing (every post closed as a transfer, the options taken), never how fast it
was: they must pass on a loaded machine. docs/profiler.md, "Memory and cost", gives the
figures it measured.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain

WINDOW, WINDOWS = 64, 64  # mop_engine_cost.c
TRANSFER_FORMS = ("distinct_handles", "shared_handle")


@pytest.fixture(scope="module")
def engine_cost() -> Path:
    exe = ensure_built(get_toolchain("mpich")) / "profiler" / "mop_engine_cost"
    assert exe.is_file(), f"{exe} was not built"
    return exe


def _run(exe: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120,
                          check=False)


def _doc(exe: Path, *args: str) -> dict[str, Any]:
    proc = _run(exe, *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("batch,callsites", [(4096, 1), (4, 0)])
def test_reports_every_form_from_real_processing(engine_cost: Path, batch: int,
                                                 callsites: int) -> None:
    reps = 3
    doc = _doc(engine_cost, "--batch", str(batch), "--reps", str(reps),
               "--callsites", str(callsites))
    assert (doc["batch"], doc["reps"], doc["callsites"], doc["window"]) == (
        batch, reps, bool(callsites), WINDOW)
    for form in TRANSFER_FORMS:
        ns = doc[form]["ns_per_transfer"]
        assert math.isfinite(ns) and ns > 0, (form, ns)
        # Every post closed as a transfer on every pass: the engine did the work timed.
        assert doc[form]["transfers_counted"] == reps * WINDOWS * WINDOW, form
    calls = doc["calls_only"]
    assert math.isfinite(calls["ns_per_call"]) and calls["ns_per_call"] > 0
    assert calls["transfers_counted"] == 0


@pytest.mark.parametrize("args", [("--batch", "0"), ("--batch", "x"), ("--reps",),
                                  ("--callsites", "2"), ("--nope", "1")])
def test_bad_option_is_one_line_and_exit_2(engine_cost: Path, args: tuple[str, ...]) -> None:
    proc = _run(engine_cost, *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mop_engine_cost: "), proc.stderr
