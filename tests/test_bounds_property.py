"""Overlap bounds of the profiler: `mop_replay` against an independent reference and the truth.

Three kinds of checks on the event processing of native/profiler (docs/profiler.md, the
paper's §2.2):

* random event streams (persistent requests, free, cancel, MPI_PROC_NULL, nested and
  mismatched regions, Pcontrol, handle reuse, completions without a begin, transfers left
  at finish, custom bins, two transfers on one request (`join`), completions seen by
  Request_get_status (`end ... query`), generalized requests) give the same document from
  the C driver and from tests/bounds_reference.py;
* invariants that any document must satisfy (bounds inside [0, xfer], totals are the sums
  of their parts, the cases' fixed bounds);
* timelines with known physical transfers (tests/bounds_simulator.py): the true overlapped
  time of every transfer lies within [min, max];

plus hand-worked examples whose numbers follow from the paper's formulas. Tests on the C
driver are skipped while native/profiler/mop_replay.c does not exist; the reference is
always tested.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bounds_reference import COUNTERS, Event, parse_lines, process, to_text
from bounds_simulator import simulate
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain
from property_examples import examples

NATIVE = Path(__file__).resolve().parents[1] / "native"
REL, ABS = 1e-9, 1e-12
SETTINGS = settings(max_examples=examples(200), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

Runner = Callable[[list[Event]], dict[str, Any]]


# ---------------------------------------------------------------------------------------
# The two implementations


@pytest.fixture(scope="module")
def mop_replay() -> Path:
    if not (NATIVE / "profiler" / "mop_replay.c").is_file():
        pytest.skip("native/profiler/mop_replay.c not written yet")
    exe = ensure_built(get_toolchain("mpich")) / "profiler" / "mop_replay"
    assert exe.is_file(), f"{exe} was not built"
    return exe


def run_c(exe: Path, events: list[Event]) -> dict[str, Any]:
    text = to_text(events)
    proc = subprocess.run([str(exe)], input=text, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, f"mop_replay failed ({proc.returncode}): {proc.stderr}\n{text}"
    doc = json.loads(proc.stdout)
    # Call sites are not in the reference model: the replay format names none, so every
    # transfer is in the one pair (unknown -> unknown), whose sums must be the totals.
    prof = doc["profile"]
    pairs, _ = prof.pop("pairs"), prof.pop("sites")
    assert [(p["post"], p["end"]) for p in pairs] in ([], [(0, 0)]), pairs
    for key in ("transfers", "xfer_s", "min_s", "max_s"):
        got = sum(p[key] for p in pairs)
        assert close(float(got), float(prof["totals"][key])), (key, pairs, prof["totals"])
    return doc


@pytest.fixture(scope="module", params=["reference", "mop_replay"])
def impl(request: pytest.FixtureRequest) -> Runner:
    if request.param == "reference":
        return process
    exe = request.getfixturevalue("mop_replay")
    return lambda events: run_c(exe, events)


# ---------------------------------------------------------------------------------------
# Comparing documents


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL, abs_tol=ABS)


def diff(got: Any, want: Any, path: str = "") -> list[str]:
    """Differences between two documents; `got` may have extra counters."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: {got!r} is not an object"]
        out = []
        extra = set(got) - set(want)
        if extra and not path.endswith("counters"):
            out.append(f"{path}: unexpected keys {sorted(extra)}")
        for k, v in want.items():
            if k not in got:
                out.append(f"{path}.{k}: missing (want {v!r})")
            else:
                out += diff(got[k], v, f"{path}.{k}")
        return out
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: got {got!r}\n  want {want!r}"]
        pairs = enumerate(zip(got, want, strict=True))
        return [d for i, (g, w) in pairs for d in diff(g, w, f"{path}[{i}]")]
    if isinstance(want, float) or isinstance(got, float):
        ok = isinstance(got, (int, float)) and close(float(got), float(want))
        return [] if ok else [f"{path}: got {got!r}, want {want!r}"]
    return [] if got == want and type(got) is type(want) else [
        f"{path}: got {got!r}, want {want!r}"]


def assert_same(got: dict[str, Any], want: dict[str, Any], events: list[Event]) -> None:
    problems = diff(got, want, "")
    assert not problems, "\n".join(problems[:20]) + "\nevents:\n" + to_text(events)


