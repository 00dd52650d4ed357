"""Known-answer programs for both ends of every message (issue 11; docs/method.md, "Both
ends of a message", "Waiting"): native/tests/known_answer.c on the MPICH wheel and its
Fortran twin native/tests/fortran/f_known_answer.f90 on Debian's Open MPI and MPICH
(skipped where the toolchain or its Fortran is missing), each profiled with --trace on 2
ranks, 10 iterations:

(a) late sender: rank 1 computes 5 ms, then MPI_Send of 4 KiB; rank 0 posts MPI_Recv at
    once. Rank 0 waits about 5 ms per receive (and, under any load, as long as rank 1
    actually computed where both left the barrier together), its transfer time is what
    the table says, and its overlap stays [0, 0]: the wait is not overlap.
(b) early data: rank 1 sends 4 KiB at once (after 0.5 ms); rank 0 computes 5 ms, then
    MPI_Recv. One-sided the receive is [0, 0] (one call); from both ends its lower bound
    is above 0 and no more than what cannot have happened inside the receive. With the
    transfer model's parts (docs/method.md), the data of an eager 4 KiB message had
    arrived before the receive, which holds only o_r: on a quiet run the lower bound is
    at least 50 % of the receives' transfer time, and the late sender's stays 0. An MPI
    that sends 4 KiB by rendezvous (Debian Open MPI 4.1: its eager limit is 4096 bytes
    with the header) is asked again at the largest size its table calls eager.
(c) an idle rank (C only, no trace needed): the findings lead with it.

The programs measure themselves (MPI_Wtime around their own calls, one value per
iteration, in known_answer.rank-N.json); "5 ms within 10 %" is about what the program
did, so a machine too busy to run it that way, or an MPI whose protocol makes the answer
inapplicable (rendezvous at 4 KiB), is reported in a warning with the reason, and only the
relations that hold under any load and protocol are asserted then.
"""

from __future__ import annotations

import json
import statistics
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import disturbed, run_cli
from mpi_overlap.analysis.run_table import used_table
from mpi_overlap.core.errors import UserError
from mpi_overlap.platform.build import FORTRAN_STATUS, build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain, list_toolchains
from mpi_overlap.profile.analysis.twosided import Clocks, Refined, Refinement, eager_parts, refine
from mpi_overlap.profile.analysis.waits import Wait, call_waits
from mpi_overlap.profile.trace.convert import read_run
from mpi_overlap.profile.trace.match import match_messages
from mpi_overlap.profile.trace.timeline import rank_timeline
from mpi_overlap.run.run_guard import DISTURBED
from mpi_overlap.run.rundir import Run, load_run

pytestmark = pytest.mark.mpi

ITERS = 10
WAIT_S = 5e-3
TOL = 0.10  # the "within 10 %"
SLACK = 1e-6  # seconds: the program's MPI_Wtime brackets hold the profiler's


@dataclass(frozen=True)
class Program:
    toolchain: str
    path: str  # under the build directory
    fortran: bool


PROGRAMS = [
    Program("mpich", "tests/known_answer", False),
    Program("system-mpi", "tests/fortran/f_known_answer", True),
    Program("debian-mpich", "tests/fortran/f_known_answer", True),
]


def _executable(p: Program) -> Path:
    if p.toolchain not in {tc.name for tc in list_toolchains()}:
        pytest.skip(f"toolchain '{p.toolchain}' not registered (make toolchains registers it "
                    "where Debian's MPI packages and gfortran are installed)")
    try:
        tc = get_toolchain(p.toolchain)
    except UserError as err:
        pytest.skip(str(err))
    ensure_built(tc)
    bdir = build_dir_for(tc)
    if p.fortran:
        status = (bdir / FORTRAN_STATUS).read_text().strip()
        if not status.startswith("enabled"):
            pytest.skip(f"no Fortran in the {p.toolchain} build: {status}")
    exe = bdir / p.path
    assert exe.is_file(), f"{exe} was not built"
    return exe


@dataclass
class KnownRun:
    run: Run
    measured: dict[int, dict[str, Any]]  # rank -> the program's own JSON line
    refinement: Refinement
    waits: list[Wait]
    clocks: Clocks


_RUNS: dict[tuple[str, str, str, int | None], KnownRun] = {}


