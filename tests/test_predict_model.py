"""What the replay's target makes each message and collective cost (predict/model.py, as
docs/method.md "Predicting by replay" states it): the table's T, the eager parts up to the
eager limit, a link's wire on top between nodes (each rank its own node on a one-node
run), collectives from their series or ceil(log2 p) rounds of point-to-point, and the
rate and latency parsers' one-line errors."""

from __future__ import annotations

import math

import pytest

from mpi_overlap.calibration.xfer_parts import EAGER, RENDEZVOUS, Part, SizeParts
from mpi_overlap.calibration.xfer_table import XferTable
from mpi_overlap.core.errors import UserError
from mpi_overlap.predict.model import Link, Target, costs, parse_latency, parse_rate
from mpi_overlap.predict.program import Call, Coll, Msg, Program


def _table() -> XferTable:
    def parts(n: int, proto: str, o_s: float, o_r: float) -> SizeParts:
        return SizeParts(n, proto, Part(o_s, o_s, o_s), Part(o_r, o_r, o_r), Part(1e-6, 1e-6, 1e-6))

    return XferTable(
        machine_fp="0" * 16, machine_key="m", toolchain_fp="0" * 16, toolchain_key="t",
        toolchain_name="mpich", ranks=2, nodes=1, created="2026-11-29T00:00:00Z",
        points={"intra": [(0, 2e-6), (4096, 4e-6), (65536, 20e-6)]},
        parts={("intra", 0): parts(0, EAGER, 0.5e-6, 0.2e-6),
               ("intra", 4096): parts(4096, EAGER, 1e-6, 0.4e-6),
               ("intra", 65536): parts(65536, RENDEZVOUS, 20e-6, 10e-6)},
        eager_limits={"intra": 4096},
        coll={("allreduce", 4): [(0, 5e-6), (1024, 9e-6)]})


def _program(hosts: list[str]) -> Program:
    p = len(hosts)
    prog = Program(calls=[[Call("MPI_Init", 0, 0), Call("MPI_Finalize", 1, 1)]
                          for _ in range(p)], hosts=hosts)
    prog.msgs = [Msg(0, 1, 4096), Msg(1, 0, 65536)]
    prog.colls = [Coll("allreduce", tuple(range(p)), -1, 1024),
                  Coll("bcast", tuple(range(p)), 0, 4096),
                  Coll("gather", tuple(range(p)), 0, 4096)]
    return prog


def test_table_parts_and_protocol() -> None:
    c = costs(_program(["vm"] * 4), Target(_table()))
    whole = c.T
    assert whole == pytest.approx([4e-6, 20e-6])
    assert c.eager == [True, False]
    assert (c.o_s[0], c.o_r[0]) == (pytest.approx(1e-6), pytest.approx(0.4e-6))
    assert c.coll[0] == pytest.approx(9e-6)  # the op's own series
    # ops without a series: ceil(log2 4) = 2 rounds of the point-to-point time of the block
    assert c.coll[1] == pytest.approx(2 * 4e-6) and c.coll[2] == pytest.approx(2 * 4e-6)
    assert not c.link_nodes


def test_a_link_adds_its_wire_between_nodes() -> None:
    link = Link(parse_rate("100mbit"), parse_latency("50us"))
    base = costs(_program(["vm"] * 4), Target(_table()))
    c = costs(_program(["vm"] * 4), Target(_table(), link=link))
    assert c.link_nodes  # one node: each rank its own
    for k, nbytes in enumerate((4096, 65536)):
        assert c.T[k] == pytest.approx(base.T[k] + 50e-6 + 8 * nbytes / 100e6)
        assert (c.o_s[k], c.o_r[k], c.eager[k]) == (base.o_s[k], base.o_r[k], base.eager[k])
    wire = 50e-6 + 8 * 4096 / 100e6
    assert c.coll[0] == pytest.approx(base.coll[0] + 2 * (50e-6 + 8 * 1024 / 100e6))
    assert c.coll[1] == pytest.approx(base.coll[1] + math.ceil(math.log2(4)) * wire)
    assert c.coll[2] == pytest.approx(base.coll[2] + 3 * wire)  # gather: p - 1 blocks
    # ranks 0 and 1 share a node: their messages stay off the link, collectives span nodes
    c = costs(_program(["a", "a", "b", "b"]), Target(_table(), link=link))
    assert not c.link_nodes
    whole = c.T
    assert whole == pytest.approx(base.T)
    assert c.coll[2] == pytest.approx(base.coll[2] + 3 * wire)


def test_placement_prices_each_pair_by_its_class_there() -> None:
    """--placement K puts rank r on node r // K: a run made with one rank per node
    replayed with both ranks on a node is priced intra-node, and back."""
    import dataclasses

    table = _table()
    both = dataclasses.replace(table, points={**table.points,
                                              "inter": [(0, 20e-6), (4096, 40e-6),
                                                        (65536, 200e-6)]})
    across = _program(["n1", "n2", "n3", "n4"])  # recorded one rank per node
    whole = costs(across, Target(both)).T
    assert whole == pytest.approx([40e-6, 200e-6])
    c = costs(across, Target(both, placement=2))  # ranks 0 and 1 on one node now
    whole = c.T
    assert whole == pytest.approx([4e-6, 20e-6]) and c.missing_classes == ()
    whole = costs(_program(["vm"] * 4), Target(both, placement=1)).T  # one per node
    assert whole == pytest.approx([40e-6, 200e-6])
    # a table without the class the placement needs: the other's times, and said so
    c = costs(_program(["vm"] * 4), Target(table, placement=1))
    whole = c.T
    assert c.missing_classes == ("inter",) and whole == pytest.approx([4e-6, 20e-6])
    assert c.needed_classes == ("inter",)
    assert costs(across, Target(both, placement=2)).needed_classes == ("intra",)


@pytest.mark.parametrize(("text", "seconds"), [("50us", 50e-6), ("0.2ms", 2e-4), ("0", 0.0),
                                               ("1s", 1.0), ("250ns", 250e-9)])
def test_latency(text: str, seconds: float) -> None:
    assert parse_latency(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["5", "-1us", "fast", "1e-5", ""])
def test_bad_latency_is_one_line(text: str) -> None:
    with pytest.raises(UserError, match="--latency"):
        parse_latency(text)


def test_rates_as_tc_reads_them() -> None:
    assert parse_rate("200mbit") == 200e6 and parse_rate("1gbit") == 1e9
    assert parse_rate("10mbps") == 80e6
    with pytest.raises(UserError, match="--link '2x'"):
        parse_rate("2x")


def test_a_table_that_has_the_missing_class_is_named(isolated_home) -> None:
    """predict's note for a class the table lacks names this state's table for the same
    MPI build and kind of machine, where it is another file and has every class needed."""
    import dataclasses

    from mpi_overlap.calibration.xfer_table import render_table, table_dir, table_path
    from mpi_overlap.predict.report import table_with

    intra = _table()
    run_table = dataclasses.replace(intra, points={"inter": [(0, 20e-6), (65536, 200e-6)]})
    assert table_with(run_table, ("intra",)) is None  # no table in this state
    path = table_path(intra.toolchain_name, intra.machine_fp, intra.toolchain_fp)
    table_dir().mkdir(parents=True)
    path.write_text(render_table(intra))
    assert table_with(run_table, ("intra",)) == path
    assert table_with(run_table, ("inter", "intra")) is None  # it lacks inter
    assert table_with(dataclasses.replace(intra, path=path), ("intra",)) is None  # itself
    other_mpi = dataclasses.replace(run_table, toolchain_fp="1" * 16)
    assert table_with(other_mpi, ("intra",)) is None
