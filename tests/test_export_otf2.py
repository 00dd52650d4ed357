"""`mpi-overlap export otf2` (issue 38, item 1): a traced mo_halo run on 2 ranks (every
exchange mode: blocking Sendrecv, Isend/Irecv + Waitall and Testall, collectives on two
communicators, user regions, a Pcontrol(0) stretch) exported, then read back with the
`otf2` package's reader and with `otf2-print`, and checked against the trace and the
profile:

- a location per rank (in a location group per rank, under its host's system tree node);
- as many send and receive records as the profile's matched transfers, and per message
  stream (sender, receiver, communicator, tag) the same sizes at both ends;
- every collective as many times as the trace has it, on every rank;
- ENTER/LEAVE nested, time never going back, every MPI record inside an MPI call, the
  user's regions entered as often as the trace begins them;
- the accumulated metrics ending at the profile's per-rank transfer time, bounds,
  non-overlapped time and waiting;
- bad input: one line, non-zero exit.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from cli_helpers import one_line_error, run_cli
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.profile.trace.convert import read_run
from mpi_overlap.profile.trace.reader import EV_REGION_BEGIN
from mpi_overlap.profile.trace.timeline import rank_timeline
from mpi_overlap.run.rundir import load_run

otf2 = pytest.importorskip("otf2", reason="the otf2 package (pyproject.toml) is not installed")

pytestmark = pytest.mark.mpi

SENDS = ("MpiSend", "MpiIsend")
RECVS = ("MpiRecv", "MpiIrecv")
METRICS = ("xfer_s", "min_s", "max_s", "nonoverlap_s")  # then waiting


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """(run directory, archive directory, seconds the export took)."""
    base = tmp_path_factory.mktemp("otf2")
    tc = get_toolchain("mpich")
    ensure_built(tc)
    halo = build_dir_for(tc) / "bench" / "mo_halo"
    proc = run_cli("profile", "--mpi", "mpich", "-n", "2", "--trace", "--no-report", "--out",
                   str(base / "runs"), "--", str(halo), "--iterations", "20", "--grid", "48",
                   "--quick", timeout=600, cwd=base)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run = next(p for p in (base / "runs").iterdir() if (p / "run.json").is_file())
    assert f"mpi-overlap export otf2 {run}" in proc.stdout  # profile --trace says how
    out = base / "archive"
    t0 = time.perf_counter()
    proc = run_cli("export", "otf2", str(run), "--out", str(out), timeout=300)
    took = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out / 'traces.otf2'}" in proc.stdout
    return run, out, took


def _read(archive: Path):
    """Definitions and every event as (location, event), in the reader's order."""
    with otf2.reader.open(str(archive / "traces.otf2")) as r:
        events = list(r.events)
        return r.definitions, events


def _name(ev) -> str:
    return type(ev).__name__


def test_locations_are_the_ranks_under_their_hosts(exported):
    run, out, _ = exported
    defs, _ = _read(out)
    size = max(t.size for t in read_run(run))
    assert size == 2
    locations = list(defs.locations)
    assert sorted(loc.name for loc in locations) == [f"MPI Rank {r}" for r in range(size)]
    assert sorted(g.name for g in defs.location_groups) == [f"MPI Rank {r}"
                                                            for r in range(size)]
    hosts = {n.name for n in defs.system_tree_nodes if n.class_name == "node"}
    assert {g.system_tree_parent.name for g in defs.location_groups} <= hosts
    # the clock: rank 0's ticks, at its timer's rate
    tr0 = next(t for t in read_run(run) if t.rank == 0)
    assert defs.clock_properties.timer_resolution == round(1 / tr0.s_per_tick)
    # MPI_COMM_WORLD: both ranks, in order
    world = next(c for c in defs.comms if c.name == "MPI_COMM_WORLD")
    assert [m.name for m in world.group.members] == ["MPI Rank 0", "MPI Rank 1"]


