"""`mpi-overlap calibrate --check`: is the stored transfer-time table still right?

A few seconds of ping-pong on a handful of sizes, judged like a calibration
(xfer_quality.py), compared with the table at each size:

- *stale* when an undisturbed estimate is faster than the table by more than LIMIT_PCT
  (noise only adds time, so a faster undisturbed measurement proves the table too slow),
  or slower by more than LIMIT_PCT while the check's own samples were clean (verdict ok),
  or when the table itself is suspect or unverified;
- *cannot tell* when the check could not measure (too few undisturbed samples, or only
  slower on a busy machine);
- *still valid* otherwise.

Exit codes: 0 still valid, 1 stale (recalibrate), 3 cannot tell.

One definition of the limit: each size's change is the whole percentage printed beside it,
and `compare` judges that same number against ±LIMIT_PCT, the limit the lines print (the
limit for faster was once a ratio of 1/1.25, −20 %, while "±25 %" was printed, so
"−24 %, ok" was followed by "stale ... beyond ±25 %").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from ..core.errors import UserError
from ..core.sizes import format_size
from ..core.ui import Ui
from ..platform.toolchains import Toolchain
from ..run.runner import check_ranks, check_timeout, checked_toolchains
from .calibrate import calibration_run, fingerprint, p2p_args
from .table_benchmarks import P2P_TABLE, with_role
from .table_trust import stale_for
from .xfer_quality import UNVERIFIED, judge
from .xfer_table import check_fits, read_table, table_path

CHECK_SIZES = (0, 1 << 10, 64 << 10, 1 << 20)
CHECK_BUDGET_S = 2.0
LIMIT_PCT = 25  # the change against the table beyond which a size is stale, either way
STALE_EXIT, UNKNOWN_EXIT = 1, 3


@dataclass(frozen=True)
class SizeCheck:
    change_pct: int  # now against the table, the whole percentage printed
    kind: str  # "within", "faster", "slower" (stale) or "unknown" (slower, noisy samples)

    def words(self) -> str:
        """'-24 %: within ±25 %' — the figure and what it means, by the one limit."""
        return {"within": f"{self.change_pct:+d} %: within ±{LIMIT_PCT} %",
                "faster": f"{self.change_pct:+d} %: faster beyond -{LIMIT_PCT} %",
                "slower": f"{self.change_pct:+d} %: slower beyond +{LIMIT_PCT} %",
                "unknown": f"{self.change_pct:+d} %: slower beyond +{LIMIT_PCT} %, but "
                           "with disturbed samples"}[self.kind]


def compare(table_s: float, now_s: float, verdict: str) -> SizeCheck:
    """One size: the table's time against the check's undisturbed estimate now, whose
    samples had `verdict` (xfer_quality.py). Faster beyond the limit is stale whatever the
    samples (noise only adds time); slower is stale only with clean ("ok") samples."""
    change = round(100 * (now_s / table_s - 1)) if table_s > 0 else 10**9
    if change < -LIMIT_PCT:
        return SizeCheck(change, "faster")
    if change > LIMIT_PCT:
        return SizeCheck(change, "slower" if verdict == "ok" else "unknown")
    return SizeCheck(change, "within")


@dataclass
class CheckOutcome:
    status: str  # "valid", "stale" or "unknown"
    lines: list[str]  # per size, then the conclusion
    run_path: Path | None = None

    @property
    def exit_code(self) -> int:
        return {"valid": 0, "stale": STALE_EXIT}.get(self.status, UNKNOWN_EXIT)


def check_table(tc: Toolchain, *, launcher: str | None, timeout_s: float | None,
                out_base: Path, ui: Ui) -> CheckOutcome:
    """Measure CHECK_SIZES for about CHECK_BUDGET_S and compare with `tc`'s table here."""
    fp = fingerprint(tc, ui=ui)
    path = table_path(tc, fp.machine_fp, fp.toolchain_fp)
    if not path.is_file():
        raise UserError(f"no transfer-time table for toolchain '{tc.name}' on this machine to "
                        f"check; measure one with 'mpi-overlap calibrate --mpi {tc.name}'")
    table = read_table(path)
    check_fits(table, fp.machine_fp, fp.toolchain_fp)
    if table.verdict in ("suspect", UNVERIFIED):
        return CheckOutcome("stale", [f"{tc.name}: stale, recalibrate: the table {path} is "
                                      f"{table.verdict} ({table.verdict_reason})"])
    stale = stale_for(table, tc)
    if stale:
        return CheckOutcome("stale", [f"{tc.name}: stale, recalibrate: {stale}"])
    sizes = ",".join(str(s) for s in CHECK_SIZES)
    args = p2p_args(quick=True, sizes=sizes, budget_s=CHECK_BUDGET_S)
    run = calibration_run(P2P_TABLE, tc, args, ranks=2, quick=True, launcher=launcher,
                          timeout_s=timeout_s, out_base=out_base, ui=ui)
    assert run.result is not None
    now = {q.nbytes: q for q in judge([run.result]).get("intra", [])}
    lines, faster, slower, unknown = [], [], [], []
    for size in CHECK_SIZES:
        q = now.get(size)
        was = table.lookup(size)
        name = format_size(size)
        if q is None or q.estimate_s is None or not q.measured:
            unknown.append(name)
            lines.append(f"  {name}: table {was * 1e6:.3g} µs, now not measured "
                         f"({q.clean if q else 0} undisturbed samples)")
            continue
        size_check = compare(was, q.estimate_s, q.verdict)
        lines.append(f"  {name}: table {was * 1e6:.3g} µs, now {q.estimate_s * 1e6:.3g} µs "
                     f"({size_check.words()}; samples {q.verdict})")
        {"faster": faster, "slower": slower, "unknown": unknown}.get(
            size_check.kind, []).append(name)
    if faster or slower:
        why = "; ".join(x for x in (
            f"faster now at {', '.join(faster)}" if faster else "",
            f"slower now at {', '.join(slower)} with undisturbed samples" if slower else "")
            if x)
        status, tail = "stale", f"stale, recalibrate ({why}, beyond ±{LIMIT_PCT} %)"
    elif unknown:
        status, tail = "unknown", (f"cannot tell: {', '.join(unknown)} could not be measured "
                                   "cleanly now (a busy machine); check again later")
    else:
        status, tail = "valid", f"still valid (within ±{LIMIT_PCT} % at every size)"
    return CheckOutcome(status, [*lines, f"{tc.name}: {tail}"], run.path)


def check_session(toolchains: list[str], *, launcher: str | None, timeout_s: float | None,
                  out_base: Path, console: Console, err_console: Console) -> int:
    """`calibrate --check`: check each toolchain's table; returns the worst exit code."""
    check_ranks(with_role(P2P_TABLE).benchmark, 2, "calibrate --check")
    check_timeout(timeout_s)
    tcs = checked_toolchains(toolchains, ranks=2, launcher=launcher)
    ui = Ui(err_console)
    worst = 0
    for tc in tcs:
        outcome = check_table(tc, launcher=launcher, timeout_s=timeout_s, out_base=out_base,
                              ui=ui)
        for line in outcome.lines:
            console.print(line, markup=False)
        if outcome.run_path:
            console.print(f"{tc.name}: run {outcome.run_path}", markup=False)
        worst = max(worst, outcome.exit_code)
    return worst
