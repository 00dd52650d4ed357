"""The report kit, below the benchmarks and the profile: the parts every report is made of,
for the benchmarks' report modules (benchmarks/<name>/report.py), the profile's
(profile/report/) and commands/reporting.py, which puts one report together from run
directories. It looks no benchmark up: what it needs of them is handed in (the summary
card's items, card_item.py; the replication's extractors). The page and its blocks (html.py, with
templates/), tables declared once for terminal, HTML and CSV (run_table.py, csv_tables.py),
figures (svg_chart.py: charts as data written as SVG text; svg_plot.py: matplotlib's
plotting calls as such charts), the summary card
(summary_card.py), sections (sections.py), and the cross-run views of settings
(env_matrix.py) and repetitions (replication.py).
"""
