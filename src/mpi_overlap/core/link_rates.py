"""Link rates as `tc` writes them (1gbit, 200mbit, 10mbps): one grammar for the emulated
cluster's links and for the links `predict` puts between nodes."""

from __future__ import annotations

import re

from .errors import UserError

_RATE = re.compile(r"^[1-9][0-9]*(\.[0-9]+)?(k|m|g)?(bit|bps)$", re.I)


def rate_bits_per_s(text: str, flag: str = "--link") -> float:
    """Bits per second (tc's units: bit = bits, bps = bytes per second; k, m, g are powers
    of 1000); anything else is one line naming `flag`."""
    m = _RATE.match(text)
    if m is None:
        raise UserError(f"{flag} '{text}': give a rate as tc reads it, e.g. 1gbit, "
                        "100mbit or 10gbit")
    number = float(text[:m.start(2) if m.group(2) else m.start(3)])
    scale = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}[(m.group(2) or "").lower()]
    return number * scale * (8.0 if m.group(3).lower() == "bps" else 1.0)
