"""Headline figures (analysis/figures.py): what the settings matrix and the summary card
compare; a value that is not a finite number must become null, never NaN in JSON."""

from __future__ import annotations

import math

import pytest

from mpi_overlap.analysis.figures import figure
from mpi_overlap.core.documents import errors_against


def test_figure_is_schema_valid_and_nulls_non_finite() -> None:
    good = figure("lat_us", "latency", 1.5, "µs", "cost")
    assert good == {"name": "lat_us", "label": "latency", "value": 1.5, "unit": "µs",
                    "kind": "cost"}
    for bad in (math.nan, math.inf, None):
        assert figure("x", "x", bad, "", "info")["value"] is None
    assert errors_against([good, figure("x", "x", None, "", "info")], "figures-v1") == []
    assert errors_against([{**good, "kind": "other"}], "figures-v1") != []


def test_unknown_kind_is_a_programming_error() -> None:
    with pytest.raises(AssertionError):
        figure("x", "x", 1.0, "", "gain")
