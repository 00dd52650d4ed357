"""The benchmarks: one package per benchmark (benchmarks/<name>/: its SPEC declared as
data in __init__.py through spec.py, analysis.py, report.py, evidence.py and advice.py
where a profile's advice uses it (spec.Evidence), its documents (documents.py)), found by
discovery.py;
registry.py derives the registry, the `bench` commands, the reporters, the summary card
and characterize's steps from the specs, adds `profile`, the profiler's run kind, and
hands the calibration and the profile, below, what the specs declare for them."""

from .registry import BENCHMARKS, Benchmark, get_benchmark

__all__ = ["BENCHMARKS", "Benchmark", "get_benchmark"]
