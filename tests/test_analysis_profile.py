"""Tests of profile/analysis/profile.py: hand-made profile runs in, a schema-valid cross-rank
merge out.

Rank documents are built from "groups" of transfers (function, region, size bin, count,
transfer time, min and max bounds), so totals and breakdowns are consistent the way the
profiler writes them, and validated against profile-run-v1. Times are binary fractions,
so sums are exact and expected numbers can be written down by hand.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_overlap.core import documents as schema
from mpi_overlap.core.formatting import fmt_time
from mpi_overlap.profile.analysis.profile import analyze_profile, bin_label, rank_list
from property_examples import examples

KIB, MIB = 1024, 1 << 20
NO_REGION = "(no region)"
COUNTERS = (
    "events",
    "flushes",
    "nested_calls",
    "unmonitored_transfers",
    "handle_reused",
    "proc_null",
    "cancelled",
    "start_unknown",
    "freed_active",
    "free_unknown",
    "inactive_completions",
    "unfinished",
    "region_mismatch",
    "region_overflow",
    "table_extrapolated",
    "coll_size_extrapolated",
    "coll_nb_as_blocking",
    "coll_uncalibrated",
    "xfer_exceeds_span",
    "out_of_memory",
    "outstanding_peak",
)


@dataclass(frozen=True)
class Group:
    """`n` transfers posted by `fn` in `region`, sizes in [lo, hi), with summed measures."""

    fn: str
    region: str
    lo: int
    hi: int | None
    n: int
    xfer: float
    mn: float
    mx: float


def _cell(groups: list[Group]) -> dict[str, Any]:
    xfer = sum(g.xfer for g in groups)
    mx = sum(g.mx for g in groups)
    return {
        "transfers": sum(g.n for g in groups),
        "xfer_s": xfer,
        "min_s": sum(g.mn for g in groups),
        "max_s": mx,
        "nonoverlap_s": xfer - mx,
    }


def rank_doc(
    rank: int,
    groups: list[Group],
    *,
    size: int,
    comp: dict[str, float] | None = None,
    calls: dict[str, tuple[int, float]] | None = None,
    status: str = "complete",
    reason: str | None = None,
    cases: dict[str, int] | None = None,
    counters: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One profile-rank-v1 document whose totals are the sums of its breakdowns."""
    comp = comp or {NO_REGION: 1.0}
    calls = dict(calls or {})
    for g in groups:  # every posting function was called at least once
        calls.setdefault(g.fn, (g.n, 0.0))
    bins = sorted({(g.lo, g.hi) for g in groups}, key=lambda b: b[0])
    regions = sorted({g.region for g in groups} | set(comp))
    # call time goes to the first region of the function's transfers, else (no region)
    fn_region = {g.fn: g.region for g in reversed(groups)}
    region_call = {r: 0.0 for r in regions}
    for fn, (_, t) in calls.items():
        region_call[
            fn_region.get(fn, NO_REGION) if fn_region.get(fn) in region_call else regions[0]
        ] += t
    totals = _cell(groups)
    totals.update(comp_s=sum(comp.values()), call_s=sum(t for _, t in calls.values()))
    all_cases = {
        "in-call": 0,
        "across-calls": sum(g.n for g in groups),
        "begin-only": 0,
        "end-only": 0,
    }
    all_cases.update(cases or {})
    all_counters = {c: 0 for c in COUNTERS}
    all_counters.update(counters or {})
    return {
        "schema": "mpi-overlap/profile-rank",
        "schema_version": 1,
        "tool_version": "0.1.0",
        "status": status,
        "reason": reason,
        "rank": rank,
        "size": size,
        "nodes": 1,
        "host": f"node{rank // 4}",
        "pid": 1000 + rank,
        "threads": 1,
        "mpi_library_version": "MPICH Version: 4.2.0 (test)",
        "table": {"path": "/t.table", "machine_fp": "ab", "toolchain_fp": "cd", "forced": False},
        "clock": {"source": "tsc", "s_per_tick": 1e-9},
        "wall_s": 10.0,
        "queue_events": 4096,
        "profile": {
            "totals": totals,
            "cases": all_cases,
            "by_bin": [
                {"lo": lo, "hi": hi, **_cell([g for g in groups if (g.lo, g.hi) == (lo, hi)])}
                for lo, hi in bins
            ],
            "by_function": [
                {
                    "fn": fn,
                    "calls": calls[fn][0],
                    "call_s": calls[fn][1],
                    **_cell([g for g in groups if g.fn == fn]),
                }
                for fn in sorted(calls)
            ],
            "by_region": [
                {
                    "region": r,
                    "comp_s": comp.get(r, 0.0),
                    "call_s": region_call[r],
                    **_cell([g for g in groups if g.region == r]),
                }
                for r in regions
            ],
            "counters": all_counters,
        },
    }