def test_point_to_point_records_are_the_profiles_matched_transfers(exported):
    run, out, _ = exported
    ts = load_run(run).analysis["two_sided"]
    assert ts["available"] and ts["unmatched_sends"] == 0 and ts["unmatched_receives"] == 0
    _, events = _read(out)
    counts = Counter(_name(ev) for _, ev in events)
    assert sum(counts[n] for n in SENDS) == ts["matched"] > 0
    assert sum(counts[n] for n in RECVS) == ts["matched"]
    # every non-blocking request posted is completed in the archive
    assert counts["MpiIsend"] == counts["MpiIsendComplete"] > 0
    assert counts["MpiIrecvRequest"] == counts["MpiIrecv"] > 0
    assert counts["MpiSend"] > 0 and counts["MpiRecv"] > 0  # the blocking mode's Sendrecv
    # both ends of each stream agree on the sizes (peers as world ranks via the comm)
    ends: dict[str, dict[tuple, Counter]] = {"send": defaultdict(Counter),
                                             "recv": defaultdict(Counter)}
    for loc, ev in events:
        me = int(loc.group.name.split()[-1])
        if _name(ev) in SENDS:
            peer = int(ev.communicator.group.members[ev.receiver].name.split()[-1])
            ends["send"][(me, peer, ev.communicator.name, ev.msg_tag)][ev.msg_length] += 1
        elif _name(ev) in RECVS:
            peer = int(ev.communicator.group.members[ev.sender].name.split()[-1])
            ends["recv"][(peer, me, ev.communicator.name, ev.msg_tag)][ev.msg_length] += 1
    assert ends["send"] == ends["recv"]
    assert len(ends["send"]) >= 2  # both directions


def test_every_collective_appears_as_often_as_the_trace_has_it(exported):
    run, out, _ = exported
    _, events = _read(out)
    want: Counter = Counter()
    for tr in read_run(run):
        for c in rank_timeline(tr).collectives:
            want[(tr.rank, tr.kind(c.kind).upper())] += 1
    got = Counter((int(loc.group.name.split()[-1]), str(ev.collective_op).split(".")[-1])
                  for loc, ev in events if _name(ev) == "MpiCollectiveEnd")
    assert got == want
    assert {op for _, op in want} >= {"BARRIER", "BCAST", "REDUCE", "ALLREDUCE", "GATHER"}
    begins = Counter(loc.name for loc, ev in events if _name(ev) == "MpiCollectiveBegin")
    assert begins == Counter(loc.name for loc, ev in events if _name(ev) == "MpiCollectiveEnd")


def test_calls_nest_time_runs_forward_and_records_sit_in_calls(exported):
    run, out, _ = exported
    _, events = _read(out)
    stacks: dict[str, list] = defaultdict(list)
    last: dict[str, int] = {}
    user_enters: Counter = Counter()
    for loc, ev in events:
        assert ev.time >= last.get(loc.name, 0), (loc.name, ev)
        last[loc.name] = ev.time
        stack = stacks[loc.name]
        kind = _name(ev)
        if kind == "Enter":
            stack.append(ev.region)
            if ev.region.paradigm == otf2.Paradigm.USER:
                user_enters[(loc.name, ev.region.name)] += 1
        elif kind == "Leave":
            assert stack and stack.pop() is ev.region, (loc.name, ev)
        elif kind.startswith("Mpi"):
            assert stack and stack[-1].paradigm == otf2.Paradigm.MPI, (loc.name, ev)
    assert all(not s for s in stacks.values())
    want: Counter = Counter()
    for tr in read_run(run):
        for ev in tr.events.values():
            for rid in ev["id"][ev["type"] == EV_REGION_BEGIN].tolist():
                want[(f"MPI Rank {tr.rank}", tr.region(rid))] += 1
    assert user_enters == want and want


