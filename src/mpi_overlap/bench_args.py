"""The `bench NAME` command-line flags of each benchmark, turned into its native
program's flags (checked here, so bad input is one error line before anything is built).

Each benchmark's Args class holds what its CLI command parsed; `to_native()` returns the
program's argument list. Shared pieces: counts (`count_flag`, from benchmarks/spec.py),
size lists (`_sizes`), lists of known names (`choice_list`) and the --quick/--verbose
switches (`_switches`). The benchmarks that live in packages of their own declare their
flags there instead (spec.Flag).
"""

from __future__ import annotations

from dataclasses import dataclass

from .benchmarks.spec import count_flag, size_list
from .errors import UserError


def _sizes(value: str | None) -> list[str]:
    """`["--sizes", value]` for a size list given on the command line (checked); []."""
    return size_list("--sizes", value)


def _switches(*, quick: bool, verbose: bool) -> list[str]:
    return (["--quick"] if quick else []) + (["--verbose"] if verbose else [])


_DIRECTIONS = ("send", "recv", "both")


@dataclass
class OverheadArgs:
    sizes: str | None = None
    direction: str = "both"
    quick: bool = False
    reps: int | None = None
    thresh: float | None = None
    bthresh: float | None = None
    iters: int | None = None
    verbose: bool = False

    def to_native(self) -> list[str]:
        """Validate here (one-line errors before anything is built) and map to flags."""
        args = _sizes(self.sizes)
        if self.sizes is None and self.quick:
            args += ["--sizes", "0,64,1k,8k,64k,256k,1M,4M"]
        if self.direction not in _DIRECTIONS:
            raise UserError(f"--direction must be send, recv or both (got '{self.direction}')")
        args += ["--direction", self.direction]
        if self.quick:
            args.append("--quick")
        args += count_flag("--reps", self.reps, 2)
        for flag, value in (("--thresh", self.thresh), ("--bthresh", self.bthresh)):
            if value is not None:
                if not value > 1.0:
                    raise UserError(f"{flag} must be greater than 1 (got {value})")
                args += [flag, repr(value)]
        args += count_flag("--iters", self.iters, 1)
        if self.verbose:
            args.append("--verbose")
        return args


@dataclass
class CommOverlapArgs:
    """`bench comm-overlap` flags -> mo_comm_overlap flags."""

    sizes: str | None = None
    samples: int | None = None
    work_factor: float | None = None
    quick: bool = False
    verbose: bool = False

    def to_native(self) -> list[str]:
        args = _sizes(self.sizes)  # --quick alone: the program's quick sizes
        args += count_flag("--samples", self.samples, 2)
        if self.work_factor is not None:
            if not self.work_factor > 0:
                raise UserError(f"--work-factor must be positive (got {self.work_factor})")
            args += ["--work-factor", repr(self.work_factor)]
        return args + _switches(quick=self.quick, verbose=self.verbose)


