"""The profiler-overhead benchmark: what libmpi_overlap costs an MPI program (small-message
rate and a compute-heavy program's run time, with and without it, interleaved), as ratios
measured in one run. Not one native program: run.py launches mo_msgrate and
mo_compute_app repeatedly into one run directory, so its command (cli.py) and its step of
`characterize` are its own; beside this file its analysis, report and documents (documents.py)."""

from ..spec import Benchmark, BenchmarkSpec, CardLine, lazy_analysis

SPEC = BenchmarkSpec(
    benchmark=Benchmark(
        name="profiler-overhead",
        program="",
        title="What the overlap profiler costs: message rate and run time, with/without",
        min_ranks=2,
        analyze=lazy_analysis(f"{__name__}.analysis", "analyze_profiler_overhead"),
        # per launch
        default_timeout_s=300.0,
        quick_timeout_s=120.0,
    ),
    package=__name__,
    help="",  # its command's (cli.py)
    command="cli.command",
    step="run.characterize_step",
    step_label="profiler-overhead",
    step_order=10,
    card=CardLine("profiler overhead", order=130),
)
