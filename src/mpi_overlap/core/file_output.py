"""The one writer of the files mpi-overlap leaves behind: run.json, result.json,
analysis.json, report.html, report.json, transfer-time tables, the toolchain registry,
the timeline traces `mpi-overlap trace` converts.

* Atomic: the text goes to a temporary file beside the target, which is renamed over it
  only once complete, so a reader (a report, a second command) never sees half a file,
  and a full disk never leaves a report cut mid-way.
* Permissions as the user's umask says (0666 & ~umask), like any file they create:
  tempfile.mkstemp would leave 0600, and run directories shared by a group would become
  unreadable to the others.
* Every OSError (disk full, quota, read-only file system, permissions) becomes a one-line
  `WriteError` (a UserError, exit status 74: sysexits' EX_IOERR) that names the file and
  the reason; the temporary file is removed.
* `rewrite_in_place`: the fallback for the one file that must say how a run ended even on
  a full disk (run.json, see rundir.write_run_json): overwriting bytes a file already
  holds needs no new blocks, whereas the temporary of an atomic write does.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .errors import UserError

EXIT_IO_ERROR = 74
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)

_umask_lock = threading.Lock()


class WriteError(UserError):
    """A file could not be written; `errno` says why (DISK_FULL: no space left)."""

    def __init__(self, path: Path, err: OSError) -> None:
        self.path = Path(path)
        self.errno = err.errno
        super().__init__(f"cannot write {path}: {err.strerror or err}", EXIT_IO_ERROR)

    @property
    def disk_full(self) -> bool:
        return self.errno in DISK_FULL


def file_mode() -> int:
    """0666 less the process umask: the mode open(2) would give a new file."""
    with _umask_lock:  # os.umask can only be read by setting it
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def open_atomic(path: Path, mode: str = "w") -> Iterator[IO[Any]]:
    """A file object whose content replaces `path` when the block ends without an error
    (mode "w" text in UTF-8, or "wb"); on an error the target is untouched."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise WriteError(path, err) from None
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as fh:
            yield fh
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise WriteError(path, err) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically; WriteError when it cannot be."""
    with open_atomic(path) as fh:
        fh.write(text)


def json_text(data: Any) -> str:
    """The text of a JSON document as every file of ours holds it (indent 1, newline)."""
    return json.dumps(data, indent=1) + "\n"


def write_json(path: Path, data: Any) -> None:
    write_text(path, json_text(data))


def rewrite_in_place(path: Path, text: str) -> bool:
    """Overwrite the existing file `path` with `text` when it fits in the bytes the file
    already has (no new blocks: this works on a full disk), padding with spaces; True when
    done. Not atomic: the fallback when an atomic write failed for lack of space."""
    data = text.encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        if len(data) > size:
            return False
        view = memoryview(data + b" " * (size - len(data)))
        while view:
            view = view[os.write(fd, view):]
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
