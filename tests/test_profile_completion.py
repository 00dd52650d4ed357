"""Every point-to-point completion path, profiled end to end: `mpi-overlap profile -n 2`
on native/tests/coverage_p2p.c, checked against counts worked out by hand from that file.

Each path runs in its own region, REPS times, identically on both ranks (each sends to
and receives from the other), so the expectations below are per rank and repetition:

- transfers per region and per posting function, and their cases: non-blocking paths
  compute 5 ms between post and completion, far longer than a 64 KiB transfer, so their
  max overlap equals their transfer time; blocking ones (first case) have max 0;
- exactly the counters the paths must raise (MPI_PROC_NULL, cancelled, freed while
  active, inactive persistent completion, generalized-request completions) and 0 in
  every other one: nothing unattributed but the one freed send (begin-only) and the one
  receive posted behind the profiler's back (end-only);
- the received size of an MPI_ANY_SOURCE/MPI_ANY_TAG receive with its status ignored
  (1000 bytes into a 4000-byte buffer) and zero-byte messages, by size bin;
- a Waitall that returns MPI_ERR_IN_STATUS (errors returned, a truncated receive) still
  records the requests it completed.

MPI-4 paths (Isendrecv, partitioned) exist in the three wheels' headers; the large-count
(_c) forms and MPI-4.1's Request_get_status_all/any/some only in MPICH 5 and Intel MPI
2021.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_cli
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.profile.analysis.profile import BOOKKEEPING as PROFILE_BOOKKEEPING
from mpi_overlap.run.rundir import load_run
from toolchain_params import toolchain_params

pytestmark = pytest.mark.mpi

REPS = 2
NBYTES = 65536  # coverage_p2p's default message size

ACROSS, IN_CALL, BEGIN_ONLY, END_ONLY = "across-calls", "in-call", "begin-only", "end-only"
PAIR = {"MPI_Isend": 1, "MPI_Irecv": 1}

# region -> ({posting function: transfers}, {case: transfers}) per rank and repetition.
REGIONS: dict[str, tuple[dict[str, int], dict[str, int]]] = {
    "wait": (PAIR, {ACROSS: 2}),
    "test": (PAIR, {ACROSS: 2}),
    "waitany": (PAIR, {ACROSS: 2}),
    "testany": (PAIR, {ACROSS: 2}),
    "waitsome": (PAIR, {ACROSS: 2}),
    "testsome": (PAIR, {ACROSS: 2}),
    "waitall": (PAIR, {ACROSS: 2}),
    "testall": (PAIR, {ACROSS: 2}),
    "any_source": (PAIR, {ACROSS: 2}),
    # Start/Wait and Startall/Waitall of a Send_init + Recv_init pair
    "persistent": ({"MPI_Send_init": 2, "MPI_Recv_init": 2}, {ACROSS: 4}),
    "partitioned": ({"MPI_Psend_init": 2, "MPI_Precv_init": 2}, {ACROSS: 4}),
    # an Isend freed while active, received by a blocking Recv
    "free_active": ({"MPI_Isend": 1, "MPI_Recv": 1}, {BEGIN_ONLY: 1, IN_CALL: 1}),
    "cancel": ({}, {}),
    "proc_null": ({}, {}),
    # MPI_ERRORS_RETURN, a 616-byte message into 600 bytes: Waitall returns
    # MPI_ERR_IN_STATUS, the receive completed in error, the send completed (or is waited)
    "err_in_status": (PAIR, {ACROSS: 2}),
    # Isend/Irecv of 0 bytes, then a blocking Send and Recv of 0 bytes
    "zero_bytes": ({**PAIR, "MPI_Send": 1, "MPI_Recv": 1}, {ACROSS: 2, IN_CALL: 2}),
    "sendrecv": ({"MPI_Sendrecv": 2, "MPI_Sendrecv_replace": 2}, {IN_CALL: 4}),
    # one request, two transfers each
    "isendrecv": ({"MPI_Isendrecv": 2, "MPI_Isendrecv_replace": 2}, {ACROSS: 4}),
    # two Isends, Mprobe + Mrecv of the first, Improbe + Imrecv of the second
    "mprobe": ({"MPI_Isend": 2, "MPI_Mrecv": 1, "MPI_Imrecv": 1}, {ACROSS: 3, IN_CALL: 1}),
    # the same with the large-count forms, and Isendrecv_c, Isendrecv_replace_c
    "large_count": ({"MPI_Isend": 2, "MPI_Mrecv_c": 1, "MPI_Imrecv_c": 1, "MPI_Isendrecv_c": 2,
                     "MPI_Isendrecv_replace_c": 2}, {ACROSS: 7, IN_CALL: 1}),
    "grequest": ({}, {}),
    # PMPI_Irecv (unseen) completed by MPI_Wait, and the blocking Send it receives
    "nonwrapped": ({"MPI_Wait": 1, "MPI_Send": 1}, {END_ONLY: 1, IN_CALL: 1}),
    "get_status": (PAIR, {ACROSS: 2}),
    "get_status_all": (PAIR, {ACROSS: 2}),
}
RAN = {
    "mpich": set(REGIONS),
    "intel": set(REGIONS),
    # Open MPI 5 declares neither the MPI-4.1 functions nor the large-count forms
    "openmpi": set(REGIONS) - {"get_status_all", "large_count"},
}

# Counters per rank and repetition; every other counter must be 0.
COUNTERS = {
    # Isend + Irecv, Send + Recv, Sendrecv (2), Mprobe/Mrecv and Improbe/Imrecv of
    # MPI_MESSAGE_NO_PROC, Isendrecv (2)
    "proc_null": 2 + 2 + 2 + 1 + 1 + 2,
    "cancelled": 2,  # a never-matched receive completed by Wait, another by Test
    "freed_active": 1,
    "inactive_completions": 1,  # Wait on the persistent receive after its Waitall
    "grequest_completions": 2,  # through Wait, through Test
}
# Open MPI returns one static completed request for Isend and Irecv to MPI_PROC_NULL:
# the second is a shared handle. MPICH and Intel MPI return distinct ones.
HANDLE_SHARED = {"openmpi": 1}
# The analysis's bookkeeping counters, and table_extrapolated, which these tests do
# not count as a problem.
BOOKKEEPING = set(PROFILE_BOOKKEEPING) | {"table_extrapolated"}
# In-call transfers longer than their call depend on this run's timing against the table
# (a blocking eager send may return before its data has arrived, a receive find its data
# there already): counted, not predictable. Across calls, 5 ms of computation leaves room.
TIMING_NOTES = {"xfer_exceeds_call"}

# Calls of functions that post no transfer, per rank and repetition (Request_free: 2 in
# persistent, 2 in partitioned, 1 in free_active; Mprobe: mprobe and proc_null, and one
# more in large_count).
CALLS = {"MPI_Pready": 4, "MPI_Pready_list": 1, "MPI_Pready_range": 1, "MPI_Mprobe": 2,
         "MPI_Grequest_start": 2, "MPI_Grequest_complete": 2, "MPI_Request_free": 5,
         "MPI_Cancel": 2}
# ... and at least (loops that spin until a message is there): Improbe in mprobe, once in
# proc_null.
CALLS_AT_LEAST = {"MPI_Improbe": 2, "MPI_Parrived": 1}


def _run(tmp: Path, toolchain: str, idle: str | None = None) -> tuple[Any, Path]:
    tc = get_toolchain(toolchain)
    ensure_built(tc)
    app = build_dir_for(tc) / "tests" / "coverage_p2p"
    out = tmp / "runs"
    proc = run_cli("profile", "--mpi", toolchain, "-n", "2", "--out", str(out), "--",
                   str(app), str(NBYTES), str(REPS), timeout=600, cwd=tmp,
                   env=None if idle is None else {"MPI_OVERLAP_IDLE": idle})
    assert proc.returncode == 0, proc.stderr
    runs = sorted(p for p in out.iterdir() if (p / "run.json").is_file())
    return load_run(runs[-1]), runs[-1]


# Every path by default and with the queue processed while calls wait (MPI_OVERLAP_IDLE=1,
# off by default), whose Test forms stand for the waits: that is how the MPICH 5 cases in
# mop_idle.h were found, so the opt-in path stays covered.
@pytest.fixture(scope="module", params=[
    pytest.param((tc.values[0], idle), marks=tc.marks, id=f"{tc.id}{'-idle' if idle else ''}")
    for tc in toolchain_params(systems=False) for idle in (None, "1")])
def profiled(request, tmp_path_factory) -> tuple[str, Any, Path]:
    toolchain, idle = request.param
    run, run_dir = _run(tmp_path_factory.mktemp(f"cov-{toolchain}"), toolchain, idle)
    return toolchain, run, run_dir


def _ranks(run) -> list[dict[str, Any]]:
    ranks = sorted(run.result["ranks"], key=lambda d: d["rank"])
    assert [d["rank"] for d in ranks] == [0, 1]
    assert all(d["status"] == "complete" for d in ranks)
    return [d["profile"] for d in ranks]


def _expected(toolchain: str) -> tuple[dict[str, dict[str, int]], dict[str, int], dict[str, int]]:
    """Transfers per region and case, per function and per case, for one rank."""
    by_region: dict[str, dict[str, int]] = {}
    by_fn: dict[str, int] = {}
    by_case = dict.fromkeys((IN_CALL, ACROSS, BEGIN_ONLY, END_ONLY), 0)
    for region in RAN[toolchain]:
        fns, cases = REGIONS[region]
        by_region[region] = {c: REPS * n for c, n in cases.items()}
        for fn, n in fns.items():
            by_fn[fn] = by_fn.get(fn, 0) + REPS * n
        for c, n in cases.items():
            by_case[c] += REPS * n
    return by_region, by_fn, by_case


def test_transfers_per_region_function_and_case(profiled):
    toolchain, run, _ = profiled
    by_region, by_fn, by_case = _expected(toolchain)
    for p in _ranks(run):
        regions = {r["region"]: r for r in p["by_region"]}
        assert set(regions) - {"(no region)"} == RAN[toolchain]
        assert regions.get("(no region)", {"transfers": 0})["transfers"] == 0
        for name, cases in by_region.items():
            assert regions[name]["transfers"] == sum(cases.values()), name
        fns = {f["fn"]: f["transfers"] for f in p["by_function"] if f["transfers"]}
        assert fns == by_fn
        assert p["cases"] == by_case
        assert p["totals"]["transfers"] == sum(by_fn.values())


def test_counters_exact_and_nothing_else_unattributed(profiled):
    toolchain, run, run_dir = profiled
    want = {name: REPS * n for name, n in COUNTERS.items()}
    want["handle_shared"] = REPS * HANDLE_SHARED.get(toolchain, 0)
    for p in _ranks(run):
        got = {k: v for k, v in p["counters"].items()
               if k not in BOOKKEEPING | TIMING_NOTES and v}
        assert got == {k: v for k, v in want.items() if v}
    # the report: only the freed send and the unseen receive are not attributed precisely
    analysis = json.loads((run_dir / "analysis.json").read_text())
    unattributed = {n["name"]: n["count"] for n in analysis["unattributed"]
                    if n["name"] not in TIMING_NOTES}
    assert unattributed == {BEGIN_ONLY: 2 * REPS, END_ONLY: 2 * REPS, "freed_active": 2 * REPS}


def test_non_blocking_transfers_fully_overlappable_blocking_not(profiled):
    toolchain, run, _ = profiled
    by_region, _, _ = _expected(toolchain)
    in_call_fns = {"MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Mrecv",
                   "MPI_Mrecv_c"}
    for p in _ranks(run):
        regions = {r["region"]: r for r in p["by_region"]}
        for name, cases in by_region.items():
            r = regions[name]
            assert 0 <= r["min_s"] <= r["max_s"] <= r["xfer_s"] * (1 + 1e-9), name
            if cases and set(cases) == {ACROSS}:
                # 5 ms of computation between post and completion >> the transfer
                assert r["xfer_s"] > 0 and r["max_s"] == pytest.approx(r["xfer_s"], rel=1e-9), name
        assert regions["sendrecv"]["max_s"] == 0
        for f in p["by_function"]:
            if f["fn"] == "MPI_Send":
                # an eager send's tail runs after its return and overlaps exactly the
                # computation it meets (docs/method.md, "The transfer model's parts"):
                # min = max, 0 where the table has no parts or the size is rendezvous
                assert f["min_s"] == pytest.approx(f["max_s"], rel=1e-9, abs=1e-15)
                assert f["max_s"] <= f["xfer_s"] * (1 + 1e-9), f["fn"]
            elif f["fn"] in in_call_fns:
                assert f["max_s"] == 0 and f["min_s"] == 0, f["fn"]
            elif f["transfers"]:  # across calls, or one event known: max = transfer time
                assert f["max_s"] == pytest.approx(f["xfer_s"], rel=1e-9), f["fn"]


def test_received_sizes_by_bin(profiled):
    toolchain, run, _ = profiled
    _, by_fn, _ = _expected(toolchain)
    for p in _ranks(run):
        bins = {b["lo"]: b["transfers"] for b in p["by_bin"]}
        # zero_bytes: Isend, Irecv, Send, Recv of 0 bytes; [512, 1024): any_source's
        # 1000-byte send and its receive into 4000 bytes, its status ignored, and
        # err_in_status's 616-byte send and its receive truncated to 600 bytes
        assert bins == {0: 4 * REPS, 512: 4 * REPS,
                        NBYTES: sum(by_fn.values()) - 8 * REPS}


def test_call_only_functions(profiled):
    toolchain, run, _ = profiled
    calls = dict(CALLS)
    calls["MPI_Mprobe"] += "large_count" in RAN[toolchain]
    for p in _ranks(run):
        fns = {f["fn"]: f for f in p["by_function"]}
        for name, n in calls.items():
            assert (fns[name]["calls"], fns[name]["transfers"]) == (REPS * n, 0), name
        for name, n in CALLS_AT_LEAST.items():
            assert fns[name]["calls"] >= REPS * n and fns[name]["transfers"] == 0, name
