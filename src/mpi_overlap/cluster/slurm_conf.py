"""The emulated cluster's slurm.conf: the essentials a trial found to work on this kind
of machine (no cgroups, no accounting, root as SlurmUser; shared/cluster-notes.md), with
every file under the cluster's runtime directory."""

from __future__ import annotations

from .layout import CONTROLLER, CTLD_PORT, RUNTIME_DIR, SLURMD_PORT, Layout

MUNGE_DIR = RUNTIME_DIR / "munge"
MUNGE_SOCKET = MUNGE_DIR / "munge.socket.2"
SLURM_DIR = RUNTIME_DIR / "slurm"
SLURM_CONF = RUNTIME_DIR / "slurm.conf"
CTLD_PID = SLURM_DIR / "slurmctld.pid"
# One path in slurm.conf, a different directory behind it on each node (daemons.py).
NODE_TMPFS = RUNTIME_DIR / "node-tmp"
PARTITION = "emulated"


def render(layout: Layout) -> str:
    nodes = "\n".join(f"NodeName={n.name} NodeAddr={n.address} CPUs={layout.cpus_per_node} "
                      "State=UNKNOWN" for n in layout.node_list)
    return f"""# Written by `mpi-overlap cluster up`; removed by `mpi-overlap cluster down`.
ClusterName=mpioverlap
SlurmctldHost={CONTROLLER}({layout.controller_address})
SlurmctldPort={CTLD_PORT}
SlurmdPort={SLURMD_PORT}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={MUNGE_SOCKET}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={SLURM_DIR}/ctld
SlurmdSpoolDir={SLURM_DIR}/spool-%n
SlurmctldPidFile={CTLD_PID}
SlurmdPidFile={SLURM_DIR}/slurmd-%n.pid
SlurmctldLogFile={SLURM_DIR}/slurmctld.log
SlurmdLogFile={SLURM_DIR}/slurmd-%n.log
TmpFS={NODE_TMPFS}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/linear
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
# An allocation whose salloc or srun died (killed, Ctrl-C'd) is ended after 20 s instead
# of holding the nodes for ever (it did, with 0).
InactiveLimit=20
KillWait=5
{nodes}
PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
