"""result.json of a profile run in its line layout: ordinary JSON (schema
profile-run-v1), written with every rank document on a line of its own,

    {
     "schema": "mpi-overlap/profile-run",
     ...
     "ranks": [
    {"schema":"mpi-overlap/profile-rank",...,"rank":0,...},
    {"schema":"mpi-overlap/profile-rank",...,"rank":1,...}
    ],
     "missing_ranks": [],
     ...
    }

so that a reader can take the rank documents one at a time (LazyRanks) instead of
parsing the whole file: the report of thousands of ranks then holds one document at a
time, not all of them (issue 19; docs/profiler.md, "Many ranks"). Any JSON reader reads
the file as before; rundir.load_run reads large ones this way (LAZY_RESULT_BYTES).

It lies beside rundir.py, not in profile/: the run directory's reader needs it, and
everything, the profile included, reads run directories (no folder circle).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from ..core.errors import UserError
from ..core.file_output import json_text, open_atomic
from ..core.json_input import max_bytes, parse_json

# result.json files from this size on are read with their rank documents left on disk
# (about 800 ranks of mo_halo); smaller ones are read whole, as every other document.
LAZY_RESULT_BYTES = 16 << 20
# The top-level key of the rank list as json_text writes it (indent 1: one space).
_MARKER = '\n "ranks": []'
_OPEN = b' "ranks": [\n'
_CLOSE = b"]"


def write_profile_result(path: Path, result: dict[str, Any],
                         ranks: Iterable[dict[str, Any]] | None = None) -> None:
    """result.json with its rank documents (result["ranks"], or `ranks` given one at a
    time) one per line, atomically."""
    docs = result.get("ranks") or [] if ranks is None else ranks
    text = json_text(dict(result, ranks=[]))
    before, marker, after = text.partition(_MARKER)
    if not marker:
        raise ValueError("a profile result needs a top-level ranks list")
    with open_atomic(path) as fh:
        fh.write(before + "\n" + _OPEN.decode())
        pending: str | None = None
        for doc in docs:
            if pending is not None:
                fh.write(pending + ",\n")
            pending = json.dumps(doc, separators=(",", ":"))
        if pending is not None:
            fh.write(pending + "\n")
        fh.write(_CLOSE.decode() + after)


class RankSequence(Sequence[dict[str, Any]]):
    """result["ranks"] read from disk whenever it is gone through, never held: what
    LazyRanks and collect's CollectedRanks share. `check` (schema.result_errors sets it)
    checks each document as it is read; a list compares equal to the same documents."""

    check: Callable[[dict[str, Any]], list[str]] | None = None

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        return list(self)[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


class LazyRanks(RankSequence):
    """The rank documents of a result.json in the line layout, read from the file each
    time they are gone through (in file order: rank order as collect writes them). With
    `check` set (strict loading: documents from elsewhere), every document read is checked
    and one that fails ends the reading with a UserError naming its line."""

    def __init__(self, path: Path, spans: list[tuple[int, int, int]]) -> None:
        self.path = path
        self._spans = spans  # (byte offset, length without ",\n", line number) per document

    def __len__(self) -> int:
        return len(self._spans)

    def _parse(self, data: bytes, line: int) -> dict[str, Any]:
        doc = parse_json(data, f"{self.path}, line {line}")
        if self.check is not None:
            errors = self.check(doc)
            if errors:
                raise UserError(f"{self.path}, line {line}: a rank document that does not "
                                f"match its schema ({len(errors)} problems, first: "
                                f"{errors[0]})")
        return doc

    def __iter__(self) -> Iterator[dict[str, Any]]:
        with self.path.open("rb") as f:
            for offset, length, line in self._spans:
                f.seek(offset)
                yield self._parse(f.read(length), line)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        offset, length, line = self._spans[i]  # one document: read that line only
        with self.path.open("rb") as f:
            f.seek(offset)
            return self._parse(f.read(length), line)

    def __repr__(self) -> str:
        return f"LazyRanks({self.path}, {len(self)} documents)"


def read_profile_result(path: Path) -> dict[str, Any] | None:
    """The profile result at `path` with its ranks as LazyRanks; None when the file is
    not in the line layout (read it whole). Each line is held to json_input's size limit,
    not the whole file."""
    limit = max_bytes()
    head: list[bytes] = []
    spans: list[tuple[int, int, int]] = []
    try:
        f = path.open("rb")
    except OSError as err:
        raise UserError(f"{path}: cannot read it ({err.strerror or err})") from None
    with f:
        offset, number = 0, 0
        while True:  # the top-level fields before the rank list
            line = f.readline(limit + 1)
            number += 1
            if not line or len(line) > limit:
                return None
            offset += len(line)
            if line == _OPEN:
                break
            head.append(line)
        while True:
            line = f.readline(limit + 1)
            number += 1
            if not line.endswith(b"\n"):  # cut, or a line beyond the limit: read it whole
                return None
            if line.startswith(_CLOSE):
                tail = line + f.read(limit)
                break
            body = line[:-2] if line.endswith(b",\n") else line[:-1]
            spans.append((offset, len(body), number))
            offset += len(line)
    result = parse_json(b"".join(head) + b' "ranks": [' + tail, path)
    if result.get("schema") != "mpi-overlap/profile-run" or result.get("ranks") != []:
        return None
    result["ranks"] = LazyRanks(path, spans)
    return result
