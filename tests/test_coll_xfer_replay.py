"""Collective transfers through the profiler's engine (`mop_replay`): with a calibrated
table (format v2 `coll` series), each collective event gets the xfer_time of its own op
and communicator size, and every fallback is counted (docs/profiler.md, "Transfer-time
table"). All expected numbers are worked out by hand from the table below.

Table (µs): p2p intra 0 B → 1, 1 KiB → 3; bcast on 2 ranks 0 → 2, 1 KiB → 4, 4 KiB → 10;
ibcast on 2 ranks 0 → 5, 4 KiB → 13; allreduce on 4 ranks 0 → 6, 1 KiB → 8; barrier on
2 ranks 0 → 1.5.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain

US = 1e-6
TABLE = """\
table 0 1e-6
table 1024 3e-6
table coll bcast 2 0 2e-6
table coll bcast 2 1024 4e-6
table coll bcast 2 4096 10e-6
table coll ibcast 2 0 5e-6
table coll ibcast 2 4096 13e-6
table coll allreduce 4 0 6e-6
table coll allreduce 4 1024 8e-6
table coll barrier 2 0 1.5e-6
"""

# (events, expected transfers as (fn, kind, bytes, case, xfer µs, min µs, max µs))
EVENTS = """\
enter 0 MPI_Bcast
incall 0 2048 bcast MPI_Bcast 2
exit 1000
enter 2000 MPI_Ibcast
begin 2000 7 1024 ibcast MPI_Ibcast 2
exit 3000
enter 8000 MPI_Wait
end 10000 7 -1
exit 10000
enter 11000 MPI_Allreduce
incall 11000 512 allreduce MPI_Allreduce 2
exit 12000
enter 13000 MPI_Iallreduce
incall 13000 0 iallreduce MPI_Iallreduce 4
exit 14000
enter 15000 MPI_Alltoall
incall 15000 1024 alltoall MPI_Alltoall 2
exit 16000
enter 17000 MPI_Barrier
incall 17000 0 barrier MPI_Barrier 2
exit 18000
pinit 9 4096 ibcast MPI_Bcast_init 2
enter 19000 MPI_Start
start 19000 9
exit 20000
enter 40000 MPI_Wait
end 41000 9 -1
exit 41000
enter 42000 MPI_Bcast
incall 42000 8192 bcast MPI_Bcast 2
exit 43000
finish 50000
"""

EXPECTED = [
    # 2 KiB between 1 KiB (4) and 4 KiB (10): 4 + 6 * 1/3 = 6
    ("MPI_Bcast", "bcast", 2048, "in-call", 6.0, 0.0, 0.0),
    # 5 + 8 * 1/4 = 7; computation 3000 → 8000 ns = 5 µs, MPI time 1 + 2 = 3 µs:
    # max = min(5, 7) = 5, min = 7 - 3 = 4
    ("MPI_Ibcast", "ibcast", 1024, "across-calls", 7.0, 4.0, 5.0),
    # no allreduce series for 2 ranks: the nearest, 4 ranks, 6 + 2 * 1/2 = 7
    ("MPI_Allreduce", "allreduce", 512, "in-call", 7.0, 0.0, 0.0),
    # no iallreduce series at all: allreduce's (4 ranks) at 0 B
    ("MPI_Iallreduce", "iallreduce", 0, "in-call", 6.0, 0.0, 0.0),
    # no alltoall series: p2p intra-node time of 1 KiB
    ("MPI_Alltoall", "alltoall", 1024, "in-call", 3.0, 0.0, 0.0),
    ("MPI_Barrier", "barrier", 0, "in-call", 1.5, 0.0, 0.0),
    # persistent (Bcast_init = ibcast) 4 KiB: 13; computation 20000 → 40000 ns = 20 µs,
    # MPI time 1 + 1 = 2 µs: max = 13, min = 13 - 2 = 11
    ("MPI_Bcast_init", "ibcast", 4096, "across-calls", 13.0, 11.0, 13.0),
    # beyond bcast's last point: last slope 6 µs / 3 KiB, 10 + 4 KiB * that = 18
    ("MPI_Bcast", "bcast", 8192, "in-call", 18.0, 0.0, 0.0),
]


@pytest.fixture(scope="module")
def replay() -> dict[str, Any]:
    exe = ensure_built(get_toolchain("mpich")) / "profiler" / "mop_replay"
    proc = subprocess.run([str(exe)], input=TABLE + EVENTS, capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_each_collective_gets_its_series(replay: dict[str, Any]) -> None:
    got = [(t["fn"], t["kind"], t["bytes"], t["case"], t["xfer_s"] / US, t["min_s"] / US,
            t["max_s"] / US) for t in replay["transfers"]]
    assert len(got) == len(EXPECTED)
    for g, want in zip(got, EXPECTED, strict=True):
        assert g[:4] == want[:4]
        assert g[4:] == pytest.approx(want[4:], abs=1e-9), (g, want)


def test_fallbacks_are_counted(replay: dict[str, Any]) -> None:
    prof = replay["profile"]
    counters = prof["counters"]
    # Allreduce on 2 ranks (nearest: 4) and Iallreduce on 4 (blocking op's series) ...
    assert counters["coll_size_extrapolated"] == 1
    assert counters["coll_nb_as_blocking"] == 1
    assert counters["coll_uncalibrated"] == 1  # Alltoall
    assert counters["table_extrapolated"] == 1  # Bcast of 8 KiB
    assert prof["cases"] == {"in-call": 6, "across-calls": 2, "begin-only": 0, "end-only": 0}
    tot = prof["totals"]
    assert tot["xfer_s"] == pytest.approx(sum(e[4] for e in EXPECTED) * US, rel=1e-12)
    assert tot["min_s"] == pytest.approx(15 * US, rel=1e-12)
    assert tot["max_s"] == pytest.approx(18 * US, rel=1e-12)


def test_the_report_explains_the_collective_counters(replay: dict[str, Any]) -> None:
    from mpi_overlap.profile.analysis.profile import UNATTRIBUTED

    # The engine's new counters are attribution notes with a meaning, not "unknown".
    for name in ("coll_size_extrapolated", "coll_nb_as_blocking", "coll_uncalibrated"):
        assert name in replay["profile"]["counters"]
        assert name in UNATTRIBUTED
