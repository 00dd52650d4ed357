"""The top layer under cli.py: what each command does end to end, over every folder
below it. A benchmark on each toolchain (`session`; `bench_run` chooses how it runs:
one launch, several, or under the profiler with a calibrated table), the suites (`suite`),
`characterize`, one report made of the run directories' reporters (`reporting`),
`doctor` and its probes, the toolchain list (`toolchain_view`), and `mpi_overlap.load`'s
DataFrames (`data_out`). cli.py only parses arguments and calls these, or the
session functions of the layers below where a command is one of theirs (`profile`,
`calibrate`, `predict`, `cluster`)."""
