"""The benchmark registry: which native programs exist and how to run and analyse them."""

from .registry import BENCHMARKS, Benchmark, get_benchmark

__all__ = ["BENCHMARKS", "Benchmark", "get_benchmark"]
