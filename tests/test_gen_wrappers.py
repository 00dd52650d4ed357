"""Unit tests of native/profiler/gen_wrappers.py: the preprocessed-header parser, the
hand-written wrapper scan, exclusions, family classification and the generated files, plus
one run against the MPICH mpi.h of this environment."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "native" / "profiler" / "gen_wrappers.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_wrappers", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_wrappers"] = module  # dataclasses look their module up
    keep, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in native/
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = keep
    return module


gw = _load()

# What a preprocessed header looks like: line markers, typedefs, structs, attributes
# before and after the declarator (Open MPI, MPICH with clang), deprecation messages
# with semicolons, PMPI_ twins, QMPI-like noise, an inline definition.
SNIPPET = r"""
# 1 "/opt/mpi/include/mpi.h" 1
typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Request;
typedef int MPI_Group;
typedef long MPI_Aint;
typedef long long MPI_Count;
typedef struct MPI_Status { int MPI_SOURCE; int (*cb)(int); } MPI_Status;
typedef int (MPI_Comm_copy_attr_function)(MPI_Comm, int, void *, void *, void *, int *);
typedef int (MPI_Comm_delete_attr_function)(MPI_Comm, int, void *, void *);
enum { MPI_IDENT = 0, MPI_CONGRUENT = (1 << 1) };
extern int MPI_Comm_world_value;
__attribute__((visibility("default"))) int MPI_Send(const void *buf, int count,
    MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
    __attribute__((pointer_with_type_tag(MPI,1,3)));
__attribute__((visibility("default"))) int PMPI_Send(const void *buf, int count,
    MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request *request) ;
int PMPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request *request) ;
int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
    __attribute__((__deprecated__("MPI_Attr_get was deprecated; use MPI_Comm_get_attr()")));
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
    __attribute__((__deprecated__("PMPI_Attr_get was deprecated; use PMPI_Comm_get_attr()")));
# 40 "/opt/mpi/include/mpi_proto.h" 1
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *, int *comm_keyval,
                           void *extra_state);
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *, MPI_Comm_delete_attr_function *,
                            int *, void *);
int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int MPI_Unnamed(MPI_Comm, const int [], unsigned int, int (*)(int), char ***);
int PMPI_Unnamed(MPI_Comm, const int [], unsigned int, int (*)(int), char ***);
void MPI_Void_fn(int x);
void PMPI_Void_fn(int x);
int MPI_Pcontrol(const int level, ...);
int PMPI_Pcontrol(const int level, ...);
double MPI_Wtime(void);
double PMPI_Wtime(void);
int MPI_Comm_c2f(MPI_Comm comm);
MPI_Comm MPI_Comm_fromint(int comm);
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp);
int MPI_T_init_thread(int required, int *provided);
int PMPI_T_init_thread(int required, int *provided);
int MPI_No_profiling(void);
int MPI_Macro_shadowed(int x);
int PMPI_Macro_shadowed(int x);
static inline int MPI_Inline_fn(int x) { return x + 1; }
int MPIX_Extension(int x);
int PMPIX_Extension(int x);
int QMPI_Send(int context, const void *buf);
int MPI_Renamed(int x) __asm__("mpi_renamed_impl");
int PMPI_Renamed(int x);
int MPI_Init(int *argc, char ***argv);
int PMPI_Init(int *argc, char ***argv);
"""

MACROS = "#define MPI_VERSION 4\n#define MPI_Macro_shadowed(x) PMPI_Macro_shadowed(x)\n"


class FakeStandard(gw.Standard):
    """Standard with a handful of procedures, so that unit tests do not depend on
    pympistandard's data."""

    def __init__(self) -> None:
        p = gw.StdParam
        send = [p("BUFFER", "IN"), p("POLYXFER_NUM_ELEM_NNI", "IN"), p("DATATYPE", "IN")]
        send += [p("RANK", "IN"), p("TAG", "IN"), p("COMMUNICATOR", "IN")]
        super().__init__(
            {
                "mpi_send": send,
                "mpi_isend_c": [*send, p("REQUEST", "OUT")],
                "mpi_init": [],
            },
            "fake",
        )


