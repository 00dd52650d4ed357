"""The overlap formulas of the OSU and IMB benchmarks, shared by the analyses that report
them beside the profiler's bounds (the non-blocking collective and one-sided overlap
benchmarks). Sources: docs/benchmarks.md, their sections."""

from __future__ import annotations


def osu_pct(t_pure: float | None, nonoverlap: float | None) -> float | None:
    """OSU's overlap %: max(0, 100 − 100·(t_overall − (t_compute − t_test))/t_pure)."""
    if t_pure is None or nonoverlap is None or not t_pure > 0:
        return None
    return max(0.0, 100.0 - 100.0 * nonoverlap / t_pure)


def osu_raw(t_pure: float | None, nonoverlap: float | None) -> float | None:
    """The same without the max(0, ...): how far below 0 the loop fell."""
    if t_pure is None or nonoverlap is None or not t_pure > 0:
        return None
    return 100.0 - 100.0 * nonoverlap / t_pure


def imb_raw(t_pure: float | None, t_cpu: float | None, t_ovrl: float | None) -> float | None:
    """IMB-NBC's overlap % before its clipping to [0, 100] (above 100: the overlapped loop
    was faster than the longer of its parts alone; below 0: slower than both in turn)."""
    if t_pure is None or t_cpu is None or t_ovrl is None:
        return None
    denom = max(t_pure, t_cpu)
    if not denom > 0:
        return None
    return 100.0 * (t_pure + t_cpu - t_ovrl) / denom


def imb_pct(t_pure: float | None, t_cpu: float | None, t_ovrl: float | None) -> float | None:
    """IMB-NBC's overlap %: 100·max(0, min(1, (t_pure + t_CPU − t_ovrl)/max(t_pure, t_CPU)))."""
    raw = imb_raw(t_pure, t_cpu, t_ovrl)
    return None if raw is None else max(0.0, min(100.0, raw))


def mean_of(values: list[float | None]) -> float | None:
    """The mean of the values that are not None, None when there are none."""
    vs = [v for v in values if v is not None]
    return sum(vs) / len(vs) if vs else None
