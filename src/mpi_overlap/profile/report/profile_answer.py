"""The answer a profile report opens with: per run, the headline with its caveats, the
checks' verdict on the bounds, the advice with what each item can gain, and the call
sites to act on, before any figure or table (in the terminal and on the page).

Only what the analysis already says, chosen and ordered here: the sentences are the lead
of its findings (profile/analysis/profile.py, lead_findings) with the checks' one-line verdict,
and the table is the top of the call-site pairs that the overlap tables list whole. A
run the guard withheld (oversubscribed) answers with its notice alone.
"""

from __future__ import annotations

from ...report.html import Answer
from ...run.rundir import Run
from ..analysis.advice import advice_findings
from ..analysis.profile import lead_findings
from ..analysis.profile_checks import check_line
from .profile_table import analysis_of, html_table, is_profile, pair_grid

# Call-site pairs in the answer: enough for the advice's sites and their neighbours,
# few enough that the table stays within the first screen with the sentences above it.
ANSWER_SITES = 5


def answer(run: Run) -> Answer | None:
    """The run's answer, None for a run that is not a profile or has no analysis."""
    if not is_profile(run):
        return None
    a = analysis_of(run)
    if a is None:
        return None
    sentences = lead_findings(a)
    checks = None if a.get("withheld") else check_line(a.get("checks"))
    if checks and checks not in sentences:
        # where the analysis puts a flagging check's finding: before the advice it qualifies
        advice = set(advice_findings(a.get("advice") or []))
        at = next((i for i, s in enumerate(sentences) if s in advice), len(sentences))
        sentences.insert(at, checks)
    tables = []
    if not a.get("withheld") and (a.get("rankings") or {}).get("pairs"):
        # on the page the whole list is further down, not in another file
        tables.append(html_table(pair_grid(a, run.label, ANSWER_SITES,
                                           rest="the overlap tables below list all")))
    return Answer(run.label, sentences, tables)
