"""The profile's analysis: the cross-rank merge into analysis.json (profile.py), its
values and checks (profile_values.py, profile_checks.py), the headline and advice
(headline.py, advice.py), both ends of a message (twosided.py, twosided_bounds.py),
waits, call sites, trace clocks, CPU and library time, the table's sensitivity, the
profiled runs some benchmarks read (profiled_runs.py), and the evidence and advice rules
the benchmarks above declare and hand in (evidence.py)."""