def _decl(text: str):
    decl = gw.parse_declaration(text)
    assert decl is not None, text
    return decl


# ----- parser -------------------------------------------------------------------------


def test_attributes_are_stripped_from_both_sides() -> None:
    header = gw.parse_header(SNIPPET)
    send = header.functions["MPI_Send"]
    assert send.prototype == (
        "int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, "
        "MPI_Comm comm)"
    )
    assert "__attribute__" not in header.functions["MPI_Attr_get"].prototype
    assert [p.name for p in send.params] == ["buf", "count", "datatype", "dest", "tag", "comm"]


def test_declarations_found_and_noise_ignored() -> None:
    header = gw.parse_header(SNIPPET)
    assert "MPI_Isend_c" in header.functions
    assert "PMPI_Isend_c" in header.profiling
    assert "PMPI_Send" not in header.functions
    for noise in ("MPIX_Extension", "QMPI_Send", "MPI_Comm_copy_attr_function", "MPI_Status"):
        assert noise not in header.functions
    assert header.files == ["/opt/mpi/include/mpi.h", "/opt/mpi/include/mpi_proto.h"]


def test_unnamed_parameters_get_names() -> None:
    decl = gw.parse_header(SNIPPET).functions["MPI_Unnamed"]
    assert decl.prototype == (
        "int MPI_Unnamed(MPI_Comm mop_arg0, const int mop_arg1[], unsigned int mop_arg2, "
        "int (*mop_arg3)(int), char ***mop_arg4)"
    )
    assert [p.named_by_header for p in decl.params] == [False] * 5


def test_function_pointer_typedef_parameters() -> None:
    decl = gw.parse_header(SNIPPET).functions["MPI_Comm_create_keyval"]
    assert [p.text for p in decl.params] == [
        "MPI_Comm_copy_attr_function *comm_copy_attr_fn",
        "MPI_Comm_delete_attr_function *mop_arg1",
        "int *comm_keyval",
        "void *extra_state",
    ]
    assert [p.name for p in decl.params] == [
        "comm_copy_attr_fn",
        "mop_arg1",
        "comm_keyval",
        "extra_state",
    ]
    named = gw.name_param("void (*callback)(MPI_Comm, int)", 0)
    assert (named.text, named.name) == ("void (*callback)(MPI_Comm, int)", "callback")


def test_array_parameters() -> None:
    decl = gw.parse_header(SNIPPET).functions["MPI_Group_range_incl"]
    assert decl.params[2].text == "int ranges[][3]"
    assert decl.params[2].name == "ranges"
    unnamed = gw.name_param("int [][3]", 7)
    assert (unnamed.text, unnamed.name) == ("int mop_arg7[][3]", "mop_arg7")
    assert gw.name_param("char *argv[]", 0).name == "argv"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("MPI_Comm comm", "comm"),
        ("const MPI_Datatype", None),
        ("long long", None),
        ("struct foo *", None),
        ("struct foo *f", "f"),
        ("int *const", None),
        ("int *const restrict p", "p"),
        ("MPI_Fint *", None),
    ],
)
def test_parameter_naming(text: str, name: str | None) -> None:
    param = gw.name_param(text, 0)
    assert param.name == (name or "mop_arg0")
    assert param.named_by_header == (name is not None)


def test_void_varargs_and_inline() -> None:
    header = gw.parse_header(SNIPPET)
    assert header.functions["MPI_Wtime"].params == []
    assert header.functions["MPI_Wtime"].prototype == "double MPI_Wtime(void)"
    assert header.functions["MPI_Pcontrol"].varargs
    assert header.functions["MPI_Pcontrol"].prototype == "int MPI_Pcontrol(const int level, ...)"
    assert header.functions["MPI_Inline_fn"].inline_body
    assert header.functions["MPI_Renamed"].asm_label
    assert header.functions["MPI_Void_fn"].ret == "void"


