"""The profile's report parts, plugged into report/ (the shared page, terminal and JSON):
its answer, table, grid, checks, waits, plots and replay predictions (profile_*.py), and
the Hatchet export (hatchet_export.py)."""
