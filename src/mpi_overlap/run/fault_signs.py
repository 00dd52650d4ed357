"""Signs, in an MPI job's own output, of a known fault outside mpi-overlap, and the one
line that says what to do about it (docs/cluster.md, "The MPICH wheel under srun").

A job that dies in MPI_Init prints what the MPI and the launcher say, and mpi-overlap then
says the run is incomplete; neither tells a user that the cause is known and how to get
past it. A sign is a set of phrases that must all appear in the job's output (one line
each or several lines together), so that one common phrase alone names nothing."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FaultSign:
    """A known fault: every phrase of one of `any_of` seen, and what to do."""

    any_of: tuple[tuple[str, ...], ...]
    advice: str


SIGNS = (
    FaultSign(  # Slurm's PMI-1 read cuts the MPICH wheel's UCX address (issue 39)
        any_of=(("mpi/pmi2: value not properly terminated",),
                ("MPIDI_UCX_comm_addr_exchange", "Destination is unreachable")),
        advice=("Slurm's PMI-1 cut the MPICH wheel's UCX address exchange in MPI_Init, for "
                "some sizes of the command line and environment (docs/cluster.md, 'The "
                "MPICH wheel under srun'): inside an allocation, without --launcher and "
                "without MPI_OVERLAP_SLURM_LAUNCHER=srun, the wheel starts through Hydra's "
                "Slurm launcher, which avoids it; or export MPIR_CVAR_CH4_NETMOD=ofi for "
                "calibrate and profile alike"),
    ),
)


@dataclass
class FaultWatch:
    """Feeds on a job's output lines; `found` lists the signs all of whose phrases of
    one alternative appeared."""

    seen: set[str] = field(default_factory=set)

    def feed(self, line: str) -> None:
        for sign in SIGNS:
            for phrases in sign.any_of:
                self.seen.update(p for p in phrases if p in line)

    @property
    def found(self) -> list[FaultSign]:
        return [s for s in SIGNS if any(all(p in self.seen for p in phrases)
                                        for phrases in s.any_of)]