def test_unbalanced_header_is_an_error() -> None:
    with pytest.raises(gw.GenError):
        gw.parse_header("int MPI_Bad(int x];\n")


# ----- exclusions and hand-written wrappers ---------------------------------------------


def test_exclusions() -> None:
    header = gw.parse_header(SNIPPET)
    macros = gw.parse_macros(MACROS)
    reasons = {
        name: gw.exclusion_reason(decl, header, macros) for name, decl in header.functions.items()
    }
    assert reasons["MPI_Send"] is None
    assert reasons["MPI_Isend_c"] is None
    assert reasons["MPI_Attr_get"] is None
    assert reasons["MPI_Unnamed"] is None
    assert reasons["MPI_Pcontrol"] == "variable arguments"
    assert reasons["MPI_Wtime"] == "clock"
    assert reasons["MPI_Comm_c2f"] == "handle conversion"
    assert reasons["MPI_Comm_fromint"] == "handle conversion"
    assert reasons["MPI_Aint_add"] == "address arithmetic"
    assert reasons["MPI_T_init_thread"] == "tool interface"
    assert reasons["MPI_No_profiling"] == "no PMPI_ declaration"
    assert reasons["MPI_Macro_shadowed"] == "macro"
    assert reasons["MPI_Inline_fn"] == "defined by the header"
    assert reasons["MPI_Renamed"] == "asm label"


HAND_WRITTEN = """\
#include "mop_wrap_util.h"

/* int MPI_Commented(int x) { } */
static int helper(int x) { return MPI_Send(0, x, 0, 0, 0, 0); }
int MPI_Declared_only(int x);

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm)
{
    MOP_CALL_BEGIN(MPI_Send)
    int rc = PMPI_Send(buf, count, datatype, dest, tag, comm);
    MOP_CALL_END()
    return rc;
}

int
MPI_Init(int *argc, char ***argv) /* the runtime starts here */
{
    return PMPI_Init(argc, argv);
}

int MPI_Pcontrol(const int level, ...)
{
    return level;
}

int PMPI_Not_a_wrapper(void) { return 0; }
"""


def test_hand_written_scan() -> None:
    found = gw.scan_hand_written([("mop_wrap_x.c", HAND_WRITTEN)])
    assert set(found) == {"MPI_Send", "MPI_Init", "MPI_Pcontrol"}
    assert found["MPI_Send"] == "mop_wrap_x.c"


# ----- classification -------------------------------------------------------------------


@pytest.fixture(scope="module")
def standard():
    pytest.importorskip("pympistandard")
    return gw.Standard.load()


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("MPI_Send", "P2P"),
        ("MPI_Isend_c", "P2P"),
        ("MPI_Sendrecv", "P2P"),
        ("MPI_Mrecv", "P2P"),
        ("MPI_Probe", "P2P"),
        ("MPI_Wait", "COMPLETION"),
        ("MPI_Testsome", "COMPLETION"),
        ("MPI_Request_free", "COMPLETION"),
        ("MPI_Send_init", "PERSISTENT"),
        ("MPI_Psend_init", "PERSISTENT"),
        ("MPI_Pready", "PERSISTENT"),
        ("MPI_Startall", "PERSISTENT"),
        ("MPI_Allreduce", "COLL"),
        ("MPI_Barrier", "COLL"),
        ("MPI_Allreduce_c", "COLL"),
        ("MPI_Ialltoallv", "COLL_NB"),
        ("MPI_Bcast_init", "COLL_PERSISTENT"),
        ("MPI_Neighbor_alltoallw_init", "COLL_PERSISTENT"),
        ("MPI_Put", "RMA"),
        ("MPI_Win_fence", "RMA"),
        ("MPI_Rget_c", "RMA"),
        ("MPI_File_iread_at_all", "FILE"),
        ("MPI_Comm_rank", "OTHER"),
        ("MPI_Intercomm_create", "OTHER"),
        ("MPI_Status_set_tag", "OTHER"),
        ("MPI_Pack", "OTHER"),
        ("MPI_Reduce_local", "OTHER"),
        ("MPI_Comm_idup", "OTHER"),
    ],
)
def test_classify_with_the_standard(standard, name: str, family: str) -> None:
    assert gw.classify(name, standard.params(name)) is gw.Family[family]


