"""The run layer, over platform/ and core/: how a run happens, between the build and the
run directory. rundir.py is the run directory (run.json, begin_run/end_run, load_run;
result_file.py a profile's result.json, one rank document per line); run_kind.py is what
a kind of run declares (`Benchmark`: program, limits, analysis, launches), filled in by
the benchmark packages and the profile above; runner.py does one
launch into one run directory, under the profiler when commands/bench_run.py (which
chooses how a benchmark runs) hands it the wrap (and what
every kind of run shares), multilaunch.py several launches merged into one result,
paired_launch.py a program with and without the profiler (preload.py: how a program
starts under libmpi_overlap); launch.py builds the command line and runs it under a time
limit (core/procs.py stops the job's whole process session, slurm_launch.py picks srun
and a PMI inside an allocation); launch_plan.py (--launches) and env_matrix.py
(--env-matrix) are settings bound around a command (core/bound_setting.py);
thread_census.py and run_guard.py (with core/machine_load.py) record what else ran and
judge whether a run's timings can be trusted."""
