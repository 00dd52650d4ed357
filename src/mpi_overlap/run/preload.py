"""How a program is started under libmpi_overlap: the library of the toolchain's build,
the environment it reads (docs/profiler.md, "Settings"), and the command prefix.

The library is put into LD_PRELOAD of the ranks only, by starting each rank as
`env LD_PRELOAD=... program`: the launcher itself (mpiexec, srun) must not load an MPI
library, and this way works with any launcher.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UserError
from ..core.sizes import parse_size, parse_sizes

LIBRARY = "libmpi_overlap.so"


def profiler_library(build_dir: Path) -> Path:
    lib = build_dir / "profiler" / LIBRARY
    if not lib.is_file():
        raise UserError(f"the profiler library {lib} was not built")
    return lib


def parse_trace_cap(text: str | None) -> int | None:
    """--trace-cap: bytes per rank ("256M", "1G"); None = the library's default."""
    if text is None:
        return None
    try:
        cap = parse_size(text)
    except UserError:
        cap = 0
    if cap <= 0:
        raise UserError(f"--trace-cap takes one size above 0 bytes, e.g. 256M (got '{text}')")
    return cap


def parse_bins(text: str | None) -> list[int] | None:
    """--bins: ascending byte edges ("64K", "1K,64K"); None = powers of two."""
    if text is None or text.strip().lower() in ("", "pow2"):
        return None
    edges = [e for e in parse_sizes(text) if e > 0]
    if not edges:
        raise UserError(f"--bins needs at least one edge above 0 bytes (got '{text}')")
    if len(edges) > 64:
        raise UserError(f"--bins takes at most 64 edges (got {len(edges)})")
    return edges


@dataclass(frozen=True)
class ProfilerSetup:
    library: Path
    table: Path
    outdir: Path
    bins: list[int] | None = None
    force_table: bool = False
    snapshot_s: float = 10.0
    trace: bool = False  # per-rank timeline trace (docs/profiler.md, "Timeline traces")
    trace_cap: int | None = None  # bytes per rank; None: the library's default (256 MiB)
    callsites: bool = True  # False: MPI_OVERLAP_CALLSITES=0 (to measure what they cost)
    callsite_depth: int = 1  # frames per call site (> 1: an unwind per call, mop_stacks.h)
    # profile.rank-N.json besides the job file: None = the library's default (small jobs)
    per_rank: bool | None = None
    # the job file holds the rank documents (True), or the job's statistics stand for them
    # (False); None: the library's default (small jobs, as per_rank)
    documents: bool | None = None

    def env(self) -> dict[str, str]:
        env = {
            "MPI_OVERLAP_TABLE": str(self.table.resolve()),
            "MPI_OVERLAP_OUTDIR": str(self.outdir.resolve()),
            "MPI_OVERLAP_SNAPSHOT_S": repr(self.snapshot_s),
        }
        if self.bins:
            env["MPI_OVERLAP_BINS"] = ",".join(str(b) for b in self.bins)
        if self.force_table:
            env["MPI_OVERLAP_FORCE_TABLE"] = "1"
        if not self.callsites:
            env["MPI_OVERLAP_CALLSITES"] = "0"
        if self.callsite_depth > 1:
            env["MPI_OVERLAP_CALLSITE_DEPTH"] = str(self.callsite_depth)
        if self.per_rank is not None:
            env["MPI_OVERLAP_PER_RANK"] = "1" if self.per_rank else "0"
        if self.documents is not None:
            env["MPI_OVERLAP_JOB_DOCUMENTS"] = "1" if self.documents else "0"
        if self.trace:
            env["MPI_OVERLAP_TRACE"] = "1"
            if self.trace_cap is not None:
                env["MPI_OVERLAP_TRACE_CAP"] = str(self.trace_cap)
        return env

    def wrap(self, argv: list[str]) -> list[str]:
        """The rank command: the environment above plus LD_PRELOAD, then the program."""
        assigns = [f"{k}={v}" for k, v in self.env().items()]
        return ["env", f"LD_PRELOAD={self.library.resolve()}", *assigns, *argv]
