#!/usr/bin/env python3
"""Generate the Fortran (mpif.h / ``use mpi``) entry points of libmpi_overlap.

Run by CMake at build time when the MPI has a Fortran compiler wrapper
(native/profiler/CMakeLists.txt); writes ``mop_fortran_generated.c`` into the build tree.

For every communication, completion and request-management function that the installed
``<mpi.h>`` declares (families of gen_wrappers.classify: point-to-point and probes,
completion, persistent and partitioned, blocking / non-blocking / persistent collectives,
one-sided) plus a few common communicator, topology and datatype calls, it writes one C
function with the Fortran calling convention, defined under every common name mangling
(mpi_isend_, mpi_isend__, mpi_isend, MPI_ISEND; mop_fortran.h). The function converts the
Fortran arguments, calls the C ``MPI_`` function (this library's C wrapper, where the
events are recorded) and converts the results back:

* handles with the MPI's ``MPI_<Type>_f2c`` / ``_c2f`` (arrays through scratch arrays, on
  the stack up to 64 elements);
* choice buffers: the Fortran ``MPI_IN_PLACE`` / ``MPI_BOTTOM`` become the C constants;
* statuses with ``MPI_Status_f2c`` / ``_c2f``; the Fortran ``MPI_STATUS(ES)_IGNORE``
  become the C constants;
* ``LOGICAL`` results become the MPI's Fortran ``.TRUE.`` / ``.FALSE.``; indices count
  from 1;
* integers and integer arrays (counts, displacements, ranks) are passed as they are.

The Fortran signatures come from the MPI Forum's machine-readable standard (pympistandard:
each Fortran parameter's kind, type, dimensions and direction, and the length of array
arguments), the C prototypes from the header, so what is generated follows the installed
MPI's version. A function with a parameter whose conversion is not known here (callbacks,
strings, attribute values, error handlers, files) is left out and listed in the output's
header comment with the reason. MPI_INIT, MPI_INIT_THREAD, MPI_FINALIZE and MPI_PCONTROL
are written by hand (mop_fortran.c).

Usage:
    gen_fortran.py --out FILE [--depfile FILE] -- CC [FLAGS ...]
    gen_fortran.py --out FILE --preprocessed FILE [--macros FILE]
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_wrappers import (  # the sibling generator, not an installed module
    Declaration,
    Family,
    GenError,
    StdParam,
    add_header_options,
    classify,
    import_standard,
    parse_header,
    parse_macros,
    read_header,
    split_compiler,
    write_depfile,
    write_if_changed,
)

# Families whose functions get a Fortran entry point.
FAMILIES = frozenset(
    {
        Family.P2P,
        Family.COMPLETION,
        Family.PERSISTENT,
        Family.COLL,
        Family.COLL_NB,
        Family.COLL_PERSISTENT,
        Family.RMA,
    }
)

# Beyond those families: calls that Fortran programs commonly make around their
# communication. Under an MPI whose Fortran bindings call PMPI_ directly they would
# otherwise be invisible, and their time would count as computation.
OTHER = frozenset(
    {
        "MPI_Abort",
        "MPI_Cart_coords",
        "MPI_Cart_create",
        "MPI_Cart_rank",
        "MPI_Cart_shift",
        "MPI_Comm_create",
        "MPI_Comm_dup",
        "MPI_Comm_free",
        "MPI_Comm_group",
        "MPI_Comm_rank",
        "MPI_Comm_size",
        "MPI_Comm_split",
        "MPI_Comm_split_type",
        "MPI_Dims_create",
        "MPI_Get_count",
        "MPI_Group_free",
        "MPI_Group_incl",
        "MPI_Type_commit",
        "MPI_Type_contiguous",
        "MPI_Type_create_subarray",
        "MPI_Type_free",
        "MPI_Type_size",
        "MPI_Type_vector",
    }
)

# Written by hand in mop_fortran.c (why: see there).
HAND_WRITTEN = frozenset({"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Pcontrol"})

# Handle kinds: (C type, the name in MPI_<name>_f2c / _c2f).
HANDLES = {
    "COMMUNICATOR": ("MPI_Comm", "Comm"),
    "DATATYPE": ("MPI_Datatype", "Type"),
    "GROUP": ("MPI_Group", "Group"),
    "INFO": ("MPI_Info", "Info"),
    "MESSAGE": ("MPI_Message", "Message"),
    "OPERATION": ("MPI_Op", "Op"),
    "REQUEST": ("MPI_Request", "Request"),
    "WINDOW": ("MPI_Win", "Win"),
}

# Kinds whose values are plain integers, the same in Fortran and C.
INTEGER_KINDS = frozenset(
    {
        "ARRAY_LENGTH",
        "ARRAY_LENGTH_NNI",
        "ARRAY_LENGTH_PI",
        "ASSERT",
        "COLOR",
        "COMM_SIZE",
        "COMM_SIZE_PI",
        "COORDINATE",
        "COORDINATE_NNI",
        "DIMENSION",
        "DISPLACEMENT",
        "DISPLACEMENT_COUNT",
        "DTYPE_DISTRIBUTION",
        "ERROR_CODE",
        "KEY",
        "LOCK_TYPE",
        "NUM_DIMS",
        "ORDER",
        "PARTITION",
        "POLYDISPLACEMENT",
        "POLYDISPLACEMENT_COUNT",
        "POLYDTYPE_NUM_ELEM",
        "POLYDTYPE_NUM_ELEM_NNI",
        "POLYDTYPE_NUM_ELEM_PI",
        "POLYDTYPE_STRIDE_BYTES",
        "POLYNUM_BYTES",
        "POLYNUM_BYTES_NNI",
        "POLYRMA_DISPLACEMENT",
        "POLYXFER_NUM_ELEM",
        "POLYXFER_NUM_ELEM_NNI",
        "RANK",
        "RANK_NNI",
        "RMA_DISPLACEMENT",
        "RMA_DISPLACEMENT_NNI",
        "SPLIT_TYPE",
        "STRIDE",
        "TAG",
        "WINDOW_SIZE",
        "WIN_ATTACH_SIZE",
        "XFER_NUM_ELEM",
        "XFER_NUM_ELEM_NNI",
    }
)

# The C type behind each Fortran integer type.
FORTRAN_TYPES = {
    "INTEGER": "MPI_Fint",
    "LOGICAL": "MPI_Fint",
    "INTEGER(KIND=MPI_ADDRESS_KIND)": "MPI_Aint",
    "INTEGER(KIND=MPI_COUNT_KIND)": "MPI_Count",
    "INTEGER(KIND=MPI_OFFSET_KIND)": "MPI_Offset",
}

OUTPUT = "mop_fortran_generated.c"


class Unsupported(Exception):
    """A parameter this generator cannot convert; the function is left out."""


# ----- the standard's Fortran description -----------------------------------------------


@dataclass(frozen=True)
class FParam:
    """One parameter of a procedure's mpif.h binding (upper-case names in the standard)."""

    name: str  # lower case, used as the C parameter name
    kind: str
    ftype: str
    dims: str  # '' scalar, '(*)', '(MPI_STATUS_SIZE)', '(MPI_STATUS_SIZE, *)'
    direction: str  # IN, OUT, INOUT
    length: str | None  # for arrays: the parameter giving the length, '*' or None


