"""Message-size lists as users type them: `0,64,1k,4M` and ranges `0:4M`.

The grammar is the native harness's (native/common/sizes.c); the CLI parses it too so a
bad list is refused before anything is built or launched. tests/test_sizes.py checks that
both parsers agree.
"""

from __future__ import annotations

import re

from .errors import UserError

_ITEM = re.compile(r"^(\d+)([kKmMgG]?)$")
_MULT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
MAX_SIZE = 1 << 40


def parse_size(text: str) -> int:
    token = text.strip()
    m = _ITEM.match(token)
    if not m:
        if token.startswith("-"):
            raise UserError(f"invalid message size '{text}': sizes cannot be negative")
        raise UserError(f"invalid message size '{text}': expected bytes like 4096, 64k or 4M")
    digits = m.group(1).lstrip("0") or "0"
    if len(digits) > 13:  # above 1 TiB whatever the suffix (and beyond int()'s digit limit)
        raise UserError(f"invalid message size '{text[:40]}': larger than 1 TiB")
    value = int(digits) * _MULT[m.group(2).lower()]
    if value > MAX_SIZE:
        raise UserError(f"invalid message size '{text}': larger than 1 TiB")
    return value


def parse_sizes(text: str) -> list[int]:
    """Sorted unique sizes; `A:B` is 0 (when A is 0) then powers of two from max(A,1) to B."""
    if not text or not text.strip():
        raise UserError("empty size list")
    sizes: set[int] = set()
    for item in text.split(","):
        if not item.strip():
            raise UserError(f"invalid size list '{text}': empty item")
        if ":" in item:
            lo_text, _, hi_text = item.partition(":")
            lo, hi = parse_size(lo_text), parse_size(hi_text)
            if hi < lo:
                raise UserError(f"invalid size range '{item}': end is below start")
            if lo == 0:
                sizes.add(0)
            p = 1
            while p < max(lo, 1):
                p <<= 1
            if p > hi and lo != 0:
                raise UserError(f"invalid size range '{item}': contains no power of two")
            while p <= hi:
                sizes.add(p)
                p <<= 1
        else:
            sizes.add(parse_size(item))
    return sorted(sizes)


def format_size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"