def make_result(
    docs: list[dict[str, Any]],
    *,
    expected: int | None = None,
    missing: list[int] | None = None,
    forced: bool = False,
) -> dict[str, Any]:
    missing = missing or []
    complete = not missing and all(d["status"] == "complete" for d in docs) and bool(docs)
    result = {
        "schema": "mpi-overlap/profile-run",
        "schema_version": 1,
        "benchmark": "profile",
        "status": "complete" if complete else "incomplete",
        "app": {"argv": ["/bin/app", "-n", "10"], "cwd": "/tmp"},
        "ranks_expected": expected if expected is not None else len(docs) + len(missing),
        "table": {"path": "/t.table", "forced": forced},
        "bins": None,
        "ranks": docs,
        "missing_ranks": missing,
        "warnings": [],
    }
    assert schema.result_errors(result) == []
    return result


def three_ranks() -> dict[str, Any]:
    """Rank 0 loses 0.75 s, rank 1 0.25 s, rank 2 has no transfers (see the module doc)."""
    r0 = rank_doc(
        0,
        [
            Group("MPI_Isend", "solve", MIB, 2 * MIB, 10, 1.0, 0.25, 0.75),
            Group("MPI_Send", NO_REGION, KIB, 2 * KIB, 5, 0.5, 0.0, 0.0),
        ],
        size=3,
        comp={NO_REGION: 2.0, "solve": 4.0},
        calls={"MPI_Wait": (10, 1.0), "MPI_Isend": (10, 0.5), "MPI_Send": (5, 0.5)},
    )
    r1 = rank_doc(
        1,
        [
            Group("MPI_Irecv", "solve", MIB, 2 * MIB, 10, 1.0, 0.5, 1.0),
            Group("MPI_Recv", NO_REGION, KIB, 2 * KIB, 5, 0.5, 0.0, 0.25),
        ],
        size=3,
        comp={NO_REGION: 3.0, "solve": 3.0},
        calls={"MPI_Wait": (10, 1.0), "MPI_Irecv": (10, 0.0), "MPI_Recv": (5, 1.0)},
    )
    r2 = rank_doc(2, [], size=3, comp={NO_REGION: 1.0}, calls={"MPI_Barrier": (4, 1.0)})
    return make_result([r0, r1, r2])


def _valid(doc: dict[str, Any]) -> dict[str, Any]:
    assert schema.analysis_errors(doc) == []
    return doc


# ---------------------------------------------------------------- known numbers


def test_job_sums_and_percentages() -> None:
    a = _valid(analyze_profile(three_ranks()))
    assert a["benchmark"] == "profile" and a["schema"] == "mpi-overlap/analysis"
    assert a["status"] == "complete" and a["warnings"] == []
    job = a["job"]
    assert job["ranks"] == 3 and job["transfers"] == 30
    assert (job["xfer_s"], job["min_s"], job["max_s"]) == (3.0, 0.75, 2.0)
    assert job["nonoverlap_s"] == 1.0 and job["nonoverlap_max_s"] == 2.25
    assert job["min_pct"] == 25.0
    assert job["max_pct"] == pytest.approx(200 / 3)
    assert job["comp_s"] == 13.0 and job["call_s"] == 5.0
    assert job["mpi_share_pct"] == pytest.approx(100 * 5 / 18)


