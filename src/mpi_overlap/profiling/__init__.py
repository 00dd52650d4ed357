"""Running applications under the overlap profiler (libmpi_overlap) and collecting what
each rank wrote into one run directory: session.py runs `mpi-overlap profile`, preload.py
sets LD_PRELOAD and the MPI_OVERLAP_* environment, program_abi.py (with elf_read.py)
refuses a program linked against another MPI, rank_documents.py and collect.py read and
merge the rank documents into result.json (result_file.py: one per line), job_stats.py
and stats_file.py the job's reduced statistics, callsites.py maps addresses to source
lines, compare_bare.py times `--compare-bare`, toolchain_evidence.py feeds other
benchmarks' results into the advice."""
