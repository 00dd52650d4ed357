"""The profiler wing: everything `mpi-overlap profile` is, beside the C library
(native/profiler/). By layer, each sub-folder importing only those before it:

- documents/: what libmpi_overlap writes (rank documents, the job's statistics and call
  sites, result.json one document per line) and how it is read back and merged;
- trace/: the per-rank timeline traces, both ends of each message matched, Perfetto, OTF2;
- analysis/: the cross-rank merge into analysis.json, its checks, headline and advice,
  the two-sided bounds and waits;
- report/: the profile's parts of the shared page, terminal and report.json (report/),
  and the Hatchet export;
- run/: `mpi-overlap profile` itself: the program's MPI check, `--compare-bare`;
- its documents as typed models: documents/models.py (profile-rank, profile-stats,
  profile-run) and analysis/document.py (analysis-profile).

Two of its parts lie lower, because folders below the profile need them: how a program
is started under the library (run/preload.py: benchmarks measure themselves with it) and
result.json's line layout (run/result_file.py: run/rundir.load_run reads it)."""
