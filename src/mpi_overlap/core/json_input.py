"""The one reader of every JSON document mpi-overlap is handed: run.json, result.json,
analysis.json, profile.rank-N.json, the toolchain registry, a program's JSON output.

These files come from disk, from other machines (run directories copied from a cluster),
from the native library of another version, or from a user's editor, so each way one can
be wrong ends as a one-line UserError that names the file, never as a traceback:

* size: refused from its size before it is read (`max_bytes()`, default 256 MiB, or
  MPI_OVERLAP_MAX_JSON_MIB), so that a runaway file costs no memory; not a regular file
  (a FIFO, a device) is refused without blocking;
* encoding: strict UTF-8 (RFC 8259), the offending byte and its offset named;
* syntax, and numbers Python refuses (an integer of more than 4300 digits);
* nesting deeper than MAX_DEPTH: every consumer (schema validation, deepcopy, the
  report) walks documents recursively, so a 200 000-deep array would end in a
  RecursionError far from here; the parser's own recursion limit is caught too;
* a top level that is not an object;
* a `schema_version` newer than this mpi-overlap reads (`schema.supported_version`):
  its fields may mean something else, so nothing of it is trusted.

Whether the known fields have the right types is the schemas' business (schema.py);
rundir.load_run checks them there.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from .errors import UserError
from .formatting import fmt_mib

DEFAULT_MAX_MIB = 256
# Our documents nest a dozen levels at most (a profile: ranks → regions → functions →
# bins → fields); 64 leaves room for growth and stays far below Python's recursion limit.
MAX_DEPTH = 64


def max_bytes() -> int:
    """The size cap: MPI_OVERLAP_MAX_JSON_MIB (a positive number of MiB) or 256 MiB."""
    text = os.environ.get("MPI_OVERLAP_MAX_JSON_MIB", "").strip()
    if text:
        try:
            mib = float(text)
        except ValueError:
            mib = 0.0
        if not (0 < mib < 1 << 30):
            raise UserError(f"MPI_OVERLAP_MAX_JSON_MIB must be a positive number of MiB "
                            f"(got '{text}')")
        return int(mib * (1 << 20))
    return DEFAULT_MAX_MIB << 20


def read_bytes(path: Path, *, limit: int | None = None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (default `max_bytes()`)."""
    limit = max_bytes() if limit is None else limit
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, not a JSON file") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read it ({err.strerror or err})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise UserError(f"{path}: is a directory, not a JSON file")
        if not stat.S_ISREG(st.st_mode):
            raise UserError(f"{path}: not a regular file")
        if st.st_size > limit:
            raise UserError(f"{path}: {fmt_mib(st.st_size, 0, below='bytes')}, larger than the "
                            f"{fmt_mib(limit, 0, below='bytes')} mpi-overlap reads (set "
                            "MPI_OVERLAP_MAX_JSON_MIB to allow more)")
        chunks, total = [], 0
        while True:  # the file may grow while we read it: never read past the cap
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UserError(f"{path}: larger than the {fmt_mib(limit, 0, below='bytes')} "
                                "mpi-overlap reads (set MPI_OVERLAP_MAX_JSON_MIB to allow more)")
    except OSError as err:
        raise UserError(f"{path}: cannot read it ({err.strerror or err})") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


# Every byte but quotes and brackets, deleted to find the nesting (_depth_exceeds).
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_ONE_BRACKET = bytes.maketrans(b"{}", b"[]")  # the same nesting with one kind of bracket


def _depth_exceeds(text: bytes, limit: int) -> bool:
    """True when the valid JSON `text` nests containers more than `limit` deep.

    Read from the text, not the parsed objects: a walk over the objects visits every
    value (3.3 s for a profile of 8 192 ranks, against 0.6 s here). C-speed byte
    operations keep the brackets outside strings, and peel the nesting a level at a time.
    In valid JSON a quote inside a string is escaped, so once the escaped backslashes and
    then the escaped quotes are gone, every other quote opens or closes a string. Of the
    quotes and brackets alone, two adjacent quotes enclose no bracket: they go first,
    leaving the few strings that hold brackets. With one kind of bracket left, each pass
    that deletes every "[]" deletes the innermost level (the brackets balance in valid
    JSON): text still there after `limit` passes nests deeper. (It was numpy's cumulative
    sum: numpy's import, 0.1–0.3 s, was most of what reading a profile cost, issue 38.)"""
    if text.count(b"[") + text.count(b"{") <= limit:
        return False
    if b"\\\\" in text or b'\\"' in text:
        text = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = text.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    outside = b"".join(structure.split(b'"')[::2]) if b'"' in structure else structure
    nesting = outside.translate(_ONE_BRACKET)
    for _ in range(limit):
        if not nesting:
            return False
        nesting = nesting.replace(b"[]", b"")
    return bool(nesting)


def parse_json(data: bytes | str, source: str | Path, *, want_object: bool = True) -> Any:
    """The document in `data` (bytes: strict UTF-8); `source` names it in errors."""
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    return _parse([raw], source, want_object=want_object)


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in the file at `path`, checked as the module docstring says."""
    return _parse([read_bytes(Path(path))], path)


def _parse(holder: list[bytes], source: str | Path, *, want_object: bool = True) -> Any:
    """parse_json of holder[0], which it empties once decoded: the bytes of a large
    profile then do not stay beside its text and its objects (227 MB of 1.2 GB at 8 192
    ranks). The nesting is read from the bytes first and judged once the text parsed."""
    data = holder.pop()
    too_deep = _depth_exceeds(data, MAX_DEPTH)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UserError(f"{source}: not UTF-8 text (byte 0x{data[err.start]:02x} at offset "
                        f"{err.start}); JSON files must be UTF-8") from None
    del data
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise UserError(f"{source}: not valid JSON ({err.msg}, line {err.lineno} column "
                        f"{err.colno})") from None
    except RecursionError:
        raise UserError(f"{source}: nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as err:  # e.g. an integer beyond Python's digit limit
        raise UserError(f"{source}: not valid JSON ({str(err).splitlines()[0][:120]})") from None
    if isinstance(doc, (dict, list)) and too_deep:
        raise UserError(f"{source}: nested more than {MAX_DEPTH} levels deep")
    if want_object and not isinstance(doc, dict):
        raise UserError(f"{source}: expected a JSON object at the top, found "
                        f"{_kind(doc)}")
    if isinstance(doc, dict):
        _check_version(doc, source)
    return doc


def _kind(doc: Any) -> str:
    if isinstance(doc, list):
        return "an array"
    if isinstance(doc, str):
        return "a string"
    if doc is None:
        return "null"
    return "a boolean" if isinstance(doc, bool) else "a number"


def _check_version(doc: dict[str, Any], source: str | Path) -> None:
    from .schema import supported_version

    version = doc.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        return  # a wrong type is the schema check's to report
    name = doc.get("schema")
    supported = supported_version(name if isinstance(name, str) else None)
    if version > supported:
        what = f"'{name}' " if isinstance(name, str) else ""
        raise UserError(f"{source}: {what}schema_version {version} is newer than this "
                        f"mpi-overlap reads ({supported}); read it with a newer mpi-overlap")