def _known(tmp_path_factory: pytest.TempPathFactory, p: Program, mode: str,
           trace: bool = True, nbytes: int | None = None) -> KnownRun:
    """The program's run in `mode` (its message `nbytes`, the program's 4 KiB when None),
    profiled once per test session."""
    key = (p.toolchain, p.path, mode, nbytes)
    if key in _RUNS:
        return _RUNS[key]
    exe = _executable(p)
    base = tmp_path_factory.mktemp(f"ka-{mode}-{p.toolchain}")
    args = ["profile", "--mpi", p.toolchain, "-n", "2", "--no-report", "--out",
            str(base / "runs")] + (["--trace"] if trace else [])
    size = [] if nbytes is None else [str(nbytes)]
    proc = run_cli(*args, "--", str(exe), mode, str(ITERS), *size, timeout=600, cwd=base)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    runs = sorted(d for d in (base / "runs").iterdir() if (d / "run.json").is_file())
    run = load_run(runs[-1])
    measured = {r: json.loads((base / f"known_answer.rank-{r}.json").read_text())
                for r in (0, 1)}
    if trace:
        timelines = [rank_timeline(t) for t in read_run(run.path)]
        matched = match_messages(timelines)
        clocks = Clocks(timelines)
        ref = refine(clocks, matched.pairs, None, keep=True,
                     parts=eager_parts(used_table(run.analysis)))
        waits, _ = call_waits(clocks, matched)
    else:
        clocks, ref, waits = None, Refinement(), []  # type: ignore[assignment]
    _RUNS[key] = KnownRun(run, measured, ref, waits, clocks)
    return _RUNS[key]


def _params(fortran: bool | None = None) -> list:
    return [pytest.param(p, id=f"{'fortran' if p.fortran else 'c'}-{p.toolchain}")
            for p in PROGRAMS if fortran is None or p.fortran == fortran]


def _receives(k: KnownRun):
    """Rank 0's receives as refined from both ends, in posting order."""
    recs = [r for r in k.refinement.records or [] if r.message.rank == 0 and not r.sender]
    return sorted(recs, key=lambda r: r.message.t_post)


def _parts(k: KnownRun, r: Refined) -> tuple[float, float] | None:
    """(o_s, o_r) of a refined message by the run's table, None without parts or eager."""
    lookup = eager_parts(used_table(k.run.analysis))
    return lookup(r.message.bytes, r.xfer_s) if lookup else None


def _flag(reasons: list[str], what: str) -> None:
    """The stated answer does not apply to this run, for `reasons` (a busy machine, the
    MPI's protocol): said as a warning; the caller checks what holds regardless."""
    warnings.warn(f"{what}: the known answer does not apply to this run "
                  f"({'; '.join(reasons)}); only the relations that hold under any load and "
                  "protocol were checked", stacklevel=2)


