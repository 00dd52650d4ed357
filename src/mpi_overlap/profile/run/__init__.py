"""The profile's run: `mpi-overlap profile` (session.py, with LD_PRELOAD and the
MPI_OVERLAP_* environment of run/preload.py; entry.py its kind of run, with its
analysis), refusing a program linked against another MPI (program_abi.py with
elf_read.py), `--compare-bare` (compare_bare.py, with the library's own CPU share
under perf: perf_share.py) and other benchmarks' results fed into the advice
(toolchain_evidence.py)."""