@dataclass(frozen=True)
class Procedure:
    name: str  # MPI_Isend
    c_params: list[StdParam]
    f_params: list[FParam]


def load_standard() -> dict[str, Procedure]:
    """Procedures with both an ISO C and an mpif.h binding, by C name."""
    std = import_standard()
    out: dict[str, Procedure] = {}
    for proc in std.PROCEDURES.values():
        iso_c, f90, lis = proc.express.iso_c, proc.express.f90, proc.express.lis
        if iso_c is None or f90 is None or lis is None:
            continue
        lengths = {p.name.lower(): p._parseset.get("length") for p in lis.parameters}
        fparams = [
            FParam(
                name=p.name.lower(),
                kind=p.kind.name,
                ftype=str(p.type),
                dims=str(p.dimensions or ""),
                direction=p.direction.value,
                length=lengths.get(p.name.lower()),
            )
            for p in f90.parameters
        ]
        cparams = [StdParam(p.kind.name, p.direction.value) for p in iso_c.parameters]
        out[iso_c.name] = Procedure(iso_c.name, cparams, fparams)
    return out


# ----- one shim -------------------------------------------------------------------------


@dataclass
class Shim:
    name: str  # MPI_Isend
    fparams: list[str] = field(default_factory=list)  # "MPI_Fint *count"
    fnames: list[str] = field(default_factory=list)
    decls: list[str] = field(default_factory=list)  # locals, before any jump
    pre: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    post: list[str] = field(default_factory=list)  # after MPI_SUCCESS / MPI_ERR_IN_STATUS
    release: list[str] = field(default_factory=list)
    scratch: bool = False  # may run out of memory
    f08: bool = False  # statuses are TYPE(MPI_Status) = MPI_F08_status (MPICH's mpi_f08)
    buffers: bool = False  # has a choice buffer
    statuses: bool = False  # has a status argument

    @property
    def lower(self) -> str:
        return self.name.lower()

    @property
    def impl(self) -> str:
        return ("mop_f08_" if self.f08 else "mop_f_") + self.name[len("MPI_") :].lower()


