"""How many examples a property test draws: the number its test names under `make test`;
a quarter of it (at least 10) under `make test-quick`, which sets MO_PROPERTY_SHARE=0.25
for the edit-test loop (issue 37 item 7). Drawing the generated event streams is most of
the property tests' time (test_bounds_property: 108 s of 190 in hypothesis' draws under
cProfile), so the quick loop draws fewer of the same streams; `make test` draws all."""

from __future__ import annotations

import os

SHARE = float(os.environ.get("MO_PROPERTY_SHARE", "1"))


def examples(n: int) -> int:
    """A test's max_examples: n, or SHARE of it in the quick loop."""
    return n if SHARE >= 1 else max(10, round(n * SHARE))
