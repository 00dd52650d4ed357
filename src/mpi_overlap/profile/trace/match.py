"""Both ends of every message: each receive matched with its send, each collective call
with the same call on the other members of its communicator (docs/method.md, "Both ends
of a message").

Point-to-point: MPI's non-overtaking rule (MPI-4.0 §3.5) says that two messages from one
sender to one receiver on one communicator with one tag are received in the order they
were sent, by the receives in the order they were posted. So, per (sender, receiver,
communicator, tag) stream, the k-th send posted is received by the k-th receive posted,
once every receive's source and tag are the ones it matched: the status's, for receives
from MPI_ANY_SOURCE or with MPI_ANY_TAG. (The argument: if the k-th message went to a
later receive than the k-th, an earlier posted receive that accepts it would have been
passed over, which the rule forbids.) Threads of one rank are ordered by their posting
times (the rule holds only within a thread; a program that sends one stream from several
threads has no order to keep).

Collectives: every member calls the collectives of a communicator in the same order
(MPI-4.0 §6.13), so the i-th blocking or non-blocking collective each member posted on a
communicator is one operation. Persistent collectives are left out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .reader import KIND_RECV, KIND_SEND
from .timeline import CollCall, Message, RankTimeline

Stream = tuple[int, int, int, int]  # sender, receiver (world ranks), communicator, tag


@dataclass
class Matched:
    pairs: list[tuple[Message, Message]] = field(default_factory=list)
    unmatched_sends: int = 0
    unmatched_recvs: int = 0
    # Ends that cannot take part: no communicator or tag recorded (a version-1 trace), a
    # peer that is not known, a receive that never completed.
    unnamed: int = 0
    # (communicator, i) -> {rank: its i-th collective call on that communicator}
    collectives: dict[tuple[int, int], dict[int, CollCall]] = field(default_factory=dict)
    coll_mismatched: int = 0  # instances whose members called different operations


def _stream(m: Message) -> Stream | None:
    if m.comm == 0 or m.tag < 0 or m.peer < 0:
        return None
    if m.kind == KIND_SEND:
        return (m.rank, m.peer, m.comm, m.tag)
    if m.kind == KIND_RECV and m.t_done is not None:
        return (m.peer, m.rank, m.comm, m.tag)
    return None


def match_messages(timelines: list[RankTimeline]) -> Matched:
    out = Matched()
    sends: dict[Stream, list[Message]] = defaultdict(list)
    recvs: dict[Stream, list[Message]] = defaultdict(list)
    for tl in timelines:
        for m in tl.messages:
            key = _stream(m)
            if key is None:
                out.unnamed += 1
            else:
                (sends if m.kind == KIND_SEND else recvs)[key].append(m)
    for key in sorted(set(sends) | set(recvs)):
        s = sorted(sends.get(key, []), key=lambda m: m.t_post)
        r = sorted(recvs.get(key, []), key=lambda m: m.t_post)
        n = min(len(s), len(r))
        out.pairs.extend(zip(s[:n], r[:n], strict=True))
        out.unmatched_sends += len(s) - n
        out.unmatched_recvs += len(r) - n
    by_comm: dict[int, dict[int, list[CollCall]]] = defaultdict(lambda: defaultdict(list))
    for tl in timelines:
        for c in tl.collectives:
            if c.comm:
                by_comm[c.comm][c.rank].append(c)
    for comm, ranks in by_comm.items():
        for calls in ranks.values():
            calls.sort(key=lambda c: c.t_enter)
        for i in range(max(len(calls) for calls in ranks.values())):
            inst = {rank: calls[i] for rank, calls in ranks.items() if i < len(calls)}
            if len({c.kind for c in inst.values()}) > 1:
                out.coll_mismatched += 1
                continue
            out.collectives[(comm, i)] = inst
    return out