def check_invariants(doc: dict[str, Any]) -> None:
    """What every document must satisfy."""
    trs, prof = doc["transfers"], doc["profile"]
    tot = prof["totals"]
    for tr in trs:
        x, mn, mx = tr["xfer_s"], tr["min_s"], tr["max_s"]
        assert x >= 0 and mn >= 0 and mx <= x * (1 + REL) + ABS, tr
        assert mn <= mx * (1 + REL) + ABS, tr
        if tr["case"] == "in-call":
            assert mn == 0 and mx == 0, tr
        elif tr["case"] in ("begin-only", "end-only"):
            assert mn == 0 and close(mx, x), tr
        else:
            assert tr["case"] == "across-calls", tr
        assert tr["key"] is not None or tr["case"] == "in-call", tr
        assert tr["kind"] in ("send", "recv", "unknown"), tr
        assert (tr["kind"] == "unknown") == (tr["case"] == "end-only"), tr
    assert tot["transfers"] == len(trs)
    for name, field in (("xfer_s", "xfer_s"), ("min_s", "min_s"), ("max_s", "max_s")):
        assert close(tot[name], math.fsum(t[field] for t in trs)), name
    assert close(tot["nonoverlap_s"], tot["xfer_s"] - tot["max_s"])
    cases = prof["cases"]
    assert set(cases) == {"in-call", "across-calls", "begin-only", "end-only"}
    for case, n in cases.items():
        assert n == sum(1 for t in trs if t["case"] == case), case
    parts: list[tuple[str, list[dict[str, Any]], Sequence[str]]] = [
        ("by_bin", prof["by_bin"], ()),
        ("by_function", prof["by_function"], ("call_s",)),
        ("by_region", prof["by_region"], ("comp_s", "call_s")),
    ]
    for what, rows, extra in parts:
        for fld in ("transfers", "xfer_s", "min_s", "max_s", "nonoverlap_s", *extra):
            total = sum(r[fld] for r in rows) if fld == "transfers" else math.fsum(
                r[fld] for r in rows)
            want = tot[fld]
            assert (total == want) if fld == "transfers" else close(total, want), (what, fld)
        for r in rows:
            assert close(r["nonoverlap_s"], r["xfer_s"] - r["max_s"]), (what, r)
    los = [b["lo"] for b in prof["by_bin"]]
    assert los == sorted(set(los)) and all(b["transfers"] >= 1 for b in prof["by_bin"])
    for b in prof["by_bin"]:
        assert b["hi"] is None or b["hi"] > b["lo"]
        n = sum(1 for t in trs if t["bytes"] >= b["lo"] and (b["hi"] is None
                                                              or t["bytes"] < b["hi"]))
        assert n == b["transfers"], b
    fns = [f["fn"] for f in prof["by_function"]]
    assert fns == sorted(set(fns))
    for f in prof["by_function"]:
        assert f["calls"] > 0 or f["transfers"] > 0, f
        assert f["transfers"] == sum(1 for t in trs if t["fn"] == f["fn"])
    regions = [r["region"] for r in prof["by_region"]]
    assert regions == sorted(set(regions))
    for r in prof["by_region"]:
        assert r["transfers"] == sum(1 for t in trs if t["region"] == r["region"])
    for name in COUNTERS:
        assert isinstance(prof["counters"][name], int) and prof["counters"][name] >= 0, name
    check_checks(prof, trs)


def check_checks(prof: dict[str, Any], trs: list[dict[str, Any]]) -> None:
    """The checks on the bounds: parts add up, flagged ⊆ judged ⊆ the case's transfers."""
    checks, counters = prof["checks"], prof["counters"]
    inc, acr = checks["in_call"], checks["across_calls"]
    n_in = sum(1 for t in trs if t["case"] == "in-call")
    assert inc["transfers"] + inc["unchecked"] == n_in
    assert acr["transfers"] == sum(1 for t in trs if t["case"] == "across-calls")
    assert inc["flagged"]["transfers"] == counters["xfer_exceeds_call"]
    assert acr["flagged"]["transfers"] == counters["xfer_exceeds_span"]
    assert inc["calls_beyond"] <= inc["calls"] <= inc["transfers"]
    assert (inc["calls_beyond"] == 0) == (inc["flagged"]["transfers"] == 0)
    for part in (inc, acr):
        f = part["flagged"]
        assert f["transfers"] <= part["transfers"]
        assert 0 <= f["excess_s"] <= f["xfer_s"] * (1 + REL) + ABS
        assert f["xfer_s"] <= part["xfer_s"] * (1 + REL) + ABS
    # a call's longest transfer is one of its own; beyond it holds at most the flagged excess
    assert inc["longest_s"] <= inc["xfer_s"] * (1 + REL) + ABS
    assert 0 <= inc["beyond_s"] <= inc["flagged"]["excess_s"] * (1 + REL) + ABS
    assert close(checks["beyond_s"], inc["beyond_s"] + acr["flagged"]["excess_s"])
    for what in ("by_function", "by_bin"):
        for check, part in (("in-call", inc), ("across-calls", acr)):
            rows = [r for r in checks[what] if r["check"] == check]
            assert all(r["transfers"] >= 1 for r in rows), (what, rows)
            assert sum(r["transfers"] for r in rows) == part["flagged"]["transfers"], what
            for fld in ("xfer_s", "excess_s"):
                assert close(math.fsum(r[fld] for r in rows), part["flagged"][fld]), (what, fld)


# ---------------------------------------------------------------------------------------
# Random event streams

FNS = ("MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Test", "MPI_Sendrecv", "MPI_Bcast")
KEYS = (1, 2, 3, 4, 0xFFFFFFFF, (1 << 40) + 3)
REGIONS = ("alpha", "beta", "gamma")
MIB = 1 << 20


@st.composite
def tables(draw: st.DrawFn) -> list[tuple[int, float]]:
    sizes = sorted(draw(st.sets(st.integers(0, 4 * MIB), min_size=1, max_size=4)))
    ns = draw(st.integers(100, 20_000))
    out = []
    for b in sizes:
        out.append((b, ns * 1e-9))
        ns += draw(st.integers(1, 400_000))
    return out


