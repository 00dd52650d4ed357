"""Timeline traces end to end: `mpi-overlap profile --trace` on the test program
(native/tests/profiled_app.c) with 2 ranks, then `mpi-overlap trace --perfetto`, and the
trace-event document checked against what the program does and what the profile says.

- post-compute-wait: per rank 168 events (20 × Isend/Irecv + Wait: enter, begin/end,
  exit each, and the MATCH after the begin and the STATUS after the end; Init, Comm_rank,
  Comm_size, Finalize: enter + exit), 20 transfers, 20 message flows from rank 0's
  MPI_Isend to rank 1's MPI_Wait;
- blocking: 60 flows, both directions (Send → Recv and both halves of Sendrecv_replace),
  every in-call transfer spanning its call;
- a tiny cap: truncated, counted in the profile and the report, the file still readable;
- a rank that dies keeps its trace; a file cut inside a chunk, a foreign file, a run
  without traces: one line and exit status 2.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from mpi_overlap.run.rundir import load_run

pytestmark = pytest.mark.mpi

ITERS = 20
# per iteration: the post's ENTER, BEGIN, MATCH, EXIT and the wait's ENTER, END, STATUS,
# EXIT (MATCH and STATUS: what message matching needs); 8 more around the loop
EVENTS_PER_RANK = ITERS * 8 + 8


def _app() -> Path:
    tc = get_toolchain("mpich")
    ensure_built(tc)
    return build_dir_for(tc) / "tests" / "profiled_app"


def _profile(base: Path, *args: str, extra: tuple[str, ...] = ()):
    out = base / "runs"
    proc = run_cli("profile", "--mpi", "mpich", "-n", "2", "--trace", "--no-report", "--out",
                   str(out), *extra, "--", str(_app()), *args, timeout=600, cwd=base)
    runs = sorted(p for p in out.iterdir() if (p / "run.json").is_file()) if out.is_dir() else []
    return proc, (load_run(runs[-1]) if runs else None)


def _convert(run_dir: Path, out: Path):
    proc = run_cli("trace", str(run_dir), "--perfetto", str(out), timeout=120)
    doc = json.loads(out.read_text()) if proc.returncode == 0 else None
    return proc, doc


def _by_rank(run) -> dict[int, dict]:
    return {d["rank"]: d for d in run.result["ranks"]}


def _check_structure(doc: dict) -> dict:
    """The invariants every converted trace keeps; returns its parts for the tests."""
    events = doc["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    for e in slices:
        assert {"name", "ts", "dur", "pid", "tid"} <= e.keys(), e
        assert e["dur"] >= 0
    # async slices: one b and one e per id, e not before b
    asyncs: dict[tuple, list[dict]] = defaultdict(list)
    for e in events:
        if e["ph"] in "be":
            asyncs[(e["pid"], e["cat"], e["id2"]["local"], e["name"])].append(e)
    for key, pair in asyncs.items():
        assert sorted(p["ph"] for p in pair) == ["b", "e"], key
        b = next(p for p in pair if p["ph"] == "b")
        e = next(p for p in pair if p["ph"] == "e")
        assert e["ts"] >= b["ts"] and b["tid"] == e["tid"]
    # flows: one s and one f per id, each inside a call slice on its own thread
    flows: dict[int, dict[str, dict]] = defaultdict(dict)
    for e in events:
        if e["ph"] in "sf":
            assert e["ph"] not in flows[e["id"]], e
            flows[e["id"]][e["ph"]] = e
    on_thread: dict[tuple, list[dict]] = defaultdict(list)
    for s in slices:
        if s["cat"] == "mpi":
            on_thread[(s["pid"], s["tid"])].append(s)
    for fid, ends in flows.items():
        assert set(ends) == {"s", "f"}, fid
        assert ends["f"]["bp"] == "e"
        for end in ends.values():
            inside = [s for s in on_thread[(end["pid"], end["tid"])]
                      if s["ts"] < end["ts"] < s["ts"] + s["dur"]]
            assert inside, end
            end["call"] = inside[0]["name"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    transfers = [p for pair in asyncs.values() for p in pair if p["ph"] == "b"]
    return {"slices": slices, "transfers": transfers, "flows": flows, "names": names}


@pytest.fixture(scope="module")
def pcw(tmp_path_factory):
    """One post-compute-wait run with its trace and its conversion."""
    base = tmp_path_factory.mktemp("pcw")
    proc, run = _profile(base, "post-compute-wait", "65536", str(ITERS))
    assert proc.returncode == 0, proc.stderr
    conv, doc = _convert(run.path, base / "timeline.json")
    assert conv.returncode == 0, conv.stderr
    return run, conv, doc


def test_profile_trace_objects_count_every_event(pcw):
    run, _, _ = pcw
    for rank, d in _by_rank(run).items():
        t = d["trace"]
        assert t["file"] == f"trace.rank-{rank}.mopt"
        assert (run.path / t["file"]).stat().st_size == t["bytes"]
        assert t["events"] == EVENTS_PER_RANK and t["transfers"] == ITERS
        assert t["dropped_events"] == 0 and not t["truncated"] and t["closed"]
        assert t["threads"] == 1 and t["error"] is None
    # the analysis (and so the report) names the files
    assert any("Timeline traces: 2 files" in f for f in run.analysis["findings"])
    assert run.analysis["trace"]["truncated_ranks"] == []


def test_timeline_matches_the_program_and_the_profile(pcw):
    run, conv, doc = pcw
    assert conv.stdout.startswith("wrote ")
    assert "2 ranks, 2 threads, 88 MPI calls, 40 transfers, 20 message flows" in conv.stdout
    parts = _check_structure(doc)
    assert parts["names"] == {1: "rank 0", 2: "rank 1"}
    calls = Counter((s["pid"], s["name"]) for s in parts["slices"] if s["cat"] == "mpi")
    assert calls[(1, "MPI_Isend")] == ITERS and calls[(2, "MPI_Irecv")] == ITERS
    assert calls[(1, "MPI_Wait")] == ITERS and calls[(2, "MPI_Wait")] == ITERS
    assert calls[(1, "MPI_Init")] == 1 and calls[(2, "MPI_Finalize")] == 1
    profiles = _by_rank(run)
    for rank in (0, 1):
        mine = [t for t in parts["transfers"] if t["pid"] == rank + 1]
        totals = profiles[rank]["profile"]["totals"]
        assert len(mine) == totals["transfers"] == ITERS
        assert all(t["args"]["case"] == "across-calls" for t in mine)
        for arg, key in (("min_overlap_s", "min_s"), ("max_overlap_s", "max_s"),
                         ("xfer_s", "xfer_s")):
            assert sum(t["args"][arg] for t in mine) == pytest.approx(totals[key], rel=1e-9)
        assert all(t["name"].startswith(("MPI_Isend 64 KiB: overlap", "MPI_Irecv 64 KiB"))
                   for t in mine)
    flows = parts["flows"]
    assert len(flows) == ITERS
    for ends in flows.values():
        assert ends["s"]["pid"] == 1 and ends["s"]["call"] == "MPI_Isend"
        assert ends["f"]["pid"] == 2 and ends["f"]["call"] == "MPI_Wait"
        # the receive completes after 5 ms of computation; clocks agree to microseconds
        assert ends["f"]["ts"] > ends["s"]["ts"]
    assert doc["otherData"]["unmatched_sends"] == 0
    assert doc["otherData"]["unmatched_receives"] == 0


def test_blocking_messages_flow_both_ways_and_in_call_transfers_span_their_call(tmp_path):
    iters = 10
    proc, run = _profile(tmp_path, "blocking", "4096", str(iters))
    assert proc.returncode == 0, proc.stderr
    conv, doc = _convert(run.path, tmp_path / "t.json")
    assert conv.returncode == 0, conv.stderr
    parts = _check_structure(doc)
    ends = Counter((e["s"]["pid"], e["s"]["call"], e["f"]["pid"], e["f"]["call"])
                   for e in parts["flows"].values())
    # Send -> Recv; Sendrecv_replace's send half -> the other rank's Sendrecv_replace
    assert ends == {(1, "MPI_Send", 2, "MPI_Recv"): iters,
                    (1, "MPI_Sendrecv_replace", 2, "MPI_Sendrecv_replace"): iters,
                    (2, "MPI_Sendrecv_replace", 1, "MPI_Sendrecv_replace"): iters}
    slices = {(s["pid"], s["tid"], s["ts"]): s for s in parts["slices"]}
    ends_at = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "e":
            ends_at[(e["pid"], e["id2"]["local"])] = e["ts"]
    for t in parts["transfers"]:
        assert t["args"]["case"] == "in-call"
        if t["args"]["fn"] == "MPI_Send":
            # an eager send's tail overlaps exactly what follows its return (docs/method.md,
            # "The transfer model's parts"); 0 without parts or at a rendezvous size
            assert t["args"]["min_overlap_s"] == pytest.approx(t["args"]["max_overlap_s"])
        else:
            assert t["args"]["min_overlap_s"] == 0 and t["args"]["max_overlap_s"] == 0
        call = slices[(t["pid"], t["tid"], t["ts"])]
        assert ends_at[(t["pid"], t["id2"]["local"])] == pytest.approx(
            call["ts"] + call["dur"], abs=2e-3)
    assert len(parts["transfers"]) == 2 * 3 * iters


def test_a_tiny_cap_truncates_counts_and_stays_readable(tmp_path):
    proc, run = _profile(tmp_path, "post-compute-wait", "1024", str(ITERS),
                         extra=("--trace-cap", "20K"))
    assert proc.returncode == 0, proc.stderr
    for d in run.result["ranks"]:
        t = d["trace"]
        assert t["truncated"] and t["cap_bytes"] == 20480
        assert 0 < t["events"] < EVENTS_PER_RANK
        assert t["events"] + t["dropped_events"] == EVENTS_PER_RANK
        # the cap may be passed by the end record only (16 + 80 bytes)
        assert t["bytes"] <= 20480 + 96
        # the profile's own figures do not depend on the trace
        assert d["profile"]["totals"]["transfers"] == ITERS
    warnings = run.analysis["warnings"]
    assert any(w.startswith("rank 0: trace truncated at 20.0 KiB") for w in warnings)
    assert run.analysis["trace"]["truncated_ranks"] == [0, 1]
    conv, doc = _convert(run.path, tmp_path / "t.json")
    assert conv.returncode == 0, conv.stderr
    assert "note: rank 0: trace truncated at 20.0 KiB (the cap)" in conv.stdout
    _check_structure(doc)


def test_a_rank_that_dies_keeps_its_trace(tmp_path):
    proc, run = _profile(tmp_path, "crash", "1024", "5", extra=("--timeout", "60"))
    assert proc.returncode == run.meta["returncode"] != 0  # the program's, as mpiexec says it
    crashed = _by_rank(run)[1]
    assert crashed["status"] == "incomplete"
    # 5 messages + profiled_app's MPI_Barrier before the crash (a collective transfer)
    assert crashed["trace"]["transfers"] == 6 and crashed["trace"]["closed"]
    conv, doc = _convert(run.path, tmp_path / "t.json")
    assert conv.returncode == 0, conv.stderr
    parts = _check_structure(doc)
    assert sum(1 for t in parts["transfers"] if t["pid"] == 2) == 6


def _copy_traces(run_dir: Path, dest: Path) -> Path:
    dest.mkdir()
    for p in run_dir.glob("trace.rank-*.mopt"):
        shutil.copy(p, dest / p.name)
    return dest


def _one_line_error(proc) -> str:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    return proc.stderr


def test_a_trace_without_its_end_reads_up_to_its_last_chunk(pcw, tmp_path):
    """What a killed rank leaves: whole chunks, no END record."""
    run, _, _ = pcw
    d = _copy_traces(run.path, tmp_path / "cut")
    f = d / "trace.rank-1.mopt"
    f.write_bytes(f.read_bytes()[:-(16 + 80)])
    proc, doc = _convert(d, tmp_path / "t.json")
    assert proc.returncode == 0, proc.stderr
    assert "rank(s) 1 stopped before MPI_Finalize" in proc.stdout
    assert len(_check_structure(doc)["flows"]) == ITERS


@pytest.mark.parametrize("damage, message", [
    ("cut", "truncated at byte"),
    ("magic", "not an mpi-overlap trace"),
    ("chunk", "unknown chunk type"),
    ("short", "shorter than the 64-byte header"),
])
def test_a_damaged_trace_is_one_line_and_status_2(pcw, tmp_path, damage, message):
    run, _, _ = pcw
    d = _copy_traces(run.path, tmp_path / "bad")
    f = d / "trace.rank-0.mopt"
    data = bytearray(f.read_bytes())
    if damage == "cut":
        data = data[:-50]  # inside the END chunk
    elif damage == "magic":
        data[:8] = b"NOTATRCE"
    elif damage == "chunk":
        data[64] = 99  # the first chunk's type
    else:
        data = data[:40]
    f.write_bytes(bytes(data))
    proc, _ = _convert(d, tmp_path / "t.json")
    assert message in _one_line_error(proc)
    assert "trace.rank-0.mopt" in proc.stderr


def test_no_trace_in_the_run_is_one_line(tmp_path):
    proc, _ = _convert(tmp_path, tmp_path / "t.json")
    assert "no timeline trace" in _one_line_error(proc)


def test_bad_trace_options_are_one_line(tmp_path):
    for args, message in ((("--trace-cap", "64M"), "--trace-cap needs --trace"),
                          (("--trace", "--trace-cap", "0"), "--trace-cap takes one size")):
        proc = run_cli("profile", "-n", "2", *args, "--", "/bin/true", cwd=tmp_path)
        assert message in _one_line_error(proc)