@pytest.mark.parametrize("program", _params())
def test_late_sender_waits_about_5_ms_and_inflates_nothing(tmp_path_factory, program):
    k = _known(tmp_path_factory, program, "late-sender")
    recv = k.measured[0]["recv_s"]
    comp = k.measured[1]["compute_s"]
    assert len(recv) == len(comp) == ITERS
    found = [w for w in k.waits if w.rank == 0 and w.fn == "MPI_Recv"]
    assert all(w.pattern == "late_sender" for w in found)
    by_call = {w.enter_s: w.seconds for w in found}
    recs = _receives(k)
    assert len(recs) == ITERS
    # Each receive's wait (0 when rank 1 happened to post first) lies inside its MPI_Recv,
    # which the program's own brackets hold.
    waits = []
    for rec, measured in zip(recs, recv, strict=True):
        assert rec.message.done_enter is not None
        waits.append(by_call.pop(k.clocks.s(0, rec.message.done_enter), 0.0))
        assert 0 <= waits[-1] <= measured + SLACK, (waits[-1], measured)
    assert not by_call  # every wait belongs to one of the receives
    median_wait = statistics.median(waits)
    reasons = []
    if statistics.median(comp) > WAIT_S * (1 + TOL):
        reasons.append(f"rank 1's 5 ms of computation took {statistics.median(comp) * 1e3:.2f}"
                       " ms (median)")
    if abs(statistics.median(recv) - WAIT_S) > TOL * WAIT_S:
        reasons.append(f"rank 0's MPI_Recv took {statistics.median(recv) * 1e3:.2f} ms "
                       "(median)")
    if reasons:
        _flag(reasons, "late sender")
    else:
        assert abs(median_wait - WAIT_S) <= TOL * WAIT_S, (median_wait, recv, comp)
    # Under any load: where rank 1 computed its 5 ms undisturbed and rank 0's MPI_Recv
    # lasted as long (both left the barrier together), the wait found is that computation.
    # A stretched computation is left out: beside two busy loops (time slices of ~4 ms) one
    # launch (2026-12-04) had rank 1's 5 ms take 8, rank 0's MPI_Recv 8 ms and the wait 4,
    # as when rank 0 enters MPI_Recv 4 ms late and is descheduled 4 ms after the message
    # came: MPI_Recv then lasts as long as the computation without waiting all of it.
    synced = [i for i in range(ITERS) if abs(comp[i] - WAIT_S) <= TOL * WAIT_S
              and abs(recv[i] - comp[i]) <= TOL * comp[i]]
    if synced:
        errors = [abs(waits[i] - comp[i]) / comp[i] for i in synced]
        assert statistics.median(errors) <= TOL, [(waits[i], comp[i], recv[i]) for i in synced]
    # The transfers: both ends matched, each receive's transfer time the table's, and,
    # where it waited, its overlap [0, 0] from both ends: the wait sat inside MPI_Recv.
    # (Where a busy machine delayed rank 0 past rank 1's send, the data may have moved
    # while rank 0 still computed: then only the bounds' order is checked.)
    for r, w in zip(recs, waits, strict=True):
        assert r.xfer_s > 0 and r.one.lo == 0 and r.one.hi == 0
        if w > 0:
            assert r.two.lo == 0 and r.two.hi == 0, (r, w)
        else:
            assert 0 <= r.two.lo <= r.two.hi <= r.xfer_s
    a = k.run.analysis
    ts = a["two_sided"]
    rank0 = next(r for r in a["ranks"] if r["rank"] == 0)
    rank0_two = next(r for r in ts["ranks"] if r["rank"] == 0)
    assert rank0_two["xfer_s"] == rank0["xfer_s"]
    if all(w > 0 for w in waits):
        assert rank0_two["max_s"] == 0
    w0 = next(r for r in ts["waiting"]["ranks"] if r["rank"] == 0)
    assert w0["late_sender_s"] == pytest.approx(sum(waits), rel=1e-9)
    assert w0["late_sender_s"] <= rank0["call_s"] * (1 + 1e-6)


def _early_data_arrived(k: KnownRun, recs: list[Refined]) -> None:
    """The model's answer where the message moves eagerly by the table's parts: the data
    had arrived before the receive, which holds only o_r; a quiet run proves at least
    half of the receives' transfer time overlapped (docs/method.md)."""
    assert _parts(k, recs[0]) is not None, "the table's parts call this size eager"
    early = [r for r in recs if r.window[0] < k.clocks.s(0, r.message.t_post)]
    arrived = [r for r in early if r.window[1] <= k.clocks.s(0, r.message.t_post)]
    share = sum(r.two.lo for r in recs) / sum(r.xfer_s for r in recs)
    if disturbed(k.run):
        _flag([f"the run was disturbed (lower bound {100 * share:.0f} % of the transfer "
               f"time at {recs[0].message.bytes} B, {len(arrived)} of {ITERS} receives "
               "after their data arrived)"], "early data")
    else:
        assert len(arrived) >= ITERS // 2, (len(arrived), [r.window for r in recs])
        # What the parts leave to prove when every receive's data had arrived: all but
        # o_r. At 4 KiB that is 90 % (the issue asks 50 %); at Open MPI's smallest eager
        # sizes the receive's own copy is most of a 0.2 µs transfer, and half of what
        # is left is asked instead.
        expected = sum(max(0.0, r.xfer_s - (_parts(k, r) or (0.0, r.xfer_s))[1])
                       for r in recs) / sum(r.xfer_s for r in recs)
        wanted = 0.5 if expected >= 0.75 else expected / 2
        assert share >= wanted, (share, expected, [(r.two, r.xfer_s) for r in recs])
    assert k.run.analysis["two_sided"]["receivers_arrived"] >= len(arrived)


