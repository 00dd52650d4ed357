"""The case studies (`mpi-overlap study halo|cg`): a mini-application's exchange modes,
with and without the profiler, repeatedly, into one run directory; does the profiler's
overlap bound predict what each mode saves? Not one native program: run.py launches
mo_halo or mo_cg (native/apps/), so their command (cli.py, one for both) and their steps
of `characterize` are their own; beside this file their analysis, report and documents
(documents.py; docs/case-studies.md)."""

from ..spec import Benchmark, BenchmarkSpec, CardLine, lazy_analysis


def _study(app: str, what: str, *, step_order: int, card_order: int,
           command: str | None) -> BenchmarkSpec:
    return BenchmarkSpec(
        benchmark=Benchmark(
            name=f"study-{app}",
            program="",
            title=f"Case study: {what}, measured and profiled",
            min_ranks=2,
            analyze=lazy_analysis(f"{__name__}.analysis", "analyze_study"),
            # per launch
            default_timeout_s=600.0,
            quick_timeout_s=120.0,
        ),
        package=__name__,
        help="",
        docs="case-studies.md",
        # `study halo|cg` at the top, declared once
        command_group="" if command else None,
        command=command,
        step=f"run.{app}_step",
        step_label=f"study {app}",
        step_order=step_order,
        card=CardLine(f"case study: {app}", order=card_order),
    )


SPECS = (
    _study("halo", "halo (3-D stencil) exchange modes", step_order=20, card_order=110,
           command="cli.command"),
    _study("cg", "cg (conjugate gradient) reductions", step_order=30, card_order=120,
           command=None),
)