def test_per_rank_measures() -> None:
    ranks = {r["rank"]: r for r in analyze_profile(three_ranks())["ranks"]}
    r0 = ranks[0]
    assert r0["nonoverlap_s"] == 0.75
    assert r0["min_pct"] == pytest.approx(100 / 6) and r0["max_pct"] == 50.0
    assert r0["mpi_share_pct"] == pytest.approx(100 * 2 / 8)
    assert ranks[1]["max_pct"] == pytest.approx(250 / 3)
    # zero transfer time: no percentage, not zero
    r2 = ranks[2]
    assert r2["xfer_s"] == 0 and r2["min_pct"] is None and r2["max_pct"] is None
    assert r2["nonoverlap_pct"] is None and r2["mpi_share_pct"] == 50.0


def test_worst_rank_and_across_ranks_odd_and_even_counts() -> None:
    a = analyze_profile(three_ranks())
    assert a["worst_rank"] == {
        "rank": 0,
        "nonoverlap_s": 0.75,
        "share_pct": 75.0,
        "min_pct": pytest.approx(100 / 6),
        "max_pct": 50.0,
    }
    lost = a["across_ranks"]["nonoverlap_s"]
    assert (lost["n"], lost["min"], lost["min_rank"]) == (3, 0.0, 2)
    assert (lost["median"], lost["max"], lost["max_rank"]) == (0.25, 0.75, 0)
    # percentages leave out rank 2 (no transfer time): an even count, mean of the middle two
    lo = a["across_ranks"]["min_pct"]
    assert lo["n"] == 2 and lo["median"] == pytest.approx(25.0)
    assert (lo["min_rank"], lo["max_rank"]) == (0, 1)
    # ties go to the lowest rank
    xfer = a["across_ranks"]["xfer_s"]
    assert (xfer["max"], xfer["max_rank"]) == (1.5, 0)


def test_even_rank_count_median() -> None:
    docs = [
        rank_doc(r, [Group("MPI_Send", NO_REGION, KIB, 2 * KIB, 1, 1.0, 0.0, 1.0 - lost)], size=4)
        for r, lost in enumerate((0.5, 0.125, 0.25, 0.0))
    ]
    a = _valid(analyze_profile(make_result(docs)))
    lost = a["across_ranks"]["nonoverlap_s"]
    assert lost["median"] == pytest.approx(0.1875)
    assert (lost["min_rank"], lost["max_rank"]) == (3, 0)
    assert a["worst_rank"]["rank"] == 0


def test_rankings_order_and_shares() -> None:
    a = analyze_profile(three_ranks())
    bins = a["rankings"]["bins"]
    assert [b["label"] for b in bins] == ["1 KiB–2 KiB", "1 MiB–2 MiB"]
    assert [b["nonoverlap_s"] for b in bins] == [0.75, 0.25]
    assert [b["share_pct"] for b in bins] == [75.0, 25.0]
    assert bins[0]["worst_rank"] == 0 and bins[0]["ranks"] == 2
    assert bins[1]["min_pct"] == 37.5 and bins[1]["max_pct"] == 87.5

    fns = a["rankings"]["functions"]
    # MPI_Isend and MPI_Recv lose 0.25 each: more transfer time goes first
    assert [f["fn"] for f in fns[:4]] == ["MPI_Send", "MPI_Isend", "MPI_Recv", "MPI_Irecv"]
    assert fns[0]["share_pct"] == 50.0 and fns[3]["share_pct"] == 0.0
    wait = next(f for f in fns if f["fn"] == "MPI_Wait")
    assert wait["transfers"] == 0 and wait["min_pct"] is None and wait["calls"] == 20
    assert wait["call_s"] == 2.0 and wait["call_share_pct"] == 40.0
    assert a["call_time"][0] == {"fn": "MPI_Wait", "calls": 20, "call_s": 2.0, "share_pct": 40.0}

    regions = a["rankings"]["regions"]
    assert [r["region"] for r in regions] == [NO_REGION, "solve"]
    assert regions[1]["comp_s"] == 7.0 and regions[1]["xfer_s"] == 2.0
    for key in ("bins", "functions", "regions"):
        assert sum(e["share_pct"] for e in a["rankings"][key]) == pytest.approx(100.0)