def test_metrics_end_at_the_profiles_totals(exported):
    run, out, _ = exported
    analysis = load_run(run).analysis
    _, events = _read(out)
    final = {}
    for loc, ev in events:
        if _name(ev) == "Metric":
            final[int(loc.group.name.split()[-1])] = ev.values
            assert all(m.metric_mode == otf2.MetricMode.ACCUMULATED_START
                       for m in ev.metric.members)
    waiting = {r["rank"]: r["waiting_s"] for r in analysis["two_sided"]["waiting"]["ranks"]}
    for r in analysis["ranks"]:
        got = final[r["rank"]]
        assert got[:4] == pytest.approx([r[m] for m in METRICS], rel=1e-9, abs=1e-15)
        assert got[4] == pytest.approx(waiting[r["rank"]], rel=1e-9, abs=1e-15)
    assert sum(final[r][0] for r in final) > 0 and sum(final[r][4] for r in final) > 0


def test_otf2_print_reads_it(exported):
    tool = shutil.which("otf2-print")
    if tool is None:
        pytest.skip("otf2-print is not installed (Debian package otf2-tools; .ci/run installs it)")
    run, out, _ = exported
    proc = subprocess.run([tool, str(out / "traces.otf2")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    kinds = Counter(line.split()[0] for line in proc.stdout.splitlines() if line[:1].isupper())
    ts = load_run(run).analysis["two_sided"]
    assert kinds["MPI_SEND"] + kinds["MPI_ISEND"] == ts["matched"]
    assert kinds["MPI_RECV"] + kinds["MPI_IRECV"] == ts["matched"]
    assert kinds["MPI_COLLECTIVE_END"] == sum(
        len(rank_timeline(tr).collectives) for tr in read_run(run))
    assert kinds["ENTER"] == kinds["LEAVE"] > 0


def test_the_export_is_quick_and_again_in_place(exported, tmp_path):
    run, out, took = exported
    # ~10,000 events; the CLI's start-up included (a generous bound: a busy machine)
    assert took < 60
    again = run_cli("export", "otf2", str(run), "--out", str(out), timeout=300)
    assert again.returncode == 0, again.stderr  # an archive of ours is replaced
    default = run_cli("export", "otf2", str(run), timeout=300)
    assert default.returncode == 0 and (run / "otf2" / "traces.otf2").is_file()


def test_bad_input_gets_one_line(exported, tmp_path):
    run, _, _ = exported
    proc = run_cli("export", "otf2", str(tmp_path / "nowhere"))
    one_line_error(proc, "not a run directory", code=2)
    untraced = tmp_path / "untraced"
    shutil.copytree(run, untraced, ignore=shutil.ignore_patterns("trace.rank-*", "otf2"))
    proc = run_cli("export", "otf2", str(untraced))
    one_line_error(proc, "no timeline trace", "--trace", code=2)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine\n")
    proc = run_cli("export", "otf2", str(run), "--out", str(busy))
    one_line_error(proc, "not an OTF2 archive directory", code=2)
    assert (busy / "notes.txt").read_text() == "mine\n"


def test_profile_otf2_writes_the_archive_as_it_profiles(exported, tmp_path):
    """`profile --trace --otf2` names OTF2 as an output of the run itself (issue 38 item 1):
    the archive in the run directory holds as many sends as the export of the same kind
    of run; `--otf2` without `--trace` is one line."""
    _, out, _ = exported
    halo = build_dir_for(get_toolchain("mpich")) / "bench" / "mo_halo"
    proc = run_cli("profile", "--mpi", "mpich", "-n", "2", "--trace", "--otf2", "--no-report",
                   "--out", str(tmp_path), "--", str(halo), "--iterations", "20", "--grid",
                   "48", "--quick", timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run = next(p for p in tmp_path.iterdir() if (p / "run.json").is_file())
    assert f"OTF2 (Vampir, Scalasca): wrote {run / 'otf2' / 'traces.otf2'}" in proc.stdout
    _, events = _read(run / "otf2")
    _, same_kind = _read(out)
    sends = sum(1 for _, ev in events if _name(ev) in SENDS)
    assert sends == sum(1 for _, ev in same_kind if _name(ev) in SENDS) > 0
    one_line_error(run_cli("profile", "--otf2", "--", str(halo)), "--otf2", code=2)