def _pointee(text: str, name: str) -> str:
    """The type a C pointer parameter ('int *outcount') points to."""
    t = text.strip()
    if t.endswith(name):
        t = t[: -len(name)]
    t = t.replace("const", " ").strip()
    if not t.endswith("*"):
        raise Unsupported(f"'{text}' is not a pointer")
    return " ".join(t[:-1].split())


def _is_pointer(text: str) -> bool:
    return "*" in text or "[" in text


class Builder:
    """Turns one procedure into a Shim; raises Unsupported."""

    def __init__(self, proc: Procedure, decl: Declaration, f08: bool = False) -> None:
        self.proc = proc
        self.decl = decl
        self.s = Shim(proc.name, f08=f08)
        self.names = {p.name for p in proc.f_params}
        self.f08 = f08

    def build(self) -> Shim:
        fps = self.proc.f_params
        if not fps or fps[-1].kind != "ERROR_CODE" or fps[-1].direction != "OUT":
            raise Unsupported("no IERROR argument")
        fps = fps[:-1]
        if len(fps) != len(self.decl.params):
            raise Unsupported(
                f"{len(fps)} Fortran arguments but {len(self.decl.params)} in the C prototype"
            )
        for fp, cp in zip(fps, self.decl.params, strict=True):
            self.param(fp, cp.text)
        self.s.fparams.append("MPI_Fint *ierror")
        self.s.fnames.append("ierror")
        return self.s

    # -- helpers --
    def _length(self, fp: FParam) -> str:
        if fp.length and fp.length in self.names:
            return f"(int)*{fp.length}"
        raise Unsupported(f"length of array {fp.name.upper()} ({fp.length})")

    def _scratch(self, fp: FParam, ctype: str, n: str, cond: str | None = None) -> str:
        """Declares a scratch array c_<name> of n elements; returns its count variable."""
        s = self.s
        s.scratch = True
        x = fp.name
        s.decls += [f"{ctype} s_{x}[MOP_F_STACK];", f"{ctype} *c_{x} = NULL;", f"int n_{x} = 0;"]
        s.pre.append(f"n_{x} = {n};" if cond is None else f"n_{x} = {cond} ? {n} : 0;")
        s.pre.append(f"if (n_{x} < 0)\n        n_{x} = 0;")
        s.pre.append(
            f"c_{x} = mop_f_scratch(s_{x}, n_{x}, sizeof *c_{x});\n"
            f"    if (!c_{x})\n        goto out_of_memory;"
        )
        s.release.append(f"mop_f_release(c_{x}, s_{x});")
        return f"n_{x}"

    def _outcount(self) -> str | None:
        for p in self.proc.f_params:
            if p.name == "outcount":
                return "c_outcount"
        return None

    def _request_array_length(self) -> str:
        for p in self.proc.f_params:
            if p.kind == "REQUEST" and p.dims == "(*)":
                return f"n_{p.name}"
        raise Unsupported("status array without a request array")

    # -- one parameter --
    def param(self, fp: FParam, ctext: str) -> None:
        s, x, kind = self.s, fp.name, fp.kind
        s.fnames.append(x)
        if kind == "BUFFER" and fp.ftype == "<type>":
            s.buffers = True
            s.fparams.append(f"void *{x}")
            s.decls.append(f"void *c_{x} = mop_f_buf({x});")
            s.args.append(f"c_{x}")
        elif kind == "C_BUFFER" and fp.direction == "OUT" and fp.ftype in FORTRAN_TYPES:
            # The C binding stores a pointer at the address it is given; the Fortran
            # one an INTEGER(KIND=MPI_ADDRESS_KIND) of the same size.
            s.fparams.append(f"MPI_Aint *{x}")
            s.args.append(f"(void *){x}")
        elif kind in HANDLES and fp.ftype == "INTEGER":
            self.handle(fp, ctext)
        elif kind == "STATUS" and fp.ftype == "INTEGER":
            self.status(fp)
        elif kind == "LOGICAL" and fp.ftype == "LOGICAL":
            self.logical(fp)
        elif kind == "INDEX" and fp.ftype == "INTEGER" and fp.direction == "IN" and not fp.dims:
            s.fparams.append(f"MPI_Fint *{x}")  # a dimension number (MPI_Cart_shift)
            s.args.append(f"*{x}")
        elif kind == "INDEX" and fp.ftype == "INTEGER" and fp.direction == "OUT":
            s.fparams.append(f"MPI_Fint *{x}")
            if fp.dims == "":
                s.decls.append(f"int c_{x} = MPI_UNDEFINED;")
                s.args.append(f"&c_{x}")
                s.post.append(f"*{x} = mop_f_index(c_{x});")
            else:
                n = self._outcount()
                if n is None:
                    raise Unsupported(f"index array {x.upper()} without OUTCOUNT")
                s.args.append(f"(int *){x}")
                s.post.append(
                    f"if ({n} != MPI_UNDEFINED)\n"
                    f"        for (int i = 0; i < {n}; i++)\n"
                    f"            {x}[i] = mop_f_index({x}[i]);"
                )
        elif kind in INTEGER_KINDS and fp.ftype in FORTRAN_TYPES and fp.ftype != "LOGICAL":
            self.integer(fp, ctext)
        else:
            raise Unsupported(f"{x.upper()}: {kind} {fp.ftype}{fp.dims}")

    def integer(self, fp: FParam, ctext: str) -> None:
        s, x = self.s, fp.name
        ftype = FORTRAN_TYPES[fp.ftype]
        s.fparams.append(f"{ftype} *{x}")
        if fp.dims:  # arrays of the same width go through unconverted
            if ftype == "MPI_Fint":
                s.args.append(f"(int *){x}")
            elif ftype == "MPI_Aint":
                s.args.append(x)
            else:
                raise Unsupported(f"{x.upper()}: array of {fp.ftype}")
        elif fp.direction == "IN":
            s.args.append(f"*{x}")
        else:
            ctype = _pointee(ctext, x)
            init = f"*{x}" if fp.direction == "INOUT" else "0"
            s.decls.append(f"{ctype} c_{x} = {init};")
            s.args.append(f"&c_{x}")
            s.post.append(f"*{x} = ({ftype})c_{x};")

    def handle(self, fp: FParam, ctext: str) -> None:
        s, x = self.s, fp.name
        ctype, conv = HANDLES[fp.kind]
        s.fparams.append(f"MPI_Fint *{x}")
        if fp.dims == "":
            if fp.direction == "IN" and not _is_pointer(ctext):
                s.args.append(f"MPI_{conv}_f2c(*{x})")
                return
            init = "" if fp.direction == "OUT" else f" = MPI_{conv}_f2c(*{x})"
            s.decls.append(f"{ctype} c_{x}{init};")
            s.args.append(f"&c_{x}")
            if fp.direction != "IN":
                s.post.append(f"*{x} = MPI_{conv}_c2f(c_{x});")
            return
        if fp.dims != "(*)" or fp.direction == "OUT":
            raise Unsupported(f"{x.upper()}: {fp.direction} array of handles")
        cond = None
        if fp.length == "*" and fp.kind == "DATATYPE":
            # Alltoallw and the neighbourhood w-collectives: one type per peer.
            which = "MOP_F_PEERS_ALL"
            if "neighbor" in self.proc.name.lower():
                which = "MOP_F_PEERS_OUT" if x.startswith("send") else "MOP_F_PEERS_IN"
            if "comm" not in self.names:
                raise Unsupported(f"{x.upper()}: datatype array without a communicator")
            n = f"mop_f_peers(MPI_Comm_f2c(*comm), {which})"
            if x.startswith("send") and "sendbuf" in self.names:
                cond = "c_sendbuf != MPI_IN_PLACE"  # then the send arguments are ignored
        else:
            n = self._length(fp)
        count = self._scratch(fp, ctype, n, cond)
        s.pre.append(
            f"for (int i = 0; i < {count}; i++)\n        c_{x}[i] = MPI_{conv}_f2c({x}[i]);"
        )
        s.args.append(f"c_{x}")
        if fp.direction == "INOUT":
            s.post.append(
                f"for (int i = 0; i < {count}; i++)\n        {x}[i] = MPI_{conv}_c2f(c_{x}[i]);"
            )

    def status(self, fp: FParam) -> None:
        """INTEGER STATUS(MPI_STATUS_SIZE) (mpif.h, use mpi) or, for MPICH's mpi_f08,
        TYPE(MPI_Status), which is the C struct MPI_F08_status (MPI-4 names for both)."""
        s, x = self.s, fp.name
        s.statuses = True
        if self.f08:
            ftype, ignored, ignored_all = (
                "MPI_F08_status",
                "mop_f08_status_ignored",
                ("mop_f08_statuses_ignored"),
            )
            f2c, c2f = "MPI_Status_f082c", "MPI_Status_c2f08"
        else:
            ftype, ignored, ignored_all = (
                "MPI_Fint",
                "mop_f_status_ignored",
                ("mop_f_statuses_ignored"),
            )
            f2c, c2f = "MPI_Status_f2c", "MPI_Status_c2f"
        s.fparams.append(f"{ftype} *{x}")
        if fp.dims == "(MPI_STATUS_SIZE)":
            s.decls.append(f"MPI_Status c_{x};")
            if fp.direction == "IN":
                s.pre.append(f"{f2c}({x}, &c_{x});")
                s.args.append(f"&c_{x}")
                return
            if fp.direction != "OUT":
                raise Unsupported(f"{x.upper()}: {fp.direction} status")
            s.decls.append(f"MPI_Status *p_{x} = &c_{x};")
            s.pre.append(f"if ({ignored}({x}))\n        p_{x} = MPI_STATUS_IGNORE;")
            s.args.append(f"p_{x}")
            s.post.append(f"if (p_{x} != MPI_STATUS_IGNORE)\n        {c2f}(&c_{x}, {x});")
            return
        if fp.dims != "(MPI_STATUS_SIZE, *)" or fp.direction != "OUT":
            raise Unsupported(f"{x.upper()}: status {fp.dims} {fp.direction}")
        n = self._request_array_length()
        out = self._outcount()
        count = self._scratch(fp, "MPI_Status", n, f"!{ignored_all}({x})")
        s.decls.append(f"MPI_Status *p_{x} = MPI_STATUSES_IGNORE;")
        s.pre.append(f"if (!{ignored_all}({x}))\n        p_{x} = c_{x};")
        s.args.append(f"p_{x}")
        done = count if out is None else f"({out} == MPI_UNDEFINED ? 0 : {out})"
        dest = f"&{x}[i]" if self.f08 else f"{x} + (size_t)i * mop_f.status_size"
        s.post.append(
            f"if (p_{x} != MPI_STATUSES_IGNORE)\n"
            f"        for (int i = 0; i < {done}; i++)\n"
            f"            {c2f}(&c_{x}[i], {dest});"
        )

    def logical(self, fp: FParam) -> None:
        s, x = self.s, fp.name
        s.fparams.append(f"MPI_Fint *{x}")
        if fp.dims == "" and fp.direction == "OUT":
            s.decls.append(f"int c_{x} = 0;")
            s.args.append(f"&c_{x}")
            s.post.append(f"*{x} = mop_f_logical(c_{x});")
        elif fp.dims == "" and fp.direction == "IN":
            s.args.append(f"mop_f_from_logical(*{x})")
        elif fp.dims == "(*)" and fp.direction == "IN":
            count = self._scratch(fp, "int", self._length(fp))
            s.pre.append(
                f"for (int i = 0; i < {count}; i++)\n        c_{x}[i] = mop_f_from_logical({x}[i]);"
            )
            s.args.append(f"c_{x}")
        else:
            raise Unsupported(f"{x.upper()}: LOGICAL{fp.dims} {fp.direction}")


