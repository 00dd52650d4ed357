"""Synthetic traces for the replay engine (src/mpi_overlap/predict): programs of a few to
thousands of ranks built directly in the engine's terms (program.Program), with costs
drawn at random, so that the engine's properties and speed can be checked without an MPI
run.

A program is a sequence of rounds; in each, every rank computes for a random time and
then takes part in one pattern, chosen per round:

* `exchange`: ranks paired at random; each posts MPI_Irecv and MPI_Isend to its partner,
  computes, and completes both in MPI_Waitall (an unpaired rank only computes);
* `blocking`: the same pairs, the lower rank MPI_Send then MPI_Recv, the higher MPI_Recv
  then MPI_Send (deadlock-free whatever the protocol);
* `isend_recv`: the same pairs, each MPI_Isend to its partner, MPI_Recv from it, then
  MPI_Wait for the send (a rendezvous send must move while its rank waits in MPI_Recv);
* `collective`: every rank calls one blocking collective (allreduce, bcast, reduce,
  barrier) on all ranks;
* `icollective`: every rank posts MPI_Iallreduce, computes, and completes it in MPI_Wait.

Recorded call durations are random too (the engine uses them for calls without
operations and for the residual of each function).
"""

from __future__ import annotations

import random
from dataclasses import replace

from mpi_overlap.predict.model import Costs
from mpi_overlap.predict.program import (
    COLL_BLOCK,
    COLL_DONE,
    COLL_POST,
    RECV_BLOCK,
    RECV_DONE,
    RECV_POST,
    SEND_BLOCK,
    SEND_DONE,
    SEND_POST,
    Call,
    Coll,
    Msg,
    Program,
)

PATTERNS = ("exchange", "blocking", "isend_recv", "collective", "icollective")
OPS = ("allreduce", "bcast", "reduce", "barrier")


class _Clock:
    """A rank's recorded time while its calls are written."""

    def __init__(self, rng: random.Random) -> None:
        self.t = 0.0
        self.rng = rng

    def compute(self, mean_s: float) -> None:
        self.t += self.rng.expovariate(1.0 / mean_s)

    def call(self, fn: str, ops: list[tuple[int, int]], mean_s: float = 2e-6) -> Call:
        d = self.rng.expovariate(1.0 / mean_s)
        c = Call(fn, self.t, self.t + d, ops)
        self.t += d
        return c


def program(rng: random.Random, ranks: int, rounds: int, compute_s: float = 20e-6,
            patterns: tuple[str, ...] = PATTERNS) -> Program:
    clocks = [_Clock(rng) for _ in range(ranks)]
    calls: list[list[Call]] = [[clocks[r].call("MPI_Init", [])] for r in range(ranks)]
    prog = Program(calls=calls, hosts=[""] * ranks)
    for _ in range(rounds):
        pattern = rng.choice(patterns)
        for r in range(ranks):
            clocks[r].compute(compute_s * rng.uniform(0.2, 2.0))
        if pattern in ("exchange", "blocking", "isend_recv"):
            order = list(range(ranks))
            rng.shuffle(order)
            for a, b in zip(order[::2], order[1::2], strict=False):
                a, b = min(a, b), max(a, b)
                nbytes = rng.choice((0, 64, 4096, 8192, 65536, 1 << 20))
                ab, ba = len(prog.msgs), len(prog.msgs) + 1
                prog.msgs += [Msg(a, b, nbytes), Msg(b, a, nbytes)]
                if pattern == "exchange":
                    for me, out, inc in ((a, ab, ba), (b, ba, ab)):
                        ck = clocks[me]
                        calls[me].append(ck.call("MPI_Irecv", [(RECV_POST, inc)]))
                        calls[me].append(ck.call("MPI_Isend", [(SEND_POST, out)]))
                        ck.compute(compute_s * rng.uniform(0.0, 1.0))
                        calls[me].append(ck.call("MPI_Waitall",
                                                 [(RECV_DONE, inc), (SEND_DONE, out)]))
                elif pattern == "isend_recv":
                    for me, out, inc in ((a, ab, ba), (b, ba, ab)):
                        ck = clocks[me]
                        calls[me].append(ck.call("MPI_Isend", [(SEND_POST, out)]))
                        ck.compute(compute_s * rng.uniform(0.0, 1.0))
                        calls[me].append(ck.call("MPI_Recv", [(RECV_BLOCK, inc)]))
                        calls[me].append(ck.call("MPI_Wait", [(SEND_DONE, out)]))
                else:
                    calls[a].append(clocks[a].call("MPI_Send", [(SEND_BLOCK, ab)]))
                    calls[a].append(clocks[a].call("MPI_Recv", [(RECV_BLOCK, ba)]))
                    calls[b].append(clocks[b].call("MPI_Recv", [(RECV_BLOCK, ab)]))
                    calls[b].append(clocks[b].call("MPI_Send", [(SEND_BLOCK, ba)]))
        elif pattern == "collective":
            op = rng.choice(OPS)
            j = len(prog.colls)
            prog.colls.append(Coll(op, tuple(range(ranks)), 0 if op in ("bcast", "reduce")
                                   else -1, rng.choice((8, 1024, 65536))))
            for r in range(ranks):
                calls[r].append(clocks[r].call(f"MPI_{op.capitalize()}", [(COLL_BLOCK, j)]))
        else:
            j = len(prog.colls)
            prog.colls.append(Coll("iallreduce", tuple(range(ranks)), -1, 8))
            for r in range(ranks):
                calls[r].append(clocks[r].call("MPI_Iallreduce", [(COLL_POST, j)]))
                clocks[r].compute(compute_s * rng.uniform(0.0, 1.0))
                calls[r].append(clocks[r].call("MPI_Wait", [(COLL_DONE, j)]))
        if rng.random() < 0.1:  # a call that replays nothing
            for r in range(ranks):
                calls[r].append(clocks[r].call("MPI_Comm_rank", []))
    for r in range(ranks):
        clocks[r].compute(compute_s)
        calls[r].append(clocks[r].call("MPI_Finalize", []))
    return prog


