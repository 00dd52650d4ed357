"""An emulated cluster on one machine (`mpi-overlap cluster ...`): nodes are network and
host-name namespaces joined by a bridge over rate-shaped veth links, run by Debian's
Slurm and munge. We emulate the machine, not the engine: srun, slurmd and the MPI's own
transports do the work, as on a real cluster (docs/cluster.md). A product folder at the
commands' layer (its commands are the user's), imported by cli.py only."""