def test_unknown_to_the_standard_is_other(standard) -> None:
    assert standard.params("MPI_Not_in_any_standard") is None
    assert gw.classify("MPI_Not_in_any_standard", None) is gw.Family.OTHER


# ----- outputs --------------------------------------------------------------------------


def test_generated_files(tmp_path: Path) -> None:
    hand = tmp_path / "mop_wrap_x.c"
    hand.write_text(HAND_WRITTEN)
    out = tmp_path / "gen"
    plan = gw.generate(out, SNIPPET, MACROS, [hand], "test", standard=FakeStandard())

    ids = (out / "mop_fn_ids.h").read_text()
    defined = re.findall(r"^#define MOP_FN_(MPI_\w+) (\d+)$", ids, re.MULTILINE)
    names = [n for n, _ in defined]
    assert names == sorted(names)
    assert [int(i) for _, i in defined] == list(range(len(names)))
    assert f"#define MOP_FN_COUNT {len(names)}" in ids
    assert "#define MOP_HAVE_MPI_Isend_c 1" in ids
    assert "MOP_FAMILY_P2P = 1" in ids
    assert "MOP_FN_MPIX_Extension" not in ids and "MOP_FN_PMPI_Send" not in ids

    names_c = (out / "mop_fn_names.c").read_text()
    assert '"MPI_Aint_add",' in names_c
    assert "MOP_FAMILY_P2P, /* MPI_Isend_c */" in names_c
    assert "MOP_FAMILY_OTHER, /* MPI_Unnamed */" in names_c

    wrappers = (out / "mop_wrap_generated.c").read_text()
    # A non-blocking send: its transfer begins at the call (key = the request).
    assert (
        "int MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, "
        "int tag, MPI_Comm comm, MPI_Request *request)\n"
        "{\n"
        "    MOP_WRAP(MPI_Isend_c, PMPI_Isend_c(buf, count, datatype, dest, tag, comm, request),\n"
        "             PMPI_Isend_c(buf, count, datatype, dest, tag, comm, request),\n"
        "             MOP_MESSAGE(MOP_EV_BEGIN, MPI_Isend_c, mop_key(*request), MOP_KIND_SEND, "
        "dest, tag, count, datatype, comm))\n"
        "}\n"
    ) in wrappers
    # No transfer rule: the enter/exit bracket.
    assert (
        "{\n"
        "    MOP_CALL_BEGIN(MPI_Attr_get)\n"
        "    int mop_rc_ = PMPI_Attr_get(comm, keyval, attribute_val, flag);\n"
        "    MOP_CALL_END()\n"
        "    return mop_rc_;\n"
        "}\n"
    ) in wrappers
    assert (
        "void MPI_Void_fn(int x)\n{\n    MOP_CALL_BEGIN(MPI_Void_fn)\n    PMPI_Void_fn(x);\n"
        "    MOP_CALL_END()\n}\n"
    ) in wrappers
    assert "PMPI_Unnamed(mop_arg0, mop_arg1, mop_arg2, mop_arg3, mop_arg4);" in wrappers
    defined_wrappers = set(re.findall(r"^\w[\w \*]*\b(MPI_\w+)\(", wrappers, re.MULTILINE))
    assert defined_wrappers == {
        "MPI_Isend_c",
        "MPI_Attr_get",
        "MPI_Comm_create_keyval",
        "MPI_Group_range_incl",
        "MPI_Unnamed",
        "MPI_Void_fn",
    }
    assert {e.decl.name for e in plan.generated} == defined_wrappers
    assert "hand-written" in wrappers and "excluded: clock" in wrappers
    assert plan.summary().startswith(
        f"gen_wrappers: {len(names)} MPI functions declared, 3 hand-written, 6 generated, "
    )
    assert "not in the MPI standard" in plan.summary()

    # Unchanged outputs keep their time stamps: nothing recompiles for them.
    before = (out / "mop_fn_ids.h").stat().st_mtime_ns
    gw.generate(out, SNIPPET, MACROS, [hand], "test", standard=FakeStandard())
    assert (out / "mop_fn_ids.h").stat().st_mtime_ns == before