# ----- plan and output ------------------------------------------------------------------


@dataclass
class Plan:
    shims: list[Shim]
    skipped: list[tuple[str, str]]  # (name, reason)
    source: str
    headers: list[str]
    # MPICH's mpi_f08 routines without a choice buffer that take a status: their
    # TYPE(MPI_Status) variant (see mop_fortran.h, MOP_F08_MPICH4).
    f08: list[Shim] = field(default_factory=list)


def make_plan(
    preprocessed: str, macros_text: str, standard: dict[str, Procedure], source: str
) -> Plan:
    header = parse_header(preprocessed)
    if "MPI_Send" not in header.functions:
        raise GenError(f"no MPI_Send declaration found in <mpi.h> as preprocessed by {source}")
    macros = parse_macros(macros_text)
    shims, skipped = [], []
    for name in sorted(header.functions):
        if name in HAND_WRITTEN or name.endswith("_c"):  # mpif.h has no large-count forms
            continue
        proc = standard.get(name)
        if proc is None:
            continue
        family = classify(name, proc.c_params)
        if family not in FAMILIES and name not in OTHER:
            continue
        decl = header.functions[name]
        try:
            if decl.varargs:
                raise Unsupported("variable arguments")
            shim = Builder(proc, decl).build()
        except Unsupported as why:
            skipped.append((name, str(why)))
            continue
        # An upper-case entry point that the header defines as a macro would not compile.
        if name.upper() in macros or name.lower() in macros:
            skipped.append((name, "a macro of the same name as a Fortran entry point"))
            continue
        shims.append(shim)
    f08 = [
        Builder(standard[s.name], header.functions[s.name], f08=True).build()
        for s in shims
        if s.statuses and not s.buffers
    ]
    return Plan(shims, skipped, source.replace("*/", "*\\/"), list(header.files), f08)