def test_bins_by_rank_matrix() -> None:
    m = analyze_profile(three_ranks())["bins_by_rank"]
    assert m["ranks"] == [0, 1, 2]
    assert [b["lo"] for b in m["bins"]] == [KIB, MIB]
    assert m["min_pct"][1][:2] == [25.0, 50.0] and m["max_pct"][1][:2] == [75.0, 100.0]
    assert m["max_pct"][0] == [0.0, 50.0, None]  # rank 2 sent nothing
    assert m["xfer_s"][0] == [0.5, 0.5, 0.0] and m["transfers"][1] == [10, 10, 0]


def test_findings_are_computed() -> None:
    text = " ".join(analyze_profile(three_ranks())["findings"])
    assert "Overlap between 25 % and 67 % of 3.00 s transfer time" in text
    assert "at least 1.00 s (33 %) was not overlapped" in text
    assert "Worst rank: rank 0 with 750 ms not overlapped (75 %" in text
    assert "Bin 1 KiB–2 KiB loses 75 % of the non-overlapped time" in text
    assert "Transfers posted by MPI_Send lose 50 %" in text
    assert "Region (no region) loses 75 %" in text
    assert "Every transfer was attributed precisely" in text
    assert "counted for information" not in text
    # a counter that is information, not an anomaly, is named beside that sentence, so
    # that it agrees with the notes table that lists it
    shared = three_ranks()
    shared["ranks"][1]["profile"]["counters"]["handle_shared"] = 400
    text = " ".join(analyze_profile(shared)["findings"])
    assert ("no anomaly counted; counted for information, not anomalies: handle_shared 400"
            in text)
    # the numbers follow the data, not a template
    other = three_ranks()
    other["ranks"][0]["profile"]["totals"]["max_s"] = 1.5
    assert "Worst rank: rank 1" in " ".join(analyze_profile(other)["findings"])


def test_no_transfers_anywhere() -> None:
    a = _valid(analyze_profile(make_result([rank_doc(0, [], size=1)])))
    assert a["job"]["min_pct"] is None and a["job"]["max_pct"] is None
    assert a["worst_rank"] is None and a["rankings"]["bins"] == []
    assert a["findings"][0].startswith("No data transfer time was recorded")


def test_empty_result() -> None:
    a = _valid(analyze_profile(make_result([], expected=2, missing=[0, 1])))
    assert a["status"] == "incomplete" and a["job"]["ranks"] == 0
    assert any("no rank wrote a profile" in w for w in a["warnings"])
    assert a["findings"] == ["No rank reported measurements: there is nothing to characterise."]


# ---------------------------------------------------------------- incomplete runs


def test_incomplete_missing_and_disabled_ranks() -> None:
    result = three_ranks()
    result["ranks"][1]["status"] = "incomplete"
    result["ranks"][1]["reason"] = "killed by signal 9"
    result["ranks"][2]["status"] = "disabled"
    result["ranks"][2]["reason"] = "transfer-time table made for another machine"
    result["missing_ranks"] = [3, 4, 5]
    result["ranks_expected"] = 6
    result["status"] = "incomplete"
    a = _valid(analyze_profile(result))
    assert a["status"] == "incomplete"
    assert (a["partial_ranks"], a["disabled_ranks"], a["missing_ranks"]) == ([1], [2], [3, 4, 5])
    assert a["ranks_reported"] == [0, 1, 2]
    warnings = " | ".join(a["warnings"])
    assert "ranks 3-5 wrote no profile: job figures cover 2 of 6 ranks" in warnings
    assert "rank(s) 1 incomplete (killed by signal 9)" in warnings
    assert "rank(s) 2 disabled (transfer-time table made for another machine)" in warnings
    # the disabled rank is in no figure, the partial one is
    assert a["job"]["ranks"] == 2 and a["job"]["comp_s"] == 12.0
    assert a["across_ranks"]["comp_s"]["n"] == 2
    assert a["bins_by_rank"]["ranks"] == [0, 1]
    assert next(r for r in a["ranks"] if r["rank"] == 2)["in_totals"] is False
    assert "MPI_Barrier" not in {f["fn"] for f in a["rankings"]["functions"]}


