"""`node-rsh`, the cluster's stand-in for ssh: `node-rsh [options] HOST CMD...` runs CMD
through `sh -c` on that emulated node, in the network, UTS and mount namespaces of its
slurmd (so with the node's address, host name and TmpFS). It is what an MPI's own
launcher needs to start its daemons on hosts of a list, as it would with ssh on a real
cluster: Hydra's `mpiexec -hosts … -launcher ssh -launcher-exec node-rsh` and Open MPI's
`mpirun --host … --mca plm_rsh_agent node-rsh`. Options before HOST (ssh's -x, -q, …)
are ignored. `cluster up` writes it into the runtime directory; `down` removes it with
the directory.

The launchers' control connections come back to the launcher in the root namespace,
which the nodes reach only on the bridge: Hydra must be told to advertise that address
(`-localhost mo-ctl`); Open MPI offers all its addresses and the bridge's one works."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from .layout import CONTROLLER, RUNTIME_DIR, Layout
from .slurm_conf import SLURM_DIR

NODE_RSH = RUNTIME_DIR / "node-rsh"


def write(layout: Layout) -> Path:
    nodes = " ".join(n.name for n in layout.node_list)
    pid_dir = shlex.quote(str(SLURM_DIR))
    script = f"""#!/bin/sh
# node-rsh [options] HOST CMD...: CMD on an emulated node (mpi-overlap cluster; see
# src/mpi_overlap/cluster/node_shell.py). Written by `cluster up`.
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
host=$1
[ $# -ge 2 ] || {{ echo "node-rsh: usage: node-rsh [options] HOST CMD..." >&2; exit 255; }}
shift
case " {nodes} " in *" $host "*) ;; *)
    echo "node-rsh: '$host' is not a node of this cluster ({nodes})" >&2; exit 255 ;;
esac
pid=$(cat {pid_dir}/slurmd-"$host".pid 2>/dev/null) || {{
    echo "node-rsh: the slurmd of $host is not running" >&2; exit 255; }}
exec nsenter -t "$pid" --net --uts --mount -- sh -c "$*"
"""
    NODE_RSH.write_text(script)
    os.chmod(NODE_RSH, 0o755)
    return NODE_RSH


def own_launcher(layout: Layout, flavor: str) -> str | None:
    """The --launcher that starts one rank on each node through the MPI's own launcher
    (Hydra's mpiexec, Open MPI's mpirun) for an MPI of `flavor`; None for another."""
    hosts = ",".join(n.name for n in layout.node_list)
    if flavor == "mpich":
        return (f"mpiexec -hosts {hosts} -launcher ssh -launcher-exec {NODE_RSH} "
                f"-localhost {CONTROLLER}")
    if flavor == "openmpi":
        return f"mpirun --host {hosts} --mca plm_rsh_agent {NODE_RSH}"
    return None


def launcher_examples(layout: Layout) -> list[str]:
    """--launcher values that start ranks on every node through the MPI's own launcher."""
    return [str(own_launcher(layout, flavor)) for flavor in ("mpich", "openmpi")]
