"""Terminal-safe output: strings from outside (region and function names from profiles,
toolchain names, paths, messages of a run) printed so that they cannot drive the terminal.

A region name is whatever bytes the profiled program passed; printed raw, an ESC or OSC
sequence in it would recolour, retitle or rewrite the user's terminal (and an OSC 8 link
could disguise a URL), and a newline would split a table row or a line that scripts
parse. So:

* `safe(text)` writes every C0 and C1 control character, DEL, the Unicode bidirectional
  overrides (which reorder what the eye reads) and lone surrogates (undecodable bytes) as
  visible escapes: `\\n`, `\\t`, `\\r`, `\\x1b`, `\\u202e`; everything else is unchanged.
  Use it on each outside string where it enters a table cell or a printed line, so the
  table is laid out with the escaped text.
* `Table`: the rich Table every terminal table is made with; its title, headers and cells
  go through `safe` (a str cell becomes plain Text: never parsed as rich markup, so a
  name like "[/x]" neither crashes the table nor turns into a style or a hyperlink).
* `SafeConsole`: the rich Console the CLI prints with. Markup is off unless a call asks
  for it, for the same reason; and as a safety net for a string that missed `safe`, it
  escapes the same characters (except the newlines rich lays out) in all the text it
  writes, after layout. rich's own styles and cursor movements are not text and are left
  alone.

The HTML report escapes every string with Jinja's autoescape (report/html.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import rich.table
from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.text import Text

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
_UNSAFE_KEEP_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e"
                                  "\u2066-\u2069\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: object) -> str:
    """`text` as a string with every character that could control a terminal escaped."""
    return _UNSAFE.sub(_escape, str(text))


def safe_lines(text: object) -> str:
    """Like `safe`, but newlines kept (text meant to span lines, e.g. a program's log)."""
    return _UNSAFE_KEEP_NEWLINE.sub(_escape, str(text))


def safe_text(value: Any) -> Any:
    """A table cell, title or header made safe: a str becomes Text(safe(str)) (no markup),
    a Text whose characters need escaping is rebuilt from its escaped text in its style;
    anything else (None, another renderable) is returned as it is."""
    if isinstance(value, str):
        return Text(safe(value))
    if isinstance(value, Text) and _UNSAFE.search(value.plain):
        return Text(safe(value.plain), style=value.style, justify=value.justify)
    return value


class Table(rich.table.Table):
    """rich's Table with every title, header and cell passed through `safe_text`."""

    def __init__(self, *headers: Any, **kwargs: Any) -> None:
        for key in ("title", "caption"):
            if key in kwargs:
                kwargs[key] = safe_text(kwargs[key])
        super().__init__(*headers, **kwargs)

    def add_column(self, header: RenderableType = "", *args: Any, **kwargs: Any) -> None:
        super().add_column(safe_text(header), *args, **kwargs)

    def add_row(self, *renderables: RenderableType | None, **kwargs: Any) -> None:
        super().add_row(*(safe_text(r) for r in renderables), **kwargs)


class SafeConsole(Console):
    """A rich Console with markup off by default that escapes control characters in the
    text it writes (`safe_lines`), whatever renderable the text came in."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        super().__init__(*args, **kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control or not _UNSAFE_KEEP_NEWLINE.search(seg.text)
            else Segment(safe_lines(seg.text), seg.style, seg.control)
            for seg in buffer
        )