def test_complete_result_with_a_running_rank_is_incomplete() -> None:
    result = three_ranks()
    result["ranks"][0]["status"] = "running"
    a = analyze_profile(result)
    assert a["status"] == "incomplete" and a["partial_ranks"] == [0]
    assert any("the program stopped before MPI_Finalize" in w for w in a["warnings"])


def test_ranks_that_did_not_process_their_events_are_named() -> None:
    """MPI_OVERLAP_PROCESS=0 (bench profiler-overhead's cost split): such a rank's document
    says "processing": "off", and the analysis says that it measured nothing."""
    result = three_ranks()
    for doc in result["ranks"][1:]:
        doc["processing"] = "off"
    a = _valid(analyze_profile(result))
    assert any(w.startswith("rank(s) 1-2 counted their events without processing them")
               for w in a["warnings"]), a["warnings"]
    assert not any("without processing" in w for w in _valid(analyze_profile(
        three_ranks()))["warnings"])


def test_forced_table_and_inconsistent_totals_warn() -> None:
    result = three_ranks()
    result["table"]["forced"] = True
    result["ranks"][0]["profile"]["totals"]["min_s"] = 0.9  # > max_s 0.75
    a = _valid(analyze_profile(result))
    warnings = " | ".join(a["warnings"])
    assert "table was forced" in warnings and "rank 0: min_s 0.9 > max_s 0.75" in warnings
    r0 = a["ranks"][0]
    assert r0["min_pct"] == r0["max_pct"] == 50.0


def test_duplicate_rank_is_ignored_with_a_warning() -> None:
    result = three_ranks()
    result["ranks"].append(copy.deepcopy(result["ranks"][0]))
    a = analyze_profile(result)
    assert a["job"]["ranks"] == 3 and any("appears twice" in w for w in a["warnings"])


# ---------------------------------------------------------------- counters and notes


def test_cases_counters_and_unattributed_notes() -> None:
    result = three_ranks()
    result["ranks"][0]["profile"]["cases"]["begin-only"] = 2
    result["ranks"][1]["profile"]["cases"]["end-only"] = 1
    c0 = result["ranks"][0]["profile"]["counters"]
    c1 = result["ranks"][1]["profile"]["counters"]
    c0.update(handle_reused=1, cancelled=3, outstanding_peak=7, events=100, new_thing=4)
    c1.update(handle_reused=2, table_extrapolated=5, outstanding_peak=3, events=50)
    a = _valid(analyze_profile(result))
    assert a["cases"]["begin-only"] == 2 and a["cases"]["end-only"] == 1
    assert a["cases"]["across-calls"] == 30
    counters = a["counters"]
    assert counters["handle_reused"] == 3 and counters["events"] == 150
    assert counters["outstanding_peak"] == 7  # a peak: the largest, not the sum
    notes = {n["name"]: n for n in a["unattributed"]}
    assert set(notes) == {
        "begin-only",
        "end-only",
        "handle_reused",
        "table_extrapolated",
        "new_thing",
    }
    assert notes["handle_reused"]["count"] == 3 and notes["handle_reused"]["ranks"] == [0, 1]
    assert notes["begin-only"]["source"] == "case" and notes["begin-only"]["ranks"] == [0]
    assert "extrapolated" in notes["table_extrapolated"]["meaning"]
    assert "not known" in notes["new_thing"]["meaning"]
    assert [n["name"] for n in a["info_counters"]] == ["cancelled"]
    assert "Not attributed precisely: begin-only 2, end-only 1, handle_reused 3" in " ".join(
        a["findings"]
    )


