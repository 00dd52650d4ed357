"""Known faults named from a job's output (src/mpi_overlap/run/fault_signs.py): the
lines a failed MPI_Init of the MPICH wheel under srun printed on the emulated cluster
(issue 39, docs/cluster.md) name the fault and its way out; one phrase alone does not."""

from __future__ import annotations

import pytest

from mpi_overlap.run.fault_signs import FaultWatch

SLURMSTEPD = ("slurmstepd: error: mpi/pmi2: value not properly terminated in client "
              "request")
UCX = ["Abort(1615503) on node 1: Fatal error in internal_Init: Other MPI error, error "
       "stack:", "MPIDI_UCX_comm_addr_exchange(...): ucx function returned with failed "
       "status(ucx_init.c 92 MPIDI_UCX_comm_addr_exchange): Destination is unreachable"]


@pytest.mark.parametrize("lines", [[SLURMSTEPD], UCX, [UCX[1]], [SLURMSTEPD, *UCX]])
def test_the_pmi_cut_is_named_with_its_way_out(lines: list[str]) -> None:
    watch = FaultWatch()
    for line in ["rank 0 starting", *lines, "srun: error: mo-node2: task 1: Exited"]:
        watch.feed(line)
    (sign,) = watch.found
    assert "MPICH wheel under srun" in sign.advice
    assert "MPI_OVERLAP_SLURM_LAUNCHER=srun" in sign.advice and "Hydra" in sign.advice
    assert "MPIR_CVAR_CH4_NETMOD=ofi" in sign.advice


@pytest.mark.parametrize("lines", [[], ["Destination is unreachable"],
                                   ["MPIDI_UCX_comm_addr_exchange failed"],
                                   ["value not properly terminated"]])
def test_one_common_phrase_alone_names_nothing(lines: list[str]) -> None:
    watch = FaultWatch()
    for line in lines:
        watch.feed(line)
    assert watch.found == []
