"""The one exception type that reaches the user as a one-line message.

Anything the user can fix (bad input, missing tool, failed run) raises UserError; the
CLI prints `mpi-overlap: error: <message>` and exits with `exit_code`, never a traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """An error the user can act on; `str(err)` is the whole message (one line)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message.strip().replace("\n", " "))
        self.exit_code = exit_code