# ---------------------------------------------------------------- helpers


def test_formatting_helpers() -> None:
    assert fmt_time(0.00203) == "2.03 ms" and fmt_time(850e-6) == "850 µs"
    assert fmt_time(12.4) == "12.4 s" and fmt_time(0) == "0 s" and fmt_time(5e-9) == "5.00 ns"
    assert bin_label(MIB, 2 * MIB) == "1 MiB–2 MiB" and bin_label(0, 1) == "0 B"
    assert bin_label(64 * KIB, None) == "≥ 64 KiB"
    assert rank_list([5, 0, 1, 2, 7, 6]) == "0-2,5-7" and rank_list([]) == ""


def test_sample_shaped_like_the_profiler(tmp_path: Any) -> None:
    """Two ranks like a real run: Isend 1 MiB + Send 1 KiB against Irecv + Recv."""
    r0 = rank_doc(
        0,
        [
            Group("MPI_Isend", NO_REGION, MIB, 2 * MIB, 20, 0.002, 0.0006, 0.002),
            Group("MPI_Send", NO_REGION, KIB, 2 * KIB, 20, 3e-5, 0.0, 0.0),
        ],
        size=2,
        calls={"MPI_Wait": (20, 0.0019)},
    )
    r1 = rank_doc(
        1,
        [
            Group("MPI_Irecv", NO_REGION, MIB, 2 * MIB, 20, 0.002, 0.0006, 0.002),
            Group("MPI_Recv", NO_REGION, KIB, 2 * KIB, 20, 3e-5, 0.0, 0.0),
        ],
        size=2,
        calls={"MPI_Wait": (20, 0.0019)},
    )
    a = _valid(analyze_profile(make_result([r0, r1])))
    assert a["rankings"]["bins"][0]["label"] == "1 KiB–2 KiB"
    assert a["rankings"]["bins"][0]["share_pct"] == pytest.approx(100.0)
    assert "even across ranks: 30.0 µs on every rank" in " ".join(a["findings"])


# ---------------------------------------------------------------- properties


@st.composite
def _groups(draw: st.DrawFn) -> list[Group]:
    out = []
    for _ in range(draw(st.integers(0, 4))):
        xfer = draw(st.floats(0.0, 5.0, allow_nan=False))
        hi = xfer * draw(st.floats(0.0, 1.0))
        lo = hi * draw(st.floats(0.0, 1.0))
        k = draw(st.integers(0, 20))
        out.append(
            Group(
                draw(st.sampled_from(["MPI_Isend", "MPI_Recv", "MPI_Allreduce"])),
                draw(st.sampled_from([NO_REGION, "halo", "solve"])),
                1 << k,
                1 << (k + 1),
                draw(st.integers(1, 50)),
                xfer,
                lo,
                hi,
            )
        )
    return out


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_groups(), min_size=1, max_size=6))
def test_bounds_ordered_and_shares_complete(per_rank: list[list[Group]]) -> None:
    n = len(per_rank)
    a = _valid(
        analyze_profile(make_result([rank_doc(r, g, size=n) for r, g in enumerate(per_rank)]))
    )

    def ordered(lo: float | None, hi: float | None) -> None:
        assert (lo is None) == (hi is None)
        if lo is not None and hi is not None:
            assert 0.0 <= lo <= hi <= 100.0

    ordered(a["job"]["min_pct"], a["job"]["max_pct"])
    for r in a["ranks"]:
        ordered(r["min_pct"], r["max_pct"])
    for entries in a["rankings"].values():
        for e in entries:
            ordered(e["min_pct"], e["max_pct"])
        total = sum(e["nonoverlap_s"] for e in entries)
        if total > 0:
            assert sum(e["share_pct"] for e in entries) == pytest.approx(100.0)
    m = a["bins_by_rank"]
    for row_lo, row_hi in zip(m["min_pct"], m["max_pct"], strict=True):
        for lo, hi in zip(row_lo, row_hi, strict=True):
            ordered(lo, hi)
    assert a["job"]["nonoverlap_s"] == pytest.approx(
        sum(r["nonoverlap_s"] for r in a["ranks"]), abs=1e-12
    )


