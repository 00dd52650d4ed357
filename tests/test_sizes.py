"""Size-list grammar: what users may type for --sizes, and the errors they get."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpi_overlap.core.errors import UserError
from mpi_overlap.core.sizes import format_size, parse_sizes
from mpi_overlap.platform.build import ensure_built
from mpi_overlap.platform.toolchains import get_toolchain


def test_lists_ranges_and_suffixes() -> None:
    assert parse_sizes("0,64,1k,4M") == [0, 64, 1024, 4 << 20]
    assert parse_sizes("0:16") == [0, 1, 2, 4, 8, 16]
    assert parse_sizes("3:20") == [4, 8, 16]
    assert parse_sizes("1K,1k,1024") == [1024]
    assert parse_sizes("0:4M")[-1] == 4 << 20 and len(parse_sizes("0:4M")) == 24


BAD = ["", " ", "-1", "abc", "1x", "4M:1k", "1,,2", "1.5k", "2T", "3:3"]
GOOD = ["0", "0:4M", "3:20", "0,64,1k,4M", "1K,1k,1024", "0:0", "1g"]


@pytest.mark.parametrize("bad", BAD)
def test_bad_lists_are_refused_with_one_line(bad: str) -> None:
    with pytest.raises(UserError) as info:
        parse_sizes(bad)
    assert "\n" not in str(info.value)


def test_negative_sizes_say_so() -> None:
    with pytest.raises(UserError, match="negative"):
        parse_sizes("64,-8")


@given(st.lists(st.integers(min_value=0, max_value=1 << 30), min_size=1, max_size=10))
def test_plain_lists_round_trip(values: list[int]) -> None:
    assert parse_sizes(",".join(map(str, values))) == sorted(set(values))


def test_format_size() -> None:
    assert [format_size(n) for n in (0, 100, 1024, 4 << 20, 1536)] == [
        "0 B",
        "100 B",
        "1 KiB",
        "4 MiB",
        "1536 B",
    ]


@pytest.mark.mpi
def test_native_parser_agrees() -> None:
    """The native harness (native/common/sizes.c) accepts and refuses the same lists.
    Run as a singleton (1 rank), it fails on the rank count only when the sizes parsed."""
    tc = get_toolchain(None)
    exe = ensure_built(tc) / "bench" / "mo_overhead"
    for text in BAD + GOOD:
        proc = subprocess.run(
            [str(exe), f"--sizes={text}"],
            capture_output=True,
            text=True,
            env=tc.environment(),
            timeout=60,
            check=False,
        )
        native_ok = "needs at least 2 MPI ranks" in proc.stderr
        try:
            parse_sizes(text)
            python_ok = True
        except UserError:
            python_ok = False
        assert native_ok == python_ok, (text, proc.stderr.strip())