@pytest.mark.parametrize("program", _params())
def test_early_data_has_a_two_sided_lower_bound(tmp_path_factory, program):
    k = _known(tmp_path_factory, program, "early-data")
    recv = k.measured[0]["recv_s"]
    recs = _receives(k)
    assert len(recs) == ITERS
    early = []  # iterations whose send was posted before the receive, as the program means
    for r, measured in zip(recs, recv, strict=True):
        m = r.message
        assert m.done_enter is not None and m.t_done is not None
        in_call = k.clocks.s(0, m.t_done) - k.clocks.s(0, m.done_enter)
        assert in_call <= measured + SLACK  # the program's brackets hold the profiler's
        # one-sided: inside one call, nothing provable
        assert r.one.lo == 0 and r.one.hi == 0
        assert 0 <= r.two.lo <= r.two.hi <= r.xfer_s
        # what may have moved inside MPI_Recv is never counted as overlap: all of it may
        # have, unless the model's parts show the data had arrived (then only o_r did)
        parts = _parts(k, r)
        inside = parts[1] if parts and r.window[1] <= k.clocks.s(0, m.t_post) else in_call
        assert r.two.lo <= max(0.0, r.xfer_s - inside) + 1e-12, (r, in_call, parts)
        # the window reaches back to rank 1's post, into rank 0's computation (unless a
        # busy machine delayed rank 1 past rank 0's 5 ms: then it was a late sender)
        if r.window[0] < k.clocks.s(0, m.t_post):
            early.append((r, in_call))
    lower = sum(r.two.lo for r in recs)
    # Where MPI_Recv (as the profiler timed it: the program's MPI_Wtime brackets add the
    # binding's and the timer's cost) took less than the transfer time, part of the
    # transfer must have happened before it, while rank 0 computed.
    provable = [r for r, in_call in early if in_call < r.xfer_s]
    send = k.measured[1]["send_s"]
    if statistics.median(send) > 1e-3:
        # This MPI sends 4 KiB by rendezvous: MPI_Send waited for the receive (a late
        # receiver), so no data moved before MPI_Recv and 0 is the right lower bound.
        w1 = next(r for r in k.run.analysis["two_sided"]["waiting"]["ranks"] if r["rank"] == 1)
        assert w1["late_receiver_s"] > 0
        # The question is then asked at the largest size the table says it sends eagerly
        table = used_table(k.run.analysis)
        limit = table.eager_limits.get("intra") if table else None
        if limit is None or limit >= 4096:
            _flag([f"rank 1's MPI_Send took {statistics.median(send) * 1e3:.2f} ms (median): "
                   "this MPI sends 4 KiB by rendezvous, so the data could not move before "
                   "MPI_Recv; the analysis shows it as late-receiver waiting "
                   f"({w1['late_receiver_s'] * 1e3:.2f} ms on rank 1), and the table has "
                   "no eager size below 4 KiB to ask at"], "early data")
        else:
            eager = _known(tmp_path_factory, program, "early-data", nbytes=limit)
            assert statistics.median(eager.measured[1]["send_s"]) < 1e-3  # it returned
            _early_data_arrived(eager, _receives(eager))
    elif _parts(k, recs[0]) is not None:
        _early_data_arrived(k, recs)
    elif not provable:
        _flag([f"of {ITERS} iterations {len(early)} had the send posted before the "
               "receive, and in none of them did MPI_Recv take less than the transfer "
               f"time ({recs[0].xfer_s * 1e6:.2f} µs; program's median "
               f"{statistics.median(recv) * 1e6:.2f} µs), and the table has no parts that "
               "say whether its data had arrived: the data may have moved inside it"],
              "early data")
    else:
        assert sum(r.two.lo for r in provable) > 0, [(r.two, r.xfer_s) for r in provable]
    # the analysis reports it: MPI_Recv's overlap is 0 from one end, above 0 from both
    a = k.run.analysis
    one = next(e for e in a["rankings"]["functions"] if e["fn"] == "MPI_Recv")
    two = a["two_sided"]["tables"]["functions"]["MPI_Recv"]
    assert one["min_s"] == 0 and one["max_s"] == 0
    assert two["min_s"] == pytest.approx(lower, rel=1e-6, abs=1e-15)


@pytest.mark.parametrize("program", _params(fortran=False))
def test_an_idle_rank_leads_the_headline(tmp_path_factory, program):
    k = _known(tmp_path_factory, program, "idle", trace=False)
    a = k.run.analysis
    assert a["headline"]["kind"] == "idle-rank"
    assert [i["rank"] for i in a["headline"]["idle_ranks"]] == [1]
    # a disturbed run's first finding carries the guard's mark before it (run_guard.py)
    first = a["findings"][0]
    if disturbed(k.run):
        assert first.startswith(f"{DISTURBED}: "), first
        first = first[len(DISTURBED) + 2:]
    assert first.startswith("Rank 1 is idle: ")
    assert "MPI_Barrier" in first