def byte_counts(table: list[tuple[int, float]]) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from([0, 1, *(b for b, _ in table)]),
                     st.integers(0, 8 * MIB), st.integers(0, 2048))


dts = st.one_of(st.just(0), st.integers(1, 300), st.integers(1, 30_000))


@st.composite
def event_streams(draw: st.DrawFn, consistent: bool = False) -> list[Event]:
    """A valid random stream. Only what the spec defines is generated: transfer and
    Pcontrol events inside calls, region events between calls (after the first call),
    `cancelled` only on active keys, `pinit` only on unused keys, the persistent and plain
    keys kept apart, and `finish` right after the last exit. `consistent`: every completion
    comes at least xfer_time after its begin (the completing call waits for the data)."""
    table = draw(tables())
    events: list[Event] = [("table", b, s) for b, s in table]
    edges = draw(st.none() | st.sets(st.integers(1, 4 * MIB), min_size=1, max_size=5))
    if edges is not None:
        events.append(("bins", tuple(sorted(edges))))
    sizes = byte_counts(table)
    xfer_ns = {}

    def need(b: int) -> int:
        if b not in xfer_ns:
            xfer_ns[b] = int(process([*events[: len(table)], ("incall", 0, b, "send", "x"),
                                      ("finish", 0)])["transfers"][0]["xfer_s"] * 1e9) + 1
        return xfer_ns[b]

    t = draw(st.integers(0, 10_000))
    # key -> [[t_begin, bytes, kind, joined, done]], oldest first
    active: dict[int, list[list[Any]]] = {}
    persistent: dict[int, tuple[int, str]] = {}
    started = False

    def transfer_action(fn: str) -> None:
        nonlocal t
        t += draw(dts)
        act = draw(st.sampled_from(("begin", "begin", "end", "end", "incall", "pinit",
                                    "start", "start", "free")))
        key = draw(st.sampled_from(KEYS))
        if act == "end" and active and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(active)))
        if act == "begin" and key in persistent:
            act = "start"
        if act == "begin":
            b, kind = draw(sizes), draw(st.sampled_from(("send", "recv", "recv", "null", "greq")))
            bfn = draw(st.sampled_from((fn, *FNS)))
            events.append(("begin", t, key, b, kind, bfn))
            active.setdefault(key, []).append([t, b, kind, False, False])
            if kind != "greq" and draw(st.integers(0, 3)) == 0:  # Isendrecv's receive
                b2, kind2 = draw(sizes), draw(st.sampled_from(("recv", "null")))
                events.append(("join", t, key, b2, kind2, bfn))
                active[key].append([t, b2, kind2, True, False])
        elif act == "end":
            query = draw(st.integers(0, 4)) == 0  # MPI_Request_get_status
            if key in active:
                queue = active[key]
                # a query closes the oldest request no query closed; Wait/Test the oldest
                first = next((i for i, q in enumerate(queue) if not q[4] and not q[3]),
                             None) if query else 0
                group = []
                if first is not None:
                    group = [queue[first]]
                    group += itertools.takewhile(lambda q: q[3], queue[first + 1:])
                if not query:
                    del queue[: len(group)]
                    if not queue:
                        del active[key]
                cancelled = draw(st.integers(0, 9)) == 0
                got = draw(st.one_of(st.just(-1), st.just(group[0][1]) if group else sizes,
                                     sizes))
                for t0, b0, kind, _, done in group:
                    real = got if kind == "recv" and got >= 0 else b0
                    if consistent and kind not in ("null", "greq") and not cancelled and not done:
                        t = max(t, t0 + need(real) + draw(dts))
                for q in group:
                    q[4] = True
                events.append(("end", t, key, got, cancelled, True) if query
                              else ("end", t, key, got, cancelled))
            else:
                got = draw(st.one_of(st.just(-1), sizes))
                events.append(("end", t, key, got, False, True) if query
                              else ("end", t, key, got, False))
                if query and key not in persistent:
                    active[key] = [[t, 0, "send", False, True]]
        elif act == "incall":
            events.append(("incall", t, draw(sizes), draw(st.sampled_from(("send", "recv"))),
                           fn))
        elif act == "pinit":
            if key not in active and key not in persistent:
                persistent[key] = (draw(sizes), draw(st.sampled_from(("send", "recv", "null"))))
                pfn = draw(st.sampled_from(("MPI_Send_init", "MPI_Recv_init")))
                events.append(("pinit", key, *persistent[key], pfn))
        elif act == "start":
            if key in persistent:
                events.append(("start", t, key))
                active[key] = [[t, *persistent[key], False, False]]  # restarted: replaced
            elif key not in active:
                events.append(("start", t, key))
        else:
            events.append(("free", t, key))
            if key in active:
                active[key].pop(0)
                while active[key] and active[key][0][3]:  # its joined transfers
                    active[key].pop(0)
                if not active[key]:
                    del active[key]
            persistent.pop(key, None)

    for _ in range(draw(st.integers(0, 30))):
        op = draw(st.sampled_from(("comp", "call", "call", "call", "region", "pcontrol")))
        if op == "comp":
            t += draw(dts)
        elif op == "region":
            if started:
                rb = draw(st.booleans())
                events.append(("region_begin" if rb else "region_end", t,
                               draw(st.sampled_from(REGIONS))))
        elif op == "pcontrol":
            events.append(("enter", t, "MPI_Pcontrol"))
            t += draw(dts)
            events.append(("pcontrol", t, draw(st.integers(0, 2))))
            t += draw(dts)
            events.append(("exit", t))
            started = True
        else:
            fn = draw(st.sampled_from(FNS))
            events.append(("enter", t, fn))
            for _ in range(draw(st.integers(0, 4))):
                if draw(st.integers(0, 5)) == 0:  # a nested call
                    t += draw(dts)
                    inner = draw(st.sampled_from(FNS))
                    events.append(("enter", t, inner))
                    for _ in range(draw(st.integers(0, 2))):
                        transfer_action(inner)
                    t += draw(dts)
                    events.append(("exit", t))
                else:
                    transfer_action(fn)
            t += draw(dts)
            events.append(("exit", t))
            started = True
        t += draw(dts) if op != "comp" else 0
    events.append(("enter", t, "MPI_Finalize"))
    if consistent:
        for t0, b, kind, _, done in (x for queue in active.values() for x in queue):
            if kind not in ("null", "greq") and not done:
                t = max(t, t0 + need(b))
    t += draw(dts)
    events += [("exit", t), ("finish", t)]
    return events


