"""How a run happens, between the build and the run directory: bench_run.py chooses how a
benchmark runs, runner.py does one launch into one run directory (and what every kind of
run shares), multilaunch.py several launches merged into one result, paired_launch.py a
program with and without the profiler (preload.py: how a program starts under
libmpi_overlap); launch.py builds the command line and runs it
under a time limit (procs.py stops the job's whole process session, slurm_launch.py picks
srun and a PMI inside an allocation); launch_plan.py (--launches) and env_matrix.py
(--env-matrix) are settings bound around a command (bound_setting.py); machine_load.py,
thread_census.py and run_guard.py record what else ran and judge whether a run's timings
can be trusted."""
