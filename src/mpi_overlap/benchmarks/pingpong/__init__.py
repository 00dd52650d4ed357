"""The ping-pong benchmark (native/bench/pingpong.c): one-way transfer time per message
size, with every sample's disturbance recorded. It has no command of its own:
`mpi-overlap calibrate` runs it for the point-to-point part of the profiler's
transfer-time table (role "p2p-table"; xfer_table.py reads its result) and its verdict
(xfer_quality.py). No analysis: the medians are the result. Its result schema is beside
this file."""

from typing import Any

from ...core.errors import UserError
from ...core.sizes import parse_sizes
from ..spec import P2P_TABLE, Benchmark, BenchmarkSpec

# The largest message one MPI count of bytes can describe.
MAX_MPI_COUNT = (1 << 31) - 1
# The largest size measured in the transfer model's parts (xfer_parts.py): eager limits
# are far below it (MPICH and Open MPI: 4-64 KiB), and above it every size is whole.
PARTS_MAX = "1M"
# The stream (xfer_stream.py): windows of 64 messages of 64 KiB (4 MiB), far beyond a
# burst allowance (the emulated cluster's tbf bucket is 1 ms of the rate, 125 kB at
# 1 Gbit/s). Measured there (2026-12-01): 64 KiB x 64 and 256 KiB x 16 gave 8.1 ns/B
# at 1 Gbit/s where windows of 32 gave 7.8 and of 16 7.3 (TCP's start still in their
# second half); at 400 Mbit/s every window gave 20.9. A quick calibration's 6 windows
# take about 2 s at 100 Mbit/s.
STREAM = "64K"
STREAM_WINDOW = "64"


def _args(values: dict[str, Any], quick: bool, verbose: bool) -> list[str]:
    """The program's flags from calibrate's "sizes", "budget" (seconds: no new sample
    after it) and "stream" (whether to time the stream of STREAM), and the parts up to
    PARTS_MAX; checked here so that bad input fails before anything is built."""
    budget, sizes = values.get("budget"), values.get("sizes")
    args: list[str] = [] if budget is None else ["--budget", f"{budget:.3g}"]
    args += ["--parts-max", PARTS_MAX] + (["--stream", STREAM, "--stream-window", STREAM_WINDOW]
                                        if values.get("stream") else [])
    if sizes is not None:
        if max(parse_sizes(sizes)) > MAX_MPI_COUNT:
            raise UserError(f"--sizes: {max(parse_sizes(sizes))} bytes exceeds the largest MPI "
                            f"count ({MAX_MPI_COUNT} bytes)")
        args += ["--sizes", sizes]
    return args + (["--quick"] if quick else [])


SPEC = BenchmarkSpec(
    benchmark=Benchmark(
        name="pingpong",
        program="mo_pingpong",
        title="One-way transfer time per message size (blocking ping-pong)",
        min_ranks=2,
        analyze=None,
        default_timeout_s=900.0,
        quick_timeout_s=300.0,
    ),
    package=__name__,
    help="",
    command_group=None,
    role=P2P_TABLE,
    args=_args,
)