def test_replay_text_round_trip() -> None:
    rng = random.Random(7)
    for _ in range(20):
        events = simulate(rng).events
        assert parse_lines(to_text(events)) == events


@settings(SETTINGS, max_examples=examples(300))
@given(event_streams())
def test_c_matches_reference(mop_replay: Path, events: list[Event]) -> None:
    assert_same(run_c(mop_replay, events), process(events), events)


def _posts_at_their_enter(events: list[Event]) -> tuple[list[Event], int]:
    """The stream with every BEGIN that directly follows an ENTER moved to the ENTER's time,
    as the wrappers record a post, and how many ENTER, BEGIN, EXIT triples it then has: the
    ones the runtime records as ENTER, POST."""
    out = list(events)
    triples = 0
    for i in range(len(out) - 2):
        if out[i][0] == "enter" and out[i + 1][0] == "begin":
            out[i + 1] = (out[i + 1][0], out[i][1], *out[i + 1][2:])
            triples += out[i + 2][0] == "exit"
    return out, triples


def _replay(exe: Path, events: list[Event], env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run([str(exe)], input=to_text(events), capture_output=True, text=True,
                          timeout=60, check=False, env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@SETTINGS
@given(event_streams(), st.lists(st.integers(1, 20), min_size=1, max_size=6))
def test_fused_posts_and_small_queues_give_the_same_document(mop_replay: Path,
                                                             events: list[Event],
                                                             batches: list[int]) -> None:
    """A post recorded as ENTER, POST (mop_event.h), and events handed over a few at a time
    in batches of varying sizes (a POST may open a batch, its ENTER closing the one before),
    as a queue processed a few events at a time while its thread waits (mop_idle.h) and
    the rest when full is, give the document of the plain stream processed at once, number
    for number: only the events counter differs, by the POSTs' missing EXITs."""
    events, triples = _posts_at_their_enter(events)
    plain = _replay(mop_replay, events, {})
    fused = _replay(mop_replay, events, {"MOP_REPLAY_FUSE": "1",
                                         "MOP_REPLAY_BATCH": ",".join(map(str, batches))})
    counts = plain["profile"]["counters"], fused["profile"]["counters"]
    assert counts[1].pop("events") == counts[0].pop("events") - triples
    assert counts[1].pop("flushes") >= counts[0].pop("flushes")
    assert fused == plain, to_text(events)


@SETTINGS
@given(event_streams(), st.lists(st.integers(1, 20), min_size=1, max_size=6))
def test_the_runtimes_unobserved_path_gives_the_observed_profile(mop_replay: Path,
                                                                 events: list[Event],
                                                                 batches: list[int]) -> None:
    """The runtime processes without an observer, and then completions take the engine's
    short path (mop_end_fast), which the observer the other tests read turns off: without
    it (MOP_REPLAY_OBSERVE=0), plain and fused in batches, the profile is the observed
    run's, number for number; only the per-transfer array, the observer's, is empty."""
    events, _ = _posts_at_their_enter(events)
    observed = _replay(mop_replay, events, {})
    plain = _replay(mop_replay, events, {"MOP_REPLAY_OBSERVE": "0"})
    assert plain["transfers"] == []
    assert plain["profile"] == observed["profile"], to_text(events)
    fused = _replay(mop_replay, events, {"MOP_REPLAY_OBSERVE": "0", "MOP_REPLAY_FUSE": "1",
                                         "MOP_REPLAY_BATCH": ",".join(map(str, batches))})
    fused_observed = _replay(mop_replay, events, {"MOP_REPLAY_FUSE": "1",
                                                  "MOP_REPLAY_BATCH": ",".join(map(str,
                                                                                   batches))})
    assert fused["profile"] == fused_observed["profile"], to_text(events)


@SETTINGS
@given(event_streams(consistent=True))
def test_invariants(impl: Runner, events: list[Event]) -> None:
    check_invariants(impl(events))


@settings(max_examples=examples(100), deadline=None)
@given(event_streams())
def test_invariants_without_physical_consistency(impl: Runner, events: list[Event]) -> None:
    check_invariants(impl(events))


# ---------------------------------------------------------------------------------------
# Simulated timelines: the truth lies within the bounds


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_true_overlap_within_bounds(impl: Runner, seed: int) -> None:
    sim = simulate(random.Random(seed))
    doc = impl(sim.events)
    trs = doc["transfers"]
    assert len(trs) == len(sim.transfers), to_text(sim.events)
    for got, truth in zip(trs, sim.transfers, strict=True):
        where = f"{got} vs {truth}\n{to_text(sim.events)}"
        assert (got["key"], got["bytes"], got["kind"], got["fn"], got["case"]) == (
            truth.key, truth.nbytes, truth.kind, truth.fn, truth.case), where
        assert close(got["xfer_s"], truth.xfer), where
        assert got["min_s"] <= truth.overlap + ABS, where
        assert truth.overlap <= got["max_s"] + ABS, where
    check_invariants(doc)
    # The table is right and every transfer lies inside its events: the checks on the
    # bounds must stay silent (no false alarm), however the transfers of a call overlap.
    checks = doc["profile"]["checks"]
    assert checks["in_call"]["flagged"]["transfers"] == 0, to_text(sim.events)
    assert checks["across_calls"]["flagged"]["transfers"] == 0, to_text(sim.events)
    assert checks["beyond_s"] == 0, to_text(sim.events)
    if impl is not process:
        assert_same(doc, process(sim.events), sim.events)


# ---------------------------------------------------------------------------------------
# Worked examples (numbers by hand from §2.2)

US = 1e-6


def ev(text: str) -> list[Event]:
    return parse_lines(text)


def test_worked_example_from_the_brief(impl: Runner) -> None:
    # post at t=0 in a 1 µs call, compute 10 µs, wait 2 µs; xfer 5 µs:
    # comp = 10, noncomp = 13 - 10 = 3 → max = min(10, 5) = 5, min = max(0, 5 - 3) = 2
    doc = impl(ev("""table 1000 5e-06
        enter 0 MPI_Isend
        begin 0 1 1000 send MPI_Isend
        exit 1000
        enter 11000 MPI_Wait
        end 13000 1 -1
        exit 13000
        finish 13000"""))
    (tr,) = doc["transfers"]
    assert tr["case"] == "across-calls" and tr["key"] == 1 and tr["fn"] == "MPI_Isend"
    assert close(tr["xfer_s"], 5 * US) and close(tr["max_s"], 5 * US)
    assert close(tr["min_s"], 2 * US)
    tot = doc["profile"]["totals"]
    assert close(tot["comp_s"], 10 * US) and close(tot["call_s"], 3 * US)
    assert close(tot["nonoverlap_s"], 0.0)
    fns = {f["fn"]: f for f in doc["profile"]["by_function"]}
    assert fns.keys() == {"MPI_Isend", "MPI_Wait"}
    assert fns["MPI_Wait"]["calls"] == 1 and fns["MPI_Wait"]["transfers"] == 0
    assert close(fns["MPI_Wait"]["call_s"], 2 * US)
    assert [(b["lo"], b["hi"]) for b in doc["profile"]["by_bin"]] == [(512, 1024)]
    (reg,) = doc["profile"]["by_region"]
    assert reg["region"] == "(no region)" and close(reg["comp_s"], 10 * US)
    check_invariants(doc)


@pytest.mark.parametrize(
    ("comp_us", "wait_us", "mn", "mx"),
    [
        (2, 4, 0.0, 2.0),  # comp 2 < xfer 5 → max 2; noncomp 1 + 4 = 5 ≥ 5 → min 0
        (4, 1, 3.0, 4.0),  # max = comp 4; noncomp 2 → min 3
        (10, 0, 4.0, 5.0),  # noncomp 1 → min 4
        (0, 20, 0.0, 0.0),  # no computation at all
    ],
)
def test_worked_across_calls(impl: Runner, comp_us: int, wait_us: int, mn: float,
                             mx: float) -> None:
    # table (0, 1 µs), (2000, 9 µs): a receive posted for 4096 bytes that got 1000 → 5 µs
    a = 1000 + comp_us * 1000
    doc = impl(ev(f"""table 0 1e-06
        table 2000 9e-06
        enter 0 MPI_Irecv
        begin 0 7 4096 recv MPI_Irecv
        exit 1000
        enter {a} MPI_Wait
        end {a + wait_us * 1000} 7 1000
        exit {a + wait_us * 1000}
        finish {a + wait_us * 1000}"""))
    (tr,) = doc["transfers"]
    assert tr["bytes"] == 1000 and tr["kind"] == "recv" and close(tr["xfer_s"], 5 * US)
    assert close(tr["min_s"], mn * US) and close(tr["max_s"], mx * US), tr
    assert doc["profile"]["counters"]["table_extrapolated"] == 0


def test_worked_computation_split_by_a_call(impl: Runner) -> None:
    # begin at 0.5 in [0, 1]; comp [1, 3]; MPI_Test [3, 3.5]; comp [3.5, 6.5]; end at 7:
    # comp = 2 + 3 = 5, noncomp = 6.5 - 5 = 1.5; xfer 5 → max 5, min 3.5
    doc = impl(ev("""table 64 5e-06
        enter 0 MPI_Isend
        begin 500 3 64 send MPI_Isend
        exit 1000
        enter 3000 MPI_Test
        exit 3500
        enter 6500 MPI_Wait
        end 7000 3 -1
        exit 8000
        finish 8000"""))
    (tr,) = doc["transfers"]
    assert close(tr["max_s"], 5 * US) and close(tr["min_s"], 3.5 * US), tr
    assert close(doc["profile"]["totals"]["comp_s"], 5 * US)
    assert close(doc["profile"]["totals"]["call_s"], 3 * US)


def test_worked_in_call(impl: Runner) -> None:
    # blocking send, and an Isend completed inside the same (nesting) call: both 0 / 0
    doc = impl(ev("""table 0 1e-06
        enter 0 MPI_Send
        incall 10 100 send MPI_Send
        exit 500
        enter 1000 MPI_Sendrecv
        begin 1010 9 100 send MPI_Sendrecv
        enter 1020 MPI_Wait
        end 1030 9 -1
        exit 1040
        exit 1050
        finish 1050"""))
    a, b = doc["transfers"]
    assert a["case"] == b["case"] == "in-call"
    assert a["key"] is None and b["key"] == 9
    assert a["min_s"] == a["max_s"] == b["min_s"] == b["max_s"] == 0
    prof = doc["profile"]
    assert prof["counters"]["nested_calls"] == 1
    assert {f["fn"]: f["calls"] for f in prof["by_function"]} == {"MPI_Send": 1,
                                                                   "MPI_Sendrecv": 1}
    assert close(prof["totals"]["call_s"], 550e-9) and close(prof["totals"]["comp_s"], 500e-9)
    assert prof["cases"] == {"in-call": 2, "across-calls": 0, "begin-only": 0, "end-only": 0}


def test_worked_checks(impl: Runner) -> None:
    # table 0 B 2 µs, 4096 B 10 µs. MPI_Sendrecv of 2 KiB out (6 µs) and 1 KiB in (4 µs) in
    # a 5 µs call: the send is flagged (1 µs over), the receive not; the call is 1 µs short
    # of its longest transfer (not 5 µs short of their sum: they may run at once).
    # MPI_Recv of 4 KiB (10 µs) in 3 µs: 7 µs. MPI_Isend of 4 KiB waited for 3 µs after
    # its post: across calls, 7 µs over. A blocking send left open at the end: unchecked.
    doc = impl(ev("""table 0 2e-06
        table 4096 1e-05
        enter 0 MPI_Sendrecv
        incall 0 2048 send MPI_Sendrecv
        incall 0 1024 recv MPI_Sendrecv
        exit 5000
        enter 6000 MPI_Recv
        incall 6000 4096 recv MPI_Recv
        exit 9000
        enter 10000 MPI_Isend
        begin 10000 3 4096 send MPI_Isend
        exit 11000
        enter 12000 MPI_Wait
        end 13000 3 -1
        exit 13000
        enter 20000 MPI_Send
        incall 20000 0 send MPI_Send
        finish 20000"""))
    checks = doc["profile"]["checks"]
    inc, acr = checks["in_call"], checks["across_calls"]
    assert (inc["transfers"], inc["calls"], inc["calls_beyond"], inc["unchecked"]) == (3, 2, 2, 1)
    assert close(inc["xfer_s"], 20 * US) and close(inc["call_s"], 8 * US)
    assert close(inc["longest_s"], 16 * US) and close(inc["beyond_s"], 8 * US)
    assert inc["flagged"]["transfers"] == 2 and close(inc["flagged"]["xfer_s"], 16 * US)
    assert close(inc["flagged"]["excess_s"], 8 * US)
    assert acr["transfers"] == 1 and acr["flagged"]["transfers"] == 1
    assert close(acr["flagged"]["excess_s"], 7 * US)
    assert close(checks["beyond_s"], 15 * US)
    assert [(r["fn"], r["check"], r["transfers"]) for r in checks["by_function"]] == [
        ("MPI_Isend", "across-calls", 1), ("MPI_Recv", "in-call", 1),
        ("MPI_Sendrecv", "in-call", 1)]
    assert [(r["lo"], r["check"]) for r in checks["by_bin"]] == [
        (2048, "in-call"), (4096, "in-call"), (4096, "across-calls")]
    assert doc["profile"]["counters"]["xfer_exceeds_call"] == 2
    check_invariants(doc)


def test_worked_table_lookup(impl: Runner) -> None:
    # (100, 1 µs), (1000, 2 µs), (2000, 4 µs): 0 → 1 (below), 550 → 1.5, 1000 → 2,
    # 3000 → 4 + 2 µs/1000 B · 1000 B = 6 (extrapolated)
    doc = impl(ev("""table 1000 2e-06
        table 100 1e-06
        table 2000 4e-06
        enter 0 MPI_Send
        incall 0 0 send MPI_Send
        incall 0 550 send MPI_Send
        incall 0 1000 send MPI_Send
        incall 0 3000 recv MPI_Send
        exit 10
        finish 10"""))
    assert [t["xfer_s"] for t in doc["transfers"]] == pytest.approx(
        [1 * US, 1.5 * US, 2 * US, 6 * US], rel=REL)
    assert doc["profile"]["counters"]["table_extrapolated"] == 1
    bins = [(b["lo"], b["hi"], b["transfers"]) for b in doc["profile"]["by_bin"]]
    assert bins == [(0, 1, 1), (512, 1024, 2), (2048, 4096, 1)]
    one = impl(ev("table 64 3e-06\nenter 0 MPI_Send\nincall 0 1000000 send MPI_Send\n"
                  "incall 0 1 send MPI_Send\nexit 1\nfinish 1"))
    assert [t["xfer_s"] for t in one["transfers"]] == pytest.approx([3 * US, 3 * US], rel=REL)
    assert one["profile"]["counters"]["table_extrapolated"] == 1


def test_worked_custom_bins(impl: Runner) -> None:
    doc = impl(ev("""table 0 1e-06
        bins 100 1000
        enter 0 MPI_Send
        incall 0 0 send MPI_Send
        incall 0 99 send MPI_Send
        incall 0 100 send MPI_Send
        incall 0 5000 send MPI_Send
        exit 1
        finish 1"""))
    bins = [(b["lo"], b["hi"], b["transfers"]) for b in doc["profile"]["by_bin"]]
    assert bins == [(0, 100, 2), (100, 1000, 1), (1000, None, 1)]


def test_worked_lifecycle_counters(impl: Runner) -> None:
    # a persistent receive used three times (once restarted while active), completions of
    # nothing, cancel, PROC_NULL, a plain handle shared by two sends, free of an active
    # request, and one transfer left for finish
    doc = impl(ev("""table 0 1e-06
        table 1000 2e-06
        pinit 5 4096 recv MPI_Recv_init
        enter 0 MPI_Start
        start 0 5
        start 0 77
        exit 10
        enter 20 MPI_Wait
        end 20 5 100
        end 20 5 -1
        exit 30
        enter 40 MPI_Start
        start 40 5
        start 40 5
        exit 50
        enter 60 MPI_Wait
        end 60 5 -1
        exit 70
        enter 80 MPI_Isend
        begin 80 1 10 null MPI_Isend
        begin 80 2 20 send MPI_Isend
        begin 80 2 30 send MPI_Isend
        begin 80 3 40 send MPI_Isend
        begin 80 4 50 recv MPI_Irecv
        exit 90
        enter 100 MPI_Wait
        end 100 1 -1
        end 100 3 -1 cancelled
        end 100 8 -1
        free 100 4
        free 100 5
        free 100 6
        end 100 5 12
        end 100 2 -1
        exit 110
        finish 110"""))
    got = [(t["key"], t["bytes"], t["kind"], t["fn"], t["case"]) for t in doc["transfers"]]
    assert got == [
        (5, 100, "recv", "MPI_Recv_init", "across-calls"),
        (5, 4096, "recv", "MPI_Recv_init", "begin-only"),  # restarted while active
        (5, 4096, "recv", "MPI_Recv_init", "across-calls"),
        (8, 0, "unknown", "MPI_Wait", "end-only"),
        (4, 50, "recv", "MPI_Irecv", "begin-only"),  # freed while active
        (5, 12, "unknown", "MPI_Wait", "end-only"),  # its description was freed
        (2, 20, "send", "MPI_Isend", "across-calls"),  # the older of the shared handle
        (2, 30, "send", "MPI_Isend", "begin-only"),  # left at finish
    ]
    c = doc["profile"]["counters"]
    assert {k: c[k] for k in COUNTERS} == {
        "table_extrapolated": 2, "nested_calls": 0, "unmonitored_transfers": 0,
        "inactive_completions": 1, "handle_reused": 1, "proc_null": 1, "cancelled": 1,
        "start_unknown": 1, "freed_active": 1, "free_unknown": 1, "region_mismatch": 0,
        "unfinished": 1}
    assert c["handle_shared"] == 1
    # 5 (recv, 100 B, begun at 0 in call 1, ended at 20 in call 2): comp 10, span 20 →
    # noncomp 10 ns; xfer 1.1 µs → max 10 ns; the paper's min would be 1.09 µs > max (the
    # table says 1.1 µs but the events are 20 ns apart): clamped to max and counted, as
    # are the second use of 5 and the first send on 2
    first = doc["transfers"][0]
    assert close(first["xfer_s"], 1.1 * US) and close(first["max_s"], 10e-9)
    assert close(first["min_s"], 10e-9)
    assert c["xfer_exceeds_span"] == 3
    check_invariants(doc)


def test_worked_completion_paths(impl: Runner) -> None:
    # Isendrecv (a send and a joined receive on one request, one Wait), a receive seen
    # complete by two Request_get_status calls before its Wait, a generalized request, a
    # query of a request never seen, an Isendrecv freed while active (receive side to
    # MPI_PROC_NULL) and one left at finish. Transfer time 10 us at every size.
    doc = impl(ev("""table 0 1e-05
        table 100000 1e-05
        enter 0 MPI_Isendrecv
        begin 0 7 1000 send MPI_Isendrecv
        join 0 7 2000 recv MPI_Isendrecv
        exit 1000
        enter 101000 MPI_Wait
        end 102000 7 1500
        exit 102000
        enter 200000 MPI_Irecv
        begin 200000 9 100 recv MPI_Irecv
        exit 201000
        enter 251000 MPI_Request_get_status
        end 252000 9 80 query
        exit 252000
        enter 262000 MPI_Request_get_status
        end 263000 9 80 query
        exit 263000
        enter 300000 MPI_Wait
        end 301000 9 80
        exit 301000
        enter 400000 MPI_Grequest_start
        begin 400000 11 0 greq MPI_Grequest_start
        exit 401000
        enter 402000 MPI_Wait
        end 403000 11 -1
        exit 403000
        enter 500000 MPI_Request_get_status
        end 501000 12 64 query
        exit 501000
        enter 502000 MPI_Wait
        end 503000 12 64
        exit 503000
        enter 600000 MPI_Isendrecv
        begin 600000 13 1000 send MPI_Isendrecv
        join 600000 13 1000 null MPI_Isendrecv
        exit 601000
        enter 602000 MPI_Request_free
        free 602000 13
        exit 603000
        enter 700000 MPI_Isendrecv
        begin 700000 14 10 send MPI_Isendrecv
        join 700000 14 20 recv MPI_Isendrecv
        exit 701000
        enter 800000 MPI_Finalize
        exit 800100
        finish 800100"""))
    got = [(t["key"], t["bytes"], t["kind"], t["fn"], t["case"]) for t in doc["transfers"]]
    assert got == [
        (7, 1000, "send", "MPI_Isendrecv", "across-calls"),
        (7, 1500, "recv", "MPI_Isendrecv", "across-calls"),  # the received size
        (9, 80, "recv", "MPI_Irecv", "across-calls"),  # once, at the first query
        (12, 64, "unknown", "MPI_Request_get_status", "end-only"),  # its Wait: nothing more
        (13, 1000, "send", "MPI_Isendrecv", "begin-only"),
        (14, 10, "send", "MPI_Isendrecv", "begin-only"),
        (14, 20, "recv", "MPI_Isendrecv", "begin-only"),
    ]
    # 7: 100 us of computation, 2 us in calls between begin and end: max = min(100, 10),
    # min = 10 - 2. 9: closed at the first query (50 us computed, 2 us in calls); at its
    # Wait it would have had 97 us and 4 us, min 6 us.
    for tr in doc["transfers"][:3]:
        assert close(tr["max_s"], 10 * US) and close(tr["min_s"], 8 * US), tr
    c = doc["profile"]["counters"]
    assert (c["grequest_completions"], c["freed_active"], c["proc_null"], c["unfinished"],
            c["handle_shared"], c["inactive_completions"]) == (1, 1, 1, 2, 0, 0)
    assert doc["profile"]["cases"] == {"in-call": 0, "across-calls": 3, "begin-only": 3,
                                       "end-only": 1}
    check_invariants(doc)


def test_worked_pcontrol_and_regions(impl: Runner) -> None:
    doc = impl(ev("""table 1000 2e-06
        enter 0 MPI_Init
        exit 100
        region_begin 600 solve
        enter 1600 MPI_Isend
        begin 1600 1 1000 send MPI_Isend
        exit 1700
        region_begin 2000 inner
        region_end 2500 solve
        region_end 2600 nothere
        enter 3000 MPI_Pcontrol
        pcontrol 3000 0
        exit 3050
        enter 5000 MPI_Wait
        end 5500 1 -1
        exit 5600
        enter 6000 MPI_Isend
        begin 6000 2 1000 send MPI_Isend
        exit 6100
        enter 6200 MPI_Send
        incall 6200 1000 send MPI_Send
        exit 6300
        enter 7000 MPI_Pcontrol
        pcontrol 7000 1
        exit 7010
        enter 8000 MPI_Wait
        end 8100 2 -1
        exit 8200
        finish 8200"""))
    # transfer 1 (reported: on at its begin): comp [1.7, 3] + [3.05, 5] = 3.25 µs, span 3.9 →
    # noncomp 0.65; xfer 2 → max 2, min 1.35. Transfer 2 and the MPI_Send were posted while
    # off.
    (tr,) = doc["transfers"]
    assert tr["region"] == "solve" and close(tr["max_s"], 2 * US)
    assert close(tr["min_s"], 1.35 * US)
    prof = doc["profile"]
    assert close(prof["totals"]["comp_s"], 3790e-9) and close(prof["totals"]["call_s"], 450e-9)
    regs = {r["region"]: (r["comp_s"] * 1e9, r["call_s"] * 1e9, r["transfers"])
            for r in prof["by_region"]}
    assert regs == {
        "(no region)": pytest.approx((1990, 350, 0)),
        "inner": pytest.approx((500, 0, 0)),
        "solve": pytest.approx((1300, 100, 1)),
    }
    fns = {f["fn"]: (f["calls"], round(f["call_s"] * 1e9), f["transfers"])
           for f in prof["by_function"]}
    assert fns == {"MPI_Init": (1, 100, 0), "MPI_Isend": (1, 100, 1),
                   "MPI_Pcontrol": (1, 50, 0), "MPI_Wait": (1, 200, 0)}
    assert prof["counters"]["unmonitored_transfers"] == 2
    assert prof["counters"]["region_mismatch"] == 2
    check_invariants(doc)