def two_ranks(ops0: list[tuple], ops1: list[tuple],
              tails: tuple[float, float] = (1e-3, 1e-3)) -> Program:
    """Two ranks whose calls are given as (fn, ops, enter, exit) or (fn, ops, enter, exit,
    call site), for the hand-worked cases; MPI_Init at 0 and MPI_Finalize each rank's tail
    after its last call's exit."""
    calls = []
    for ops, tail in zip((ops0, ops1), tails, strict=True):
        cs = [Call("MPI_Init", 0.0, 0.0)]
        cs += [Call(fn, a, b, list(o), *site) for fn, o, a, b, *site in ops]
        last = cs[-1].exit + tail
        cs.append(Call("MPI_Finalize", last, last))
        calls.append(cs)
    return Program(calls=calls, hosts=["", ""])


def costs(rng: random.Random, prog: Program) -> Costs:
    """Random costs: T grows with the size, eager up to 4 KiB or 16 KiB, o_s and o_r a
    random share of T."""
    limit = rng.choice((4096, 16384))
    c = Costs([], [], [], [], [])
    for m in prog.msgs:
        t = 1e-6 + m.nbytes * rng.uniform(0.1e-9, 2e-9)
        eager = m.nbytes <= limit
        c.T.append(t)
        c.o_s.append(t * rng.uniform(0.05, 0.5) if eager else 0.0)
        c.o_r.append(t * rng.uniform(0.05, 0.5) if eager else 0.0)
        c.eager.append(eager)
    for cl in prog.colls:
        c.coll.append(rng.uniform(0.5e-6, 30e-6) * (1 + cl.nbytes / 65536))
    return c


def shared_link(rng: random.Random, prog: Program, c: Costs, hosts: int) -> Costs:
    """The costs with a shared link (model.link_waits): rank r on node r % hosts, each
    ordered pair of nodes a direction, each message between nodes holding its direction
    for a random 0.2-3 times its T (the tables' G s is 1-3 T on a busy emulated link)."""
    node = [r % hosts for r in range(prog.ranks)]
    lanes: dict[tuple[int, int], int] = {}
    lane, occupy = [], []
    for k, m in enumerate(prog.msgs):
        crosses = node[m.sender] != node[m.receiver]
        lane.append(lanes.setdefault((node[m.sender], node[m.receiver]), len(lanes))
                    if crosses else -1)
        occupy.append(c.T[k] * rng.uniform(0.2, 3.0) if crosses else 0.0)
    return replace(c, lane=lane, occupy=occupy)
