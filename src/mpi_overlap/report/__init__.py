"""The report kit: the parts every report is made of, for the benchmarks' report modules
(benchmarks/<name>/report.py), the profile's (profile/report/) and reporting.py, which puts
one report together from run directories. The page and its blocks (html.py, with
templates/), tables declared once for terminal, HTML and CSV (run_table.py, csv_tables.py),
figures (svg.py over matplotlib, svg_chart.py for the profile's), the summary card
(summary_card.py), sections (sections.py), and the cross-run views of settings
(env_matrix.py) and repetitions (replication.py).
"""
