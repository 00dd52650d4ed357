"""Developer tools, not the product: the Makefile's entry points (`python -m
mpi_overlap.tools.devtools ctest | fuzz | report-scale | profile-startup`), the fuzzing of
the native parsers, the report's scale test and the profiler's start-up cost. They may
import any part of the package; no product module imports them
(tests/test_import_cycles.py)."""
