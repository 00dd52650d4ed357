"""`mpi-overlap export hatchet RUN_DIR`: a profile as Hatchet's literal format, loaded
here by Hatchet itself: the root holds the job's totals over ranks, each breakdown (size
bin, region) the sums of its children, the same numbers as the profile analysis —
including the open last size bin (≥ 1 GiB); under the root the call-site tree, program →
MPI function → call site → (post → completion) pair, with the profile's measures, the
pairs' known transfer counts for the call-site program (test_callsites.py), and a
Thicket of the two runs of `profile --env-matrix` that puts them side by side."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from cli_helpers import one_line_error, run_cli
from fake_runs import run_dir
from test_analysis_profile import MIB, Group, make_result, rank_doc
from test_report_profile import write_run

ht = pytest.importorskip("hatchet", reason="llnl-hatchet is in the dev extra (make setup)")
GIB = 1 << 30


def _rank(r: int, isend: float) -> dict:
    # MPI_Isend loses 0.1 s on rank 0 and 0.2 s on rank 1; MPI_Irecv loses nothing
    return rank_doc(r, [
        Group("MPI_Isend", "exchange", MIB, 2 * MIB, 5, isend, 0.1, isend - 0.1 * (r + 1)),
        Group("MPI_Irecv", "exchange", GIB, None, 5, 0.5, 0.1, 0.5),
    ], size=2, comp={"exchange": 1.0})


def test_hatchet_reads_the_export(tmp_path: Path) -> None:
    result = make_result([_rank(0, 1.0), _rank(1, 2.0)])
    result["app"]["argv"] = ["/home/u/halo"]
    d = write_run(tmp_path, "profile-run", result)
    proc = run_cli("export", "hatchet", str(d))
    assert proc.returncode == 0, proc.stderr
    literal = json.loads((d / "hatchet.json").read_text())
    gf = ht.GraphFrame.from_literal(literal)
    df = gf.dataframe.reset_index(drop=True).set_index("name")
    assert df.loc["exchange", "xfer_s"] == pytest.approx(4.0)  # region: 1.5 + 2.5
    assert df.loc["MPI_Isend", "xfer_s"] == pytest.approx(3.0)
    assert df.loc["MPI_Isend", "nonoverlap_s"] == pytest.approx(0.3)
    assert df.loc["MPI_Isend", "worst_rank"] == 1  # the rank losing most there
    assert df.loc["1 MiB–2 MiB", "xfer_s"] == pytest.approx(3.0)
    assert df.loc["≥ 1 GiB", "xfer_s"] == pytest.approx(1.0)  # the open last bin
    root = literal[0]
    assert root["frame"]["name"] == "halo" and root["metrics"]["xfer_s"] == pytest.approx(4.0)
    # the functions (most lost first), then the other breakdowns
    assert [c["frame"]["name"] for c in root["children"]] == ["MPI_Isend", "MPI_Irecv",
                                                              "by size", "by region"]
    assert [c["frame"]["type"] for c in root["children"]] == ["function", "function",
                                                              "breakdown", "breakdown"]


def test_only_a_profile_is_exported(tmp_path: Path) -> None:
    d = run_dir(tmp_path, "overhead", {"results": {}})
    one_line_error(run_cli("export", "hatchet", str(d)), "not a profile run", code=2)


# ---------------------------------------------------------------- the call-site tree


def _entry(transfers: int, xfer: float, low: float, high: float, **more: object) -> dict:
    pct = (lambda v: 100 * v / xfer) if xfer else (lambda v: None)
    return {"transfers": transfers, "xfer_s": xfer, "min_s": low, "max_s": high,
            "nonoverlap_s": xfer - high, "min_pct": pct(low), "max_pct": pct(high),
            "ranks": 2, "worst_rank": None if xfer == high else 1, **more}


def _waits(key: str, name: object, late_sender: float, **more: object) -> dict:
    return {key: name, "waiting_s": late_sender, "calls": 1, "late_sender_s": late_sender,
            "late_receiver_s": 0.0, "collective_s": 0.0, **more}


def _analysis() -> dict:
    """A made-up analysis: an MPI_Isend line completed by two MPI_Wait lines, an
    MPI_Irecv line completed by one of them, a blocking MPI_Send; traced (waiting)."""
    isend_a = _entry(3, 0.3, 0.1, 0.2, post="a.c:10 (f)", post_fn="MPI_Isend",
                     end="a.c:20 (f)", end_fn="MPI_Wait", polled=1)
    isend_b = _entry(1, 0.1, 0.0, 0.1, post="a.c:10 (f)", post_fn="MPI_Isend",
                     end="a.c:30 (g)", end_fn="MPI_Wait", polled=0)
    irecv = _entry(4, 0.4, 0.4, 0.4, post="a.c:11 (f)", post_fn="MPI_Irecv",
                   end="a.c:20 (f)", end_fn="MPI_Wait", polled=4)
    send = _entry(2, 0.2, 0.0, 0.0, post="a.c:40 (h)", post_fn="MPI_Send",
                  end="a.c:40 (h)", end_fn="MPI_Send", polled=0)
    sites = {"a.c:10 (f)": ("MPI_Isend", 4, 0.01), "a.c:11 (f)": ("MPI_Irecv", 4, 0.02),
             "a.c:20 (f)": ("MPI_Wait", 7, 0.5), "a.c:30 (g)": ("MPI_Wait", 1, 0.05),
             "a.c:40 (h)": ("MPI_Send", 2, 0.3)}

    def site(label: str, *pairs: dict) -> dict:
        fn, calls, call_s = sites[label]
        sums = {m: sum(p[m] for p in pairs) for m in ("transfers", "xfer_s", "min_s", "max_s")}
        return _entry(sums["transfers"], sums["xfer_s"], sums["min_s"], sums["max_s"],
                      site=label, fn=fn, calls=calls, call_s=call_s)

    functions = [_entry(2, 0.2, 0.0, 0.0, fn="MPI_Send", calls=2, call_s=0.3),
                 _entry(4, 0.4, 0.1, 0.3, fn="MPI_Isend", calls=4, call_s=0.01),
                 _entry(4, 0.4, 0.4, 0.4, fn="MPI_Irecv", calls=4, call_s=0.02),
                 _entry(0, 0.0, 0.0, 0.0, fn="MPI_Wait", calls=8, call_s=0.55)]
    return {
        "job": {**_entry(10, 1.0, 0.5, 0.7), "call_s": 0.88, "comp_s": 2.0},
        "worst_rank": {"rank": 1, "nonoverlap_s": 0.3},
        "rankings": {
            "functions": functions,
            "bins": [_entry(10, 1.0, 0.5, 0.7, lo=0, hi=1024, label="0 B–1 KiB")],
            "regions": [_entry(10, 1.0, 0.5, 0.7, region="(no region)", comp_s=2.0,
                               call_s=0.88)],
            "pairs": [send, isend_a, isend_b, irecv],
            "post_sites": [site("a.c:40 (h)", send), site("a.c:10 (f)", isend_a, isend_b),
                           site("a.c:11 (f)", irecv)],
            "end_sites": [site("a.c:40 (h)", send), site("a.c:20 (f)", isend_a, irecv),
                          site("a.c:30 (g)", isend_b)],
        },
        "two_sided": {"available": True, "waiting": {
            "total_s": 0.25, "late_sender_s": 0.25, "late_receiver_s": 0.0,
            "collective_s": 0.0, "calls": 2,
            "functions": [_waits("fn", "MPI_Wait", 0.25)],
            "bins": [_waits("label", "0 B–1 KiB", 0.25, lo=0, hi=1024)],
            "regions": [_waits("region", "(no region)", 0.25)]}},
    }


def _tree(gf) -> dict[tuple[str, ...], dict]:
    """{path of frame names from the root: the node's row} of a GraphFrame."""
    df = gf.dataframe
    out = {}
    for node in gf.graph.traverse():
        path = tuple(str(n.frame["name"]) for n in node.path())
        out[path] = {"type": node.frame["type"], "frame": dict(node.frame.attrs),
                     **df.loc[node].to_dict()}
    return out


def test_the_call_site_tree_holds_every_pair_once_under_its_posting_site() -> None:
    from mpi_overlap.profile.report.hatchet_export import hatchet_literal

    analysis = _analysis()
    gf = ht.GraphFrame.from_literal(json.loads(json.dumps(hatchet_literal(analysis, "app"))))
    tree = _tree(gf)
    pairs = {p: row for p, row in tree.items() if row["type"] == "pair"}
    assert sorted(pairs) == sorted([
        ("app", "MPI_Send", "a.c:40 (h)", "a.c:40 (h) → a.c:40 (h)"),
        ("app", "MPI_Isend", "a.c:10 (f)", "a.c:10 (f) → a.c:20 (f)"),
        ("app", "MPI_Isend", "a.c:10 (f)", "a.c:10 (f) → a.c:30 (g)"),
        ("app", "MPI_Irecv", "a.c:11 (f)", "a.c:11 (f) → a.c:20 (f)")])
    for p in analysis["rankings"]["pairs"]:
        row = pairs[("app", p["post_fn"], p["post"], f"{p['post']} → {p['end']}")]
        assert row["frame"]["end_fn"] == p["end_fn"] and row["frame"]["end"] == p["end"]
        for m in ("transfers", "xfer_s", "min_s", "max_s", "nonoverlap_s", "polled"):
            assert row[m] == pytest.approx(p[m]), m
        assert row["worst_rank"] == (-1 if p["worst_rank"] is None else p["worst_rank"])
    # the measures add up: pairs → posting site → function
    isend = tree[("app", "MPI_Isend", "a.c:10 (f)")]
    assert isend["type"] == "call site" and isend["transfers"] == 4 and isend["calls"] == 4
    assert tree[("app", "MPI_Isend")]["xfer_s"] == pytest.approx(0.4)
    # a completing site: its calls and what it completed (not posted: transfers empty)
    wait = tree[("app", "MPI_Wait", "a.c:20 (f)")]
    assert wait["calls"] == 7 and wait["completed_transfers"] == 7
    assert math.isnan(wait["transfers"])  # it posted nothing
    assert tree[("app", "MPI_Wait")]["completed_transfers"] == 8  # its two sites
    assert tree[("app", "MPI_Send", "a.c:40 (h)")]["completed_transfers"] == 2  # blocking
    assert tree[("app",)]["completed_transfers"] == 10 == tree[("app",)]["transfers"]
    # waiting: on the waiting call's function, its size bin and region, and the root
    assert tree[("app", "MPI_Wait")]["waiting_s"] == pytest.approx(0.25)
    assert tree[("app", "by size", "0 B–1 KiB")]["late_sender_s"] == pytest.approx(0.25)
    assert tree[("app", "by region", "(no region)")]["waiting_s"] == pytest.approx(0.25)
    assert tree[("app",)]["waiting_s"] == pytest.approx(0.25)
    # Hatchet's metric columns are the root's: it has every one the tree uses
    used = {k for row in tree.values() for k, v in row.items()
            if k not in ("type", "frame", "name") and v == v}
    assert used <= set(gf.exc_metrics), used - set(gf.exc_metrics)
    assert tree[("app",)]["worst_rank"] == 1 and tree[("app",)]["polled"] == 5


# ---------------------------------------------------------------- profiled programs


def _callsites_program() -> Path:
    from mpi_overlap.platform.build import build_dir_for, ensure_built
    from mpi_overlap.platform.toolchains import get_toolchain

    tc = get_toolchain("mpich")
    ensure_built(tc)
    return build_dir_for(tc) / "tests" / "callsites"


def _profile(tmp_path: Path, *extra: str) -> list:
    from mpi_overlap.run.rundir import load_run

    out = tmp_path / "runs"
    proc = run_cli("profile", "--mpi", "mpich", "-n", "2", "--out", str(out), *extra, "--",
                   str(_callsites_program()), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    runs = sorted((load_run(p) for p in out.iterdir() if (p / "run.json").is_file()),
                  key=lambda r: r.label)
    for run in runs:
        assert run.result["status"] == "complete"
        exported = run_cli("export", "hatchet", str(run.path))
        assert exported.returncode == 0, exported.stderr
    return runs


def _known_pairs() -> dict[tuple[str, str], int]:
    """{(posting line's label prefix, completing line's): transfers over both ranks} of
    native/tests/callsites.c, from its marked lines (test_callsites.py)."""
    from test_callsites import C_PAIRS, C_SOURCE, marked_lines

    lines = marked_lines(C_SOURCE)
    return {(f"callsites.c:{lines[a]} ", f"callsites.c:{lines[b]} "): 2 * n
            for (a, b), n in C_PAIRS.items()}


def _pair_rows(tree: dict[tuple[str, ...], dict]) -> dict[tuple[str, str], dict]:
    rows = {}
    for row in (r for r in tree.values() if r["type"] == "pair"):
        key = (row["frame"]["post"], row["frame"]["end"])
        assert key not in rows, key  # one node per pair
        rows[key] = row
    return rows


@pytest.mark.mpi
def test_a_node_per_call_site_pair_with_the_profiles_measures(tmp_path: Path) -> None:
    import mpi_overlap

    (run,) = _profile(tmp_path)
    gf = ht.GraphFrame.from_literal(json.loads((run.path / "hatchet.json").read_text()))
    tree = _tree(gf)
    rows = _pair_rows(tree)
    pairs = mpi_overlap.load(run.path).frames["pairs"]
    assert len(rows) == len(pairs) == len(run.analysis["rankings"]["pairs"])
    for p in pairs.to_dict("records"):
        row = rows[(p["post"], p["end"])]
        for m in ("transfers", "xfer_s", "min_s", "max_s", "nonoverlap_s", "polled"):
            assert row[m] == pytest.approx(p[m]), (p["post"], m)
        # under its posting site, under the posting function
        node = next(k for k, r in tree.items() if r is row)
        assert node[1:3] == (p["post_fn"], p["post"]) and tree[node[:3]]["type"] == "call site"
    # the known answer: each marked pair of lines with its transfers, summed over ranks
    for (post, end), n in _known_pairs().items():
        hits = [r["transfers"] for (a, b), r in rows.items()
                if a.startswith(post) and b.startswith(end)]
        assert hits == [n], (post, end, hits)


@pytest.mark.mpi
def test_a_thicket_puts_the_env_matrix_runs_side_by_side(tmp_path: Path) -> None:
    th = pytest.importorskip("thicket", reason="llnl-thicket is in the dev extra")
    runs = _profile(tmp_path, "--env-matrix", "MO_WHATIF=a,b")
    assert [r.label for r in runs] == ["mpich MO_WHATIF=a", "mpich MO_WHATIF=b"]
    tks = []
    for run in runs:
        gf = ht.GraphFrame.from_literal(json.loads((run.path / "hatchet.json").read_text()))
        gf.metadata = {"label": run.label, **run.meta["env_overrides"]}
        tks.append(th.Thicket.thicketize_graphframe(gf, run.path.name))
    tk = th.Thicket.concat_thickets(tks, axis="columns", headers=[r.label for r in runs])
    assert list(tk.metadata[(runs[1].label, "MO_WHATIF")]) == ["b"]
    side = tk.dataframe.reset_index(level="profile", drop=True)
    known = _known_pairs()
    seen = set()
    for node in tk.graph.traverse():
        if node.frame["type"] != "pair":
            continue
        post, end = node.frame["post"], node.frame["end"]
        counts = [side.loc[node, (r.label, "transfers")] for r in runs]
        # each run's own analysis has the same figure for this pair
        for run, count in zip(runs, counts, strict=True):
            (want,) = [p["transfers"] for p in run.analysis["rankings"]["pairs"]
                       if (p["post"], p["end"]) == (post, end)]
            assert count == want
        for (a, b), n in known.items():
            if post.startswith(a) and end.startswith(b):
                assert counts == [n, n], (post, end)
                seen.add((a, b))
    assert seen == set(known)  # every marked pair is one node, both runs beside each other
