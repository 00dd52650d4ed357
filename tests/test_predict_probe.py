"""predict --probe's side in Python (predict/probe.py): which messages become cases, what
the probe is given, what each message's ends get from its results, and which of them the
target's MPI sends from the completing call rather than the post. The probe itself
runs in tests/test_trace_dtypes.py, and on a placement in tests/test_cluster_predict.py."""

from __future__ import annotations

from mpi_overlap.predict.engine import sent_from_completion
from mpi_overlap.predict.model import Costs
from mpi_overlap.predict.probe import cases, deferred, end_work, probe_input
from mpi_overlap.predict.program import Msg, Program
from mpi_overlap.profile.trace.dtypes import Layout


def _layout(ident: int, stride: int) -> Layout:
    values = (3, 3, 0, 1, 4, 2, stride, 0, 8)  # vector(4, 2, stride) of an 8-byte type
    return Layout(ident, 64, 8 * (3 * stride + 2), 0, 8 * (3 * stride + 2), None, None,
                  values, ("MPI_DOUBLE",))


def test_messages_of_one_shape_are_one_case_and_contiguous_ones_none() -> None:
    a, b = _layout(1, 5), _layout(2, 7)
    prog = Program(calls=[[], []])
    prog.msgs = [Msg(0, 1, 64, 3, (a, a)), Msg(1, 0, 64, 3, (a, a)), Msg(0, 1, 64, 3, (b, None)),
                 Msg(0, 1, 64, 3, (None, None)), Msg(0, 1, 128, 3, (a, a))]
    found, index = cases(prog, [0, 1, 2, 3, 4])
    # the most messages first; a contiguous message is no case
    assert [(c.send, c.recv, c.nbytes) for c in found] == [(a, a, 64), (b, None, 64),
                                                          (a, a, 128)]
    assert index == {0: 0, 1: 0, 2: 1, 4: 2}
    va, vb = "side 9 3 3 0 1 4 2 5 0 8 1 MPI_DOUBLE", "side 9 3 3 0 1 4 2 7 0 8 1 MPI_DOUBLE"
    assert probe_input(found).splitlines() == ["mo-layout-probe 1", "case 64", va, va,
                                               "case 64", vb, "side 0 0", "case 128", va, va]
    # each end gets half of what the layout took beyond contiguous data, never below 0;
    # a case the probe could not build gives nothing
    results = [{"case": 0, "layout_s": 50e-6, "contiguous_s": 10e-6},
               {"case": 1, "error": "a constructor the probe does not build"},
               {"case": 2, "layout_s": 9e-6, "contiguous_s": 10e-6}]
    work = end_work(prog, index, results)
    assert work == {0: 20e-6, 1: 20e-6, 4: 0.0}


def test_a_tree_cut_short_is_not_probed() -> None:
    cut = Layout(3, 64, 136, 0, 136, None, None)  # no values: the trace cut its tree
    prog = Program(calls=[[], []])
    prog.msgs = [Msg(0, 1, 64, 3, (cut, cut))]
    assert cases(prog, [0]) == ([], {})


def test_the_note_says_which_end_the_prediction_is() -> None:
    """payload_work's note: the range (no probe), the probe's timings (with them), and a
    probe with nothing to time (every packed message contiguous: the work left out)."""
    from mpi_overlap.predict.words import payload_work_text

    figs = {"run_s": 0.3, "mpi_s": 0.1, "waiting_s": 0.01}
    layouts = [{"layout": "vector of MPI_DOUBLE: 4 block(s) of 16 B in 64 B", "messages": 7}]
    ranged = payload_work_text({"payload_work": {"messages": 9, "without": figs,
                                                 "layouts": layouts}})
    assert ranged is not None and "kept whole above" in ranged and "a range" in ranged
    assert "7 vector of MPI_DOUBLE" in ranged
    case = {"send": "v", "receive": "v", "bytes": 64, "messages": 7, "layout_s": 40e-6,
            "contiguous_s": 10e-6}
    probed = payload_work_text({"payload_work": {
        "messages": 9, "without": figs, "kept": figs, "layouts": layouts,
        "probe": {"toolchain": "mpich", "dir": "d", "cases": [case]}}})
    assert probed is not None and "what 1 layout(s) took here, on 2 ranks of mpich" in probed
    assert "40.0 µs an exchange against 10.0 µs contiguous" in probed
    assert "queued" not in probed
    queued = payload_work_text({"payload_work": {
        "messages": 9, "without": figs, "kept": figs, "layouts": layouts,
        "probe": {"toolchain": "mpich", "dir": "d", "cases": [case], "deferred": 7}}})
    assert queued is not None and "moves 7 of them only once both ends' calls" in queued
    nothing = payload_work_text({"payload_work": {
        "messages": 9, "without": figs, "kept": figs, "layouts": [],
        "probe": {"toolchain": "mpich", "dir": "d", "cases": []}}})
    assert nothing is not None and "leaves that work out" in nothing
    assert payload_work_text({"payload_work": None}) is None


def test_a_post_that_holds_little_of_the_exchange_sends_from_the_completion() -> None:
    """MPICH's MPI_Isend of a 32 KiB halo face on one node: 1.7 us of a 68 us exchange
    (it queues the message); a post that packs holds its share; a result without the
    post's time, or an error, says nothing."""
    results = [{"layout_s": 68e-6, "contiguous_s": 20e-6, "layout_post_s": 1.7e-6},
               {"layout_s": 68e-6, "contiguous_s": 20e-6, "layout_post_s": 25e-6},
               {"layout_s": 68e-6, "contiguous_s": 20e-6},
               {"error": "no result"}]
    assert deferred({0: 0, 1: 1, 2: 2, 3: 3, 4: 0}, results) == {0, 4}
    c = Costs(T=[9e-6] * 3, o_s=[2e-6] * 3, o_r=[1e-6] * 3, eager=[True] * 3, coll=[])
    moved = sent_from_completion(c, {1})
    assert (moved.eager, moved.o_s, moved.o_r, moved.T) == (
        [True, False, True], [2e-6, 0.0, 2e-6], [1e-6, 0.0, 1e-6], c.T)
    assert sent_from_completion(c, set()) is c
