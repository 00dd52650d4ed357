"""The profile's report parts, plugged into report/ (the shared page, terminal and JSON):
its answer, table, grid, checks, waits and plots (profile_*.py; the replay predictions'
section is predict/report_section.py), and the Hatchet export (hatchet_export.py)."""
