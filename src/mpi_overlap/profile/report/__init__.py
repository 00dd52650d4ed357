"""The profile's report parts, plugged into report/ (the shared page, terminal and JSON):
its answer, table, grid, checks, waits, plots and replay predictions (profile_*.py), and
the Hatchet export (hatchet_export.py)."""

# report/ imports these modules while it loads and they import report/ back: load it first,
# as when they lived in report/ (the next commit takes report/'s import of them away).
from ... import report as _report  # noqa: F401