# ---------------------------------------------------------------- the headline (issue 11)


def idle_run() -> dict[str, Any]:
    """Rank 0 computes 2 s; rank 1 spends 1.99 s of 2 s in MPI_Barrier (an idle rank);
    both exchange a few tiny blocking messages."""
    tiny = [Group("MPI_Send", NO_REGION, 8, 16, 4, 4e-6, 0.0, 0.0)]
    r0 = rank_doc(0, tiny, size=2, comp={NO_REGION: 2.0},
                  calls={"MPI_Barrier": (1, 0.001), "MPI_Send": (4, 1e-5)},
                  cases={"in-call": 4, "across-calls": 0})
    r1 = rank_doc(1, [Group("MPI_Recv", NO_REGION, 8, 16, 4, 4e-6, 0.0, 0.0)], size=2,
                  comp={NO_REGION: 0.01},
                  calls={"MPI_Barrier": (1, 1.99), "MPI_Recv": (4, 1e-5)},
                  cases={"in-call": 4, "across-calls": 0})
    return make_result([r0, r1])


def test_an_idle_rank_leads_the_findings() -> None:
    a = _valid(analyze_profile(idle_run()))
    assert a["headline"]["kind"] == "idle-rank"
    assert [i["rank"] for i in a["headline"]["idle_ranks"]] == [1]
    first = a["findings"][0]
    assert first.startswith("Rank 1 is idle: 99.5 % of its time in MPI calls, over 99.9 % of "
                            "that in MPI_Barrier")
    assert "while rank 0 computes 99.9 % of its time" in first
    assert a["two_sided"] is None  # no run directory, no trace


def test_blocking_only_transfers_say_why_overlap_is_zero() -> None:
    """0–0 % from in-call transfers is not a measured absence of overlap; with transfers a
    negligible part of the MPI time, their absolute times come first."""
    a = analyze_profile(idle_run())
    text = " ".join(a["findings"])
    assert ("0–0 %: every transfer began and ended inside one blocking call, which this "
            "layer cannot see into") in text
    assert "Transfers took only 8.00 µs of the 1.99 s spent in MPI calls" in text
    assert "each message counted on its sender and on its receiver" in text


def test_mpi_time_the_transfers_do_not_explain_leads_when_no_rank_is_idle() -> None:
    r = idle_run()
    for d in r["ranks"]:  # both ranks half computing, half in MPI: nobody idle
        d["profile"]["totals"]["comp_s"] = 1.0
        d["profile"]["totals"]["call_s"] = 1.0
    a = _valid(analyze_profile(r))
    assert a["headline"]["kind"] == "mpi-time-unexplained"
    assert a["findings"][0].startswith("MPI calls took 2.00 s (50 % of the time in calls and "
                                       "computation) but the transfers only 8.00 µs")
    assert "--trace" in a["findings"][0]


def test_inter_node_transfers_priced_as_intra_lead_the_findings() -> None:
    """A job across nodes priced with a table without an inter-node class: its bounds rest
    on the wrong network, which leads the findings, before the headline (issue 39)."""
    r = three_ranks()
    for d in r["ranks"][:2]:
        d["profile"]["counters"].update(inter_node_transfers=15, inter_as_intra=15)
    a = _valid(analyze_profile(r))
    caveat = a["headline"]["table_caveat"]
    assert a["findings"][0] == caveat
    assert caveat.startswith("Transfers priced with times not measured for them: 30 of 30 "
                             "transfers with a peer on another node used the table's "
                             "intra-node times")
    # the counter stays among the notes
    assert "Not attributed precisely: inter_as_intra 30 (see the notes)." in a["findings"]
    # every transfer priced with its own class: no caveat, the findings lead as before
    plain = _valid(analyze_profile(three_ranks()))
    assert "table_caveat" not in plain["headline"]
    assert a["findings"][1] == plain["findings"][0] and caveat not in plain["findings"]
