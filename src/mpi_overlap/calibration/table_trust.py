"""Whether a transfer-time table may be used, and what to say about it.

The rules, in one place for `profile`, the automatic calibration (calibrate.py), the
report and `calibrate --check` (the library applies the first in C, mop_runtime.c):

- a `suspect` table is refused with one line saying why and how to override;
- an `unverified` one (a format without a verdict, from an older mpi-overlap) is
  measured again when it is the state directory's own, and used with a note when the
  user named it;
- a `noisy` one is used with a note;
- a table made before the toolchain's MPI was last installed or changed may no longer
  describe it: measured again when it is the state directory's own, noted otherwise;
- a table measured on a busy machine that disagrees with the `ok` table of the same
  machine and MPI it would replace (at a size both measured, their 95 % intervals apart
  and their values more than AGREEMENT_FLOOR apart) is suspect, and the quiet one is
  kept (contradicts_quiet): the CPU share of each sample shows a rank that lost its
  core, not caches and memory shared with the other work, which slowed 1 MiB messages
  by 25-60 % in samples that passed it;
- a new table whose verdict is worse than that of the table it would replace, for the
  pair classes both measured, does not replace it: both are kept, the better is used,
  and one line says so (replacement).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core.errors import UserError
from ..platform.toolchains import Toolchain
from .xfer_quality import UNVERIFIED
from .xfer_table import XferTable, read_table

SUSPECT_EXIT = 4  # `calibrate` made a suspect table / `profile` refused one
# Two tables agree at a size when their 95 % intervals there (each stretched to take in
# the table's value, the fit) overlap, or when their values differ by no more than this
# fraction, whatever their intervals: an interval of a few hundred quiet samples is a
# few ns wide, narrower than the drift between two quiet calibrations.
AGREEMENT_FLOOR = 0.10


def _span(table: XferTable, cls: str, nbytes: int, value: float) -> tuple[float, float]:
    """The table's 95 % interval at one of its points, stretched to take in its value;
    the value alone where the table does not carry the interval."""
    q = table.quality.get((cls, nbytes))
    if q is None or q.lo_s is None or q.hi_s is None:
        return value, value
    return min(q.lo_s, value), max(q.hi_s, value)


def disagreement(new: XferTable, ref: XferTable) -> tuple[float, str, int, float, float] | None:
    """Where `new` and `ref` disagree most, as (relative difference, class, bytes, new
    value, ref value), over the sizes both measured in the classes both have: a size
    disagrees when their intervals (_span) do not overlap and their values differ by
    more than AGREEMENT_FLOOR. None when they agree everywhere (or share no size)."""
    worst: tuple[float, str, int, float, float] | None = None
    for cls, points in new.points.items():
        theirs = dict(ref.points.get(cls, []))
        for nbytes, seconds in points:
            other = theirs.get(nbytes)
            if other is None or other <= 0:
                continue
            a, b = _span(new, cls, nbytes, seconds), _span(ref, cls, nbytes, other)
            off = abs(seconds - other) / other
            if max(a[0] - b[1], b[0] - a[1]) <= 0 or off <= AGREEMENT_FLOOR:
                continue
            if worst is None or off > worst[0]:
                worst = (off, cls, nbytes, seconds, other)
    return worst


def contradicts_quiet(new: XferTable, quiet: XferTable | None) -> str | None:
    """Why `new`, measured while other processes used the machine (its `load`), cannot
    stand beside `quiet`, an `ok` table of the same machine and MPI: the size where they
    disagree most (disagreement); None when they agree or there is nothing to compare
    with."""
    if not new.load or quiet is None or quiet.verdict != "ok":
        return None
    worst = disagreement(new, quiet)
    if worst is None:
        return None
    off, cls, nbytes, seconds, ref = worst
    return (f"measured on a busy machine (its load line says what ran), it differs from the "
            f"quiet table of {quiet.created} by {100 * off:.0f} % at {cls} {nbytes} B "
            f"({seconds * 1e6:.3g} against {ref * 1e6:.3g} µs; their 95 % intervals apart "
            f"and more than {100 * AGREEMENT_FLOOR:.0f} %), which is kept")


_RANK = {"ok": 0, "noisy": 1, "suspect": 2}


@dataclass(frozen=True)
class Replacement:
    """What becomes of a new table beside the one it would replace: `table` the new one
    as written (marked suspect when it contradicts the quiet one), `beside` the suffix it
    is written under beside the stored one ('' when it replaces it), and `said` the one
    line for the terminal (None when nothing needs saying)."""

    table: XferTable
    beside: str = ""
    said: str | None = None


def replacement(new: XferTable, old: XferTable | None, *, old_stale: bool = False,
                where: Path | None = None) -> Replacement:
    """Whether `new` (its verdict from its own samples, before `old`'s classes are merged
    in) replaces `old`, the stored table of the same machine and MPI (None when there is
    none that fits; `old_stale`: made before the toolchain last changed, so never kept
    for its verdict). `new` does not replace it, and is written beside it (suffix
    `.<verdict>`), when it measured only pair classes `old` has (one that brings a class
    `old` lacks is needed, and is merged with it) and its verdict is worse than `old`'s
    (ok, noisy, suspect; an unverified `old` is measured again to be replaced), which a
    busy table that contradicts a quiet `old` is (contradicts_quiet: then suspect)."""
    if old is None or old_stale:
        return Replacement(new)
    contradiction = contradicts_quiet(new, old)
    if contradiction:
        new = replace(new, verdict="suspect", verdict_reason=contradiction)
    classes = set(new.points) | set(new.unmeasured)
    if not classes or not classes <= set(old.points) | set(old.unmeasured) or \
            old.verdict not in _RANK or _RANK.get(new.verdict, 2) <= _RANK[old.verdict]:
        return Replacement(new)
    name = f"{where or old.path or 'the stored table'}"
    said = (f"the new table is {new.verdict} ({_first(new.verdict_reason)}), worse than the "
            f"stored one ({old.verdict}, made {old.created}): both are kept, the new one "
            f"beside it (.{new.verdict}.table), and {name} stays in use")
    return Replacement(new, beside=f".{new.verdict}", said=said)


def _first(reason: str, most: int = 160) -> str:
    """The start of a verdict reason, short enough for one line."""
    return reason if len(reason) <= most else reason[:most - 1].rstrip() + "…"


def refusal(table: XferTable, *, override: str) -> UserError:
    """The one-line error for a suspect table; `override` names the way to use it anyway."""
    return UserError(
        f"transfer-time table {table.path or '(new)'} is marked suspect: {table.verdict_reason}; "
        f"measure it again when the machine is quieter (mpi-overlap calibrate --mpi "
        f"{table.toolchain_name}), or use it anyway with {override}", exit_code=SUSPECT_EXIT)


def note(table: XferTable) -> str | None:
    """One line for a table that is used but not fully trusted (unverified, suspect and
    forced), None for an ok one, and for a noisy one: how much its uncertainty moves an
    answer is the profile's to say, where it does (profile/analysis/table_sensitivity.py), and
    the report keeps its verdict and reason."""
    if table.verdict in ("ok", "noisy"):
        return None
    where = table.path or "(new)"
    if table.verdict == UNVERIFIED:
        return (f"note: transfer-time table {where} is unverified ({table.verdict_reason}): "
                "its times were not checked for disturbed samples")
    return f"note: transfer-time table {where} is {table.verdict}: {table.verdict_reason}"


def check_usable(table: XferTable, *, force: bool, override: str) -> str | None:
    """Raise the refusal for a suspect table unless `force`; else the note to show."""
    if table.verdict == "suspect" and not force:
        raise refusal(table, override=override)
    return note(table)


def _utc(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def toolchain_modified(tc: Toolchain) -> str | None:
    """When the toolchain's compiler wrapper or launcher last changed (UTC, ISO 8601):
    reinstalling an MPI rewrites them; None when neither can be read."""
    times = []
    for tool in (tc.mpicc, tc.mpiexec):
        try:
            times.append(Path(tool).stat().st_mtime)
        except OSError:
            continue
    if not times:
        return None
    return datetime.fromtimestamp(max(times), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def older_than(created: str | None, modified: str | None) -> bool:
    """Whether a table created at `created` predates a toolchain change at `modified`."""
    a, b = _utc(created), _utc(modified)
    return a is not None and b is not None and a < b


def stale_for(table: XferTable, tc: Toolchain) -> str | None:
    """Why the table may no longer describe the toolchain, or None."""
    modified = toolchain_modified(tc)
    if older_than(table.created, modified):
        return (f"toolchain '{tc.name}' was installed or changed ({modified}) after the table "
                f"was made ({table.created})")
    return None


def table_record(path: Path, tc: Toolchain | None) -> dict[str, str | None]:
    """What a profile-run document records of its table: content hash, creation time,
    verdict and reason, and when the toolchain last changed (for the report's checks)."""
    try:
        table = read_table(path)
    except UserError:
        return {"hash": None, "created": None}
    return {"hash": table.content_hash, "created": table.created, "verdict": table.verdict,
            "verdict_reason": table.verdict_reason,
            "toolchain_modified": toolchain_modified(tc) if tc else None}


# ----- what a report says about the tables its runs used -------------------------------

def run_table_notes(record: dict[str, Any] | None) -> list[str]:
    """Sentences about one profile run's table record (profile-run document's `table`):
    forced, not ok, or made before the toolchain last changed."""
    if not record:
        return []
    notes = []
    verdict = record.get("verdict")
    if record.get("forced"):
        notes.append(f"the transfer-time table was forced ({record.get('path')}): its "
                     "machine, MPI or verdict did not fit")
    if verdict in ("noisy", "suspect", UNVERIFIED):
        notes.append(f"the transfer-time table was {verdict} "
                     f"({record.get('verdict_reason') or 'no reason recorded'})")
    if older_than(record.get("created"), record.get("toolchain_modified")):
        notes.append(f"the transfer-time table ({record.get('created')}) is older than the "
                     f"toolchain's last change ({record.get('toolchain_modified')}): it may "
                     "no longer describe this MPI")
    return notes


def different_tables(records: list[tuple[str, dict[str, Any] | None]]) -> str | None:
    """One sentence when runs being compared used different tables (by content hash),
    None when they used the same one or it is not known."""
    hashes: dict[str, list[str]] = {}
    for label, record in records:
        digest = (record or {}).get("hash")
        if digest:
            hashes.setdefault(digest, []).append(label)
    if len(hashes) < 2:
        return None
    groups = "; ".join(f"{', '.join(labels)}: table {digest}" for digest, labels in hashes.items())
    return ("the runs compared used different transfer-time tables, so their transfer times "
            f"and bounds rest on different measurements ({groups})")