_BANNER = "Generated by native/profiler/gen_fortran.py at build time; do not edit."


def render_shim(s: Shim) -> list[str]:
    params = ", ".join(s.fparams)
    out = [f"/* {s.name.upper()} */"]
    if s.scratch:
        out.append(f"typedef void {s.impl}_fn({params});")
    out += [f"static void {s.impl}({params})", "{"]
    out += ["    MPI_Fint mop_ierr;", "    if (!ierror)", "        ierror = &mop_ierr;"]
    out += ["    mop_f_enter();"]
    out += [f"    {d}" for d in s.decls]
    out += [f"    {p}" for p in s.pre]
    out.append(f"    int rc = {s.name}({', '.join(s.args)});")
    if s.post:
        out.append("    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {")
        out += ["        " + p.replace("\n    ", "\n        ") for p in s.post]
        out.append("    }")
    out.append("    *ierror = rc;")
    if s.scratch:
        out.append("    goto done;")
        out.append("out_of_memory:")
        out.append("    mop_note_out_of_memory();")
        out.append("    {")
        entry = "mop_f08_mpi_entry" if s.f08 else "mop_f_mpi_entry"
        out.append(f'        void *entry = {entry}("{s.name[4:].lower()}");')
        out.append(f"        {s.impl}_fn *mpi_own;")
        out.append("        memcpy(&mpi_own, &entry, sizeof mpi_own);")
        out.append("        if (mpi_own)")
        out.append(f"            mpi_own({', '.join(s.fnames)});")
        out.append("        else")
        out.append(f'            *ierror = mop_f_no_memory("{s.name[4:]}");')
        out.append("    }")
        out.append("done:")
        out += [f"    {r}" for r in s.release]
    out.append("}")
    lower = s.lower
    if s.f08:
        out.append(f"MOP_F08_MPICH_ENTRY({s.impl}, {lower})")
        return out
    out.append(f"MOP_F_ENTRY({s.impl}, {lower}, {s.name.upper()})")
    out.append(f"MOP_F08_OMPI_ENTRY({s.impl}, {lower})")
    if not s.buffers and not s.statuses:
        out.append(f"MOP_F08_MPICH_ENTRY({s.impl}, {lower})")
    return out


