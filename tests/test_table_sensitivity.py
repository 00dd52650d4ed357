"""The headline within the table's 95 % intervals (profile/analysis/table_sensitivity.py): the
range it reports holds every headline the table's times within their intervals could
give (checked on random case-2 transfers, recomputed at scaled transfer times), and the
caveat is said only where it moves the headline by more than 5 points."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mpi_overlap.calibration.xfer_table import PointQuality, XferTable
from mpi_overlap.profile.analysis.table_sensitivity import caveat, within_intervals
from property_examples import examples


def _table(rel: float, intervals: bool = True) -> XferTable:
    """Points at 0 B, 4 KiB and 1 MiB, each with a 95 % interval ±rel of its value."""
    pts = [(0, 2e-6), (4096, 4e-6), (1 << 20, 1e-4)]
    quality = {("intra", b): PointQuality("ok", v, 0.0, 20, 20,
                                          v * (1 - rel) if intervals else None,
                                          v * (1 + rel) if intervals else None)
               for b, v in pts}
    return XferTable(machine_fp="0" * 16, machine_key="m", toolchain_fp="1" * 16,
                     toolchain_key="t", toolchain_name="mpich", ranks=2, nodes=1,
                     created="x", points={"intra": pts}, quality=quality)


def _bins(transfers: list[tuple[int, float, float, float]]) -> list[dict]:
    """Rankings-like bins (one per transfer size) of (bytes, x, comp, lib) transfers,
    with their case-2 bounds."""
    out: dict[int, dict] = {}
    for nbytes, x, comp, lib in transfers:
        b = out.setdefault(nbytes, {"lo": nbytes, "hi": nbytes + 1, "xfer_s": 0.0,
                                    "min_s": 0.0, "max_s": 0.0})
        b["xfer_s"] += x
        b["max_s"] += min(comp, x)
        b["min_s"] += min(max(0.0, x - lib), min(comp, x))
    return list(out.values())


def _job(bins: list[dict]) -> dict:
    x = sum(b["xfer_s"] for b in bins)
    return {"min_pct": 100 * sum(b["min_s"] for b in bins) / x,
            "max_pct": 100 * sum(b["max_s"] for b in bins) / x}


transfers = st.lists(st.tuples(st.sampled_from([0, 4096, 1 << 20]),
                               st.floats(1e-7, 1e-3), st.floats(0, 2e-3), st.floats(0, 2e-3)),
                     min_size=1, max_size=30)


@given(transfers, st.floats(0, 0.5), st.floats(-1, 1))
@settings(max_examples=examples(300), deadline=None)
def test_the_range_holds_every_headline_within_the_intervals(trs, rel, where) -> None:
    """Scale every transfer time by one factor within ±rel (the table at one place in its
    intervals) and recompute: the headline stays inside the reported range."""
    rng = within_intervals(_bins(trs), _table(rel))
    assert rng is not None
    k = 1 + where * rel
    job = _job(_bins([(b, x * k, comp, lib) for b, x, comp, lib in trs]))
    assert rng["min_pct"] <= job["min_pct"] + 1e-9
    assert job["max_pct"] <= rng["max_pct"] + 1e-9


def test_a_precise_table_says_nothing_and_a_vague_one_says_how_far() -> None:
    bins = _bins([(4096, 4e-6, 3e-6, 1e-6)] * 10 + [(0, 2e-6, 0.0, 5e-6)] * 10)
    job = _job(bins)
    assert caveat(job, within_intervals(bins, _table(0.02))) is None
    said = caveat(job, within_intervals(bins, _table(0.4)))
    assert said is not None and "instead of" in said and "95 % intervals" in said


def test_a_table_without_intervals_gives_no_range() -> None:
    bins = _bins([(4096, 4e-6, 3e-6, 1e-6)])
    assert within_intervals(bins, _table(0.1, intervals=False)) is None
    assert caveat(_job(bins), None) is None