def test_too_many_functions(tmp_path: Path) -> None:
    many = "".join(f"int MPI_F{i:04d}(int x);\n" for i in range(gw.MAX_FUNCTIONS + 1))
    with pytest.raises(gw.GenError, match="below 1024"):
        gw.generate(tmp_path, "int MPI_Send(int x);\n" + many, "", [], "t", FakeStandard())


def test_missing_pympistandard_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pympistandard", None)
    with pytest.raises(gw.GenError, match="pympistandard"):
        gw.Standard.load()


# ----- the real thing -------------------------------------------------------------------

MPICC = Path(sys.executable).parent / "mpicc"


@pytest.mark.skipif(not MPICC.is_file(), reason="no MPICH wheel mpicc in this environment")
def test_against_mpich_header(tmp_path: Path, standard, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "gen"
    depfile = tmp_path / "gen.d"
    hand = sorted((ROOT / "native" / "profiler").glob("mop_wrap_*.c"))
    args = ["--out-dir", str(out), "--depfile", str(depfile), "--hand-written"]
    rc = gw.main([*args, *map(str, hand), "--", str(MPICC)])
    assert rc == 0
    summary = capsys.readouterr().out
    assert re.match(r"gen_wrappers: \d+ MPI functions declared, \d+ hand-written", summary)

    ids = (out / "mop_fn_ids.h").read_text()
    for name in ("MPI_Send", "MPI_Isend_c", "MPI_Allreduce", "MPI_Put", "MPI_Wtime"):
        assert f"#define MOP_FN_{name} " in ids
    wrappers = (out / "mop_wrap_generated.c").read_text()
    defined = set(re.findall(r"^\w[\w \*]*\b(MPI_\w+)\(", wrappers, re.MULTILINE))
    assert "MPI_Allreduce" in defined or any("MPI_Allreduce" in f.read_text() for f in hand)
    # written by hand in mop_wrap_rma.c, so not generated (two definitions would not link)
    assert "MPI_Put" not in defined
    assert any(re.search(r"^int MPI_Put\(", f.read_text(), re.MULTILINE) for f in hand)
    for excluded in (
        "MPI_Wtime",
        "MPI_Wtick",
        "MPI_Pcontrol",
        "MPI_Comm_c2f",
        "MPI_Status_f2c",
        "MPI_Request_toint",
        "MPI_Aint_add",
        "MPI_Aint_diff",
        "MPI_T_init_thread",
    ):
        assert excluded not in defined
    assert all(not n.startswith("MPI_T_") for n in defined)
    assert "mpi.h" in depfile.read_text()

    # The generated wrappers compile warning-free against the real header.
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return
    proc = subprocess.run(
        [
            str(MPICC),
            "-std=c11",
            "-D_GNU_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-Wno-deprecated-declarations",
            "-fsyntax-only",
            f"-I{out}",
            f"-I{ROOT / 'native' / 'profiler'}",
            str(out / "mop_wrap_generated.c"),
            str(out / "mop_fn_names.c"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