def render(p: Plan) -> str:
    width = max((len(n) for n, _ in p.skipped), default=8)
    out = [
        f"/* {OUTPUT} - {_BANNER}",
        f" * <mpi.h> as preprocessed by: {p.source}",
        " *",
        " * Fortran (mpif.h / use mpi) entry points: each converts its arguments and calls",
        " * the C MPI_ function (docs/profiler.md, 'Fortran').",
        f" * {len(p.shims)} generated: "
        + ", ".join(s.name for s in p.shims[:4])
        + (", ..." if len(p.shims) > 4 else ""),
    ]
    if p.skipped:
        out += [" *", f" * Left out ({len(p.skipped)}): a parameter without a known conversion:"]
        for name, why in p.skipped:
            lines = textwrap.wrap(why, 88 - width - 6) or [""]
            out.append(f" *   {name:<{width}}  {lines[0]}")
            out += [f" *   {'':<{width}}  {line}" for line in lines[1:]]
    out += [
        " */",
        "#include <mpi.h>",
        "#include <string.h>",
        "",
        '#include "mop_fortran.h"',
        '#include "mop_runtime.h"',
    ]
    for s in p.shims:
        out.append("")
        out += render_shim(s)
    if p.f08:
        out += [
            "",
            "/* MPICH's mpi_f08: the routines with a status argument and no choice buffer. */",
        ]
        out.append("#if MOP_F08_MPICH4")
        for s in p.f08:
            out.append("")
            out += render_shim(s)
        out.append("#endif")
    out.append("")
    return "\n".join(out)


def generate(
    out: Path,
    preprocessed: str,
    macros_text: str,
    source: str,
    standard: dict[str, Procedure] | None = None,
) -> Plan:
    the_plan = make_plan(preprocessed, macros_text, standard or load_standard(), source)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_if_changed(out, render(the_plan))
    return the_plan


def main(argv: Sequence[str] | None = None) -> int:
    args, cc = split_compiler(list(sys.argv[1:] if argv is None else argv))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    add_header_options(ap)
    ns = ap.parse_args(args)
    try:
        text, macros, source = read_header(ns, cc)
        result = generate(ns.out, text, macros, source)
        if ns.depfile:
            deps = [*result.headers, __file__, str(Path(__file__).with_name("gen_wrappers.py"))]
            write_depfile(ns.depfile, ns.out.resolve(), deps)
    except GenError as err:
        print(f"gen_fortran: error: {err}", file=sys.stderr)
        return 1
    if not ns.quiet:
        print(
            f"gen_fortran: {len(result.shims)} Fortran entry points generated, "
            f"{len(result.skipped)} left out"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
