"""What `cluster up`, `status` and `down` print: plain lines, one fact each."""

from __future__ import annotations

from .control import Status
from .daemons import environment
from .layout import Layout


def up_lines(layout: Layout) -> list[str]:
    names = ", ".join(f"{n.name} ({n.address})" for n in layout.node_list)
    conf = environment()["SLURM_CONF"]
    return [f"cluster up: {layout.nodes} nodes, {names}; links shaped to {layout.rate}; "
            f"{layout.cpus_per_node} CPU(s) per node in Slurm",
            "run commands on it with: mpi-overlap cluster exec -- srun -N "
            f"{layout.nodes} hostname (or export SLURM_CONF={conf})",
            "take it down with: mpi-overlap cluster down"]


def status_lines(st: Status) -> list[str]:
    if not st.anything:
        return ["no cluster is up here"]
    out = []
    if st.layout:
        out.append(f"cluster: {st.layout.nodes} nodes, links {st.layout.rate}, "
                   f"{st.layout.cpus_per_node} CPU(s) per node")
    else:
        out.append("cluster: no state file, but parts of one are left (`cluster down` "
                   "removes them)")
    for name, address, qdisc, answers in st.nodes:
        out.append(f"  {name} {address}: slurmd {'answers' if answers else 'does not answer'}; "
                   f"link {qdisc}")
    out.append("  processes: " + (", ".join(f"{k} ({v})" for k, v in sorted(st.daemons.items()))
                                  or "none"))
    out.append(f"  namespaces: {', '.join(st.namespaces) or 'none'}; links: "
               f"{', '.join(st.links) or 'none'}; /etc/hosts block: "
               f"{'yes' if st.hosts_block else 'no'}")
    return out
