"""The traced program's own datatypes timed on the target (`predict --probe`;
native/replay/layout_probe.c; docs/method.md, "The program's layouts timed on the target").

Where a placement packs messages into a node, what the recorded calls spent on their
payload beyond the table was the network transport's (engine.on_target, `carried`). The
probe times, on 2 ranks of this machine with the run's MPI, each (send datatype, receive
datatype, bytes) of those messages in an exchange (both ranks MPI_Irecv, MPI_Isend,
MPI_Waitall) beside the same bytes contiguous. The difference, per exchange, is what the
target's transport spends on the layout beyond contiguous data, which the table does not
price; each of the message's two ends (its send, its receive) gets half of it, as its own
work on the target. A message contiguous at both ends gets nothing: the table prices it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UserError
from ..profile.trace.dtypes import Layout
from .program import Program

PROBE_DIR = "predict-probe"
INPUT, OUTPUT = "probe.in", "probe.jsonl"
# The most cases one probe times (each about 0.1 s): the layouts of the most messages.
MAX_CASES = 64
SAMPLES = 11
TIMEOUT_S = 300


@dataclass(frozen=True)
class Case:
    """One (send datatype, receive datatype, bytes) to time; None: contiguous."""

    send: Layout | None
    recv: Layout | None
    nbytes: int


def _key(layout: Layout | None) -> tuple[Any, ...] | None:
    return None if layout is None else (layout.values, layout.names)


def cases(prog: Program, messages: list[int]) -> tuple[list[Case], dict[int, int]]:
    """The distinct cases of `messages` that have a layout at either end (at most
    MAX_CASES, the most messages first) and each such message's case index."""
    found: dict[tuple[Any, ...], tuple[Case, list[int]]] = {}
    for k in messages:
        send, recv = prog.msgs[k].layouts
        if send is None and recv is None:
            continue
        if (send is not None and not send.values) or (recv is not None and not recv.values):
            continue  # a tree cut short cannot be built again
        key = (_key(send), _key(recv), prog.msgs[k].nbytes)
        found.setdefault(key, (Case(send, recv, prog.msgs[k].nbytes), []))[1].append(k)
    ranked = sorted(found.values(), key=lambda x: -len(x[1]))[:MAX_CASES]
    index = {k: i for i, (_, ks) in enumerate(ranked) for k in ks}
    return [c for c, _ in ranked], index


def _side(layout: Layout | None) -> str:
    if layout is None:
        return "side 0 0"
    names = [n or "-" for n in layout.names]
    return (f"side {len(layout.values)} {' '.join(map(str, layout.values))} "
            f"{len(names)} {' '.join(names)}").rstrip()


def probe_input(found: list[Case]) -> str:
    lines = ["mo-layout-probe 1"]
    for c in found:
        lines += [f"case {c.nbytes}", _side(c.send), _side(c.recv)]
    return "\n".join(lines) + "\n"


def run_probe(run_dir: Path, found: list[Case], toolchain: str) -> list[dict[str, Any]]:
    """Times the cases on 2 ranks of this machine with `toolchain` (the run's MPI); one
    result per case, in order (`error` where the probe could not build its datatype)."""
    from ..platform.build import build_dir_for, ensure_built
    from ..platform.toolchains import get_toolchain
    from ..run.launch import mpiexec_command, run_job

    tc = get_toolchain(toolchain)
    ensure_built(tc)
    exe = build_dir_for(tc) / "replay" / "mo_layout_probe"
    if not exe.is_file():
        raise UserError(f"{exe} is not built: the probe needs the MPI the run used "
                        f"({toolchain})")
    where = run_dir / PROBE_DIR
    out = where / OUTPUT
    try:
        where.mkdir(exist_ok=True)
        (where / INPUT).write_text(probe_input(found))
        out.unlink(missing_ok=True)
    except OSError as err:
        raise UserError(f"cannot write the layout probe's input in {where}: "
                        f"{err.strerror or err}", 74) from None
    cmd = mpiexec_command(tc, 2, [str(exe), "--input", str(where / INPUT), "--output", str(out),
                                  "--samples", str(SAMPLES)])
    done = run_job(cmd, tc.environment(), where, timeout_s=TIMEOUT_S)
    if done.status != "complete":
        raise UserError(f"the layout probe did not complete ({done.status}: "
                        f"{done.message or 'no message'}); its logs are in {where}")
    try:
        rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    except (OSError, ValueError) as err:
        raise UserError(f"the layout probe's results in {out} cannot be read ({err}); its "
                        f"logs are in {where}") from None
    by_case = {r["case"]: r for r in rows}
    return [by_case.get(i, {"case": i, "error": "no result"}) for i in range(len(found))]


def end_work(prog: Program, index: dict[int, int],
             results: list[dict[str, Any]]) -> dict[int, float]:
    """Per probed message: the work each of its ends does on the target beyond contiguous
    data, half of the case's extra time per exchange (not below 0)."""
    out: dict[int, float] = {}
    for k, i in index.items():
        r = results[i]
        if "error" in r:
            continue
        out[k] = max(0.0, float(r["layout_s"]) - float(r["contiguous_s"])) / 2.0
    return out


# A post that packs a layout holds at least its share of the exchange's extra work (about a
# third of a 32 KiB halo face's exchange here); MPICH's MPI_Isend of that face on one node
# took 1.6-1.9 us of a 64-70 us exchange (2.5 %), and of the same bytes contiguous 1.2-1.5
# of 17-27: it queues the message and moves it in the completing call.
DEFERRED_POST_SHARE = 0.1


def deferred(index: dict[int, int], results: list[dict[str, Any]]) -> set[int]:
    """The probed messages whose MPI_Isend, timed with their layout, held less than
    DEFERRED_POST_SHARE of the exchange: the target's MPI sends them from the call that
    completes the send, not from the post, whatever its table's eager limit says (the
    replay moves them as it moves rendezvous messages: once both ends have polled)."""
    out: set[int] = set()
    for k, i in index.items():
        r = results[i]
        post, whole = r.get("layout_post_s"), r.get("layout_s")
        if post is not None and whole and float(post) < DEFERRED_POST_SHARE * float(whole):
            out.add(k)
    return out
