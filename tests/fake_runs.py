"""Run directories made by hand for tests of what reads them (a valid run.json, the
result and analysis the test gives)."""

from __future__ import annotations

import json
from pathlib import Path

from mpi_overlap.platform.toolchains import Toolchain
from mpi_overlap.run.runner import RunOptions, initial_run_meta


def run_dir(tmp_path: Path, benchmark: str, result: dict, analysis: dict | None = None
             ) -> Path:
    d = tmp_path / benchmark
    d.mkdir()
    tc = Toolchain(name="mpich", kind="wheel", flavor="mpich", mpicc="/x/mpicc",
                   mpiexec="/x/mpiexec")
    meta = initial_run_meta(benchmark, tc, RunOptions(ranks=2), [], d)
    meta.update(status="complete", finished_utc=meta["started_utc"], elapsed_s=1.0,
                returncode=0)
    (d / "run.json").write_text(json.dumps(meta))
    (d / "result.json").write_text(json.dumps(result))
    if analysis is not None:
        (d / "analysis.json").write_text(json.dumps(analysis))
    return d
