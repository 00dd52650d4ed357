"""Per call site figures of a prediction (predict/sites.py, issue 36 item 1) on a
hand-made two-rank program: a site is one row per (label, MPI function) whatever each
rank's address for it, an address without a label keeps its hex value, a call without
one is "unknown"; the rows' time and waiting add up to the per-rank figures, recorded
and replayed; and the terminal's columns show the largest sites, the rest counted."""

from __future__ import annotations

import pytest

from mpi_overlap.predict.bounds import call_bounds
from mpi_overlap.predict.engine import call_waits, figures, recorded, replay
from mpi_overlap.predict.model import Costs
from mpi_overlap.predict.program import RECV_BLOCK, SEND_BLOCK, Msg
from mpi_overlap.predict.report import _describe_sites
from mpi_overlap.predict.sites import by_site
from mpi_overlap.predict.words import SITES_SHOWN
from predict_synth import two_ranks

SEND_AT = "app.c:10 (exchange)"
SIZE_AT = "app.c:3 (main)"


def _rows() -> tuple[list[dict], list, list]:
    # rank 1 posts its MPI_Recv at 0.5 ms, rank 0 sends at 1 ms: 0.5 ms of waiting
    prog = two_ranks(
        [("MPI_Comm_size", [], 0.1e-3, 0.101e-3, 0x30),
         ("MPI_Send", [(SEND_BLOCK, 0)], 1e-3, 1.1e-3, 0x10),
         ("MPI_Comm_rank", [], 2e-3, 2.001e-3, 0x20)],
        [("MPI_Comm_size", [], 0.1e-3, 0.102e-3, 0x31),
         ("MPI_Recv", [(RECV_BLOCK, 0)], 0.5e-3, 1.15e-3, 0x99),
         ("MPI_Comm_rank", [], 2e-3, 2.001e-3)])
    prog.msgs.append(Msg(0, 1, 1 << 20))
    c = Costs(T=[0.1e-3], o_s=[0.0], o_r=[0.0], eager=[False], coll=[])
    rec = recorded(prog)
    rep = replay(prog, c, [{}, {}])
    assert rep.unresolved == []
    labels = [{0x10: {SEND_AT}, 0x30: {SIZE_AT}}, {0x99: {SEND_AT}, 0x31: {SIZE_AT}}]
    rows = by_site(prog, rec, rep, (call_waits(prog, rec), call_waits(prog, rep)), labels,
                   (call_bounds(prog, rec, c), call_bounds(prog, rep, c)))
    return rows, figures(prog, rec), figures(prog, rep)


def test_sites_are_labels_and_functions_summed_over_ranks() -> None:
    rows, rec, pred = _rows()
    got = {(r["site"], r["fn"]): r for r in rows}
    assert set(got) == {(SIZE_AT, "MPI_Comm_size"), (SEND_AT, "MPI_Send"),
                        (SEND_AT, "MPI_Recv"), ("0x20", "MPI_Comm_rank"),
                        ("unknown", "MPI_Comm_rank")}
    size = got[(SIZE_AT, "MPI_Comm_size")]  # two addresses, one label: one row
    assert (size["calls"], size["ranks"]) == (2, 2)
    assert size["recorded_s"] == pytest.approx(3e-6)
    recv = got[(SEND_AT, "MPI_Recv")]
    assert recv["recorded_waiting_s"] == pytest.approx(0.5e-3)
    assert recv["recorded_s"] == pytest.approx(0.65e-3)
    # the largest recorded time first
    assert [r["recorded_s"] for r in rows] == sorted((r["recorded_s"] for r in rows),
                                                     reverse=True)
    for key, side in (("recorded", rec), ("predicted", pred)):
        assert sum(r[f"{key}_s"] for r in rows) == pytest.approx(sum(f.mpi_s for f in side))
        assert (sum(r[f"{key}_waiting_s"] for r in rows)
                == pytest.approx(sum(f.waiting_s for f in side)))


def test_terminal_shows_the_largest_sites_and_counts_the_rest() -> None:
    rows, _, _ = _rows()
    lines = _describe_sites(rows)
    assert lines[0].startswith("MPI time by call site, all ranks (the 5 of 5")
    assert lines[1].split()[:2] == ["call", "site"] and SEND_AT in lines[2]
    assert not any("more call site" in x for x in lines)
    many = [dict(rows[0], site=f"f.c:{i}", recorded_s=1e-3 * (100 - i))
            for i in range(SITES_SHOWN + 3)]
    lines = _describe_sites(many)
    assert len(lines) == 2 + SITES_SHOWN + 1
    assert lines[-1].strip().startswith("and 3 more call site(s): ")
    assert lines[-1].endswith("predicted")
    assert _describe_sites([]) == []


def test_a_change_beyond_ten_times_is_said_as_a_multiple() -> None:
    """predict's change column: % up to +999.9, a multiple from +1000 % on, so that a
    bound that grew from 16.8 µs to 212 ms stays in its column."""
    from mpi_overlap.predict.words import change_words

    assert change_words(-30.8) == "-30.8 %" and change_words(999.94) == "+999.9 %"
    assert change_words(1696.8) == "×18.0" and change_words(23079.1) == "×232"
    assert change_words(1265103.7) == "×12,652"
    assert change_words(None) == "" and change_words(float("nan")) == ""
