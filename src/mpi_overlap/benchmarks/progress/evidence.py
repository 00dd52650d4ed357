"""What a profile takes from this toolchain's newest progress run (spec.Evidence's `read`;
profile/run/toolchain_evidence.py finds the run, this package's advice.py quotes it):
whether the MPI moved a message's data while no MPI call was made, per ordering."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def evidence(toolchain: str, run_dir: Path | None,
             analysis: dict[str, Any] | None) -> dict[str, Any]:
    """{toolchain, run, finding, receiver_first, sender_first} of the run (the newest
    complete one of the profile's toolchain); run None when there is none."""
    if run_dir is None or analysis is None:
        return {"toolchain": toolchain, "run": None, "finding": None, "receiver_first": None,
                "sender_first": None}
    ranges = analysis.get("verdict_ranges") or {}
    return {"toolchain": toolchain, "run": str(run_dir), "finding": str(analysis["finding"]),
            "receiver_first": ranges.get("receiver-first"),
            "sender_first": ranges.get("sender-first")}
