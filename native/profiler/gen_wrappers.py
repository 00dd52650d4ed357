#!/usr/bin/env python3
"""Generate the profiler's function ids and generic PMPI wrappers from the installed mpi.h.

Run by CMake at build time (native/profiler/CMakeLists.txt); writes into the build tree:

* ``mop_fn_ids.h``      - ``MOP_FN_MPI_<name>`` ids (0..N-1, sorted by name) and
  ``MOP_HAVE_MPI_<name>`` for every MPI_ function the header declares, ``MOP_FN_COUNT``, the
  family enum (``MOP_FAMILY_*``) and the declarations of the tables below.
* ``mop_fn_names.c``    - ``mop_fn_names[]``, ``mop_fn_count``, ``mop_fn_family[]`` and
  ``mop_family_names[]``.
* ``mop_wrap_generated.c`` - a wrapper for every declared function that is neither written
  by hand (native/profiler/mop_wrap_*.c) nor excluded (see ``exclusion_reason``), with the
  exact prototype of the installed header, and a table of all functions by family. A
  function with a transfer rule (``transfer_rule``: point-to-point sends and receives,
  blocking, non-blocking and persistent collectives, their large-count ``_c`` variants)
  records its transfer with ``MOP_WRAP`` (mop_wrap_util.h) and the events of
  mop_wrap_xfer.h; the others get an enter/exit wrapper (``MOP_CALL_BEGIN``/
  ``MOP_CALL_END`` of mop_runtime.h around ``PMPI_<name>``).

The declarations are read from the header as the C compiler preprocesses it (the command
after ``--``, run with ``-E`` on a file holding ``#include <mpi.h>``), so the prototypes are
the ones of the MPI being built against whatever its version. The MPI Forum's
machine-readable standard (the ``pympistandard`` package) classifies every function into a
family by the kinds and directions of its parameters, and tells which functions the header
declares beyond the standard (they are wrapped all the same).

Usage:
    gen_wrappers.py --out-dir DIR [--hand-written FILE ...] [--depfile FILE] -- CC [FLAGS ...]
    gen_wrappers.py --out-dir DIR --preprocessed FILE [--macros FILE] [--hand-written ...]
"""

from __future__ import annotations

import argparse
import enum
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

# Ids travel in 16-bit event fields and index fixed tables in the runtime.
MAX_FUNCTIONS = 1024

GENERATED_FILES = ("mop_fn_ids.h", "mop_fn_names.c", "mop_wrap_generated.c")


class GenError(Exception):
    """A failure the build should report in one clear line."""


# ----- families -------------------------------------------------------------------------


class Family(enum.IntEnum):
    """What an MPI function does, as far as the profiler cares (MOP_FAMILY_* in C)."""

    OTHER = 0
    P2P = 1  # point-to-point transfers and probes
    COMPLETION = 2  # wait/test/request status, cancel, request free
    PERSISTENT = 3  # persistent and partitioned point-to-point, MPI_Start(all)
    COLL = 4  # blocking collectives
    COLL_NB = 5  # non-blocking collectives
    COLL_PERSISTENT = 6  # persistent collectives (*_init)
    RMA = 7  # one-sided communication and windows
    FILE = 8  # MPI-IO

    @property
    def label(self) -> str:
        return _FAMILY_LABELS[self]


_FAMILY_LABELS = {
    Family.OTHER: "other",
    Family.P2P: "point-to-point",
    Family.COMPLETION: "completion",
    Family.PERSISTENT: "persistent point-to-point",
    Family.COLL: "collective",
    Family.COLL_NB: "non-blocking collective",
    Family.COLL_PERSISTENT: "persistent collective",
    Family.RMA: "one-sided",
    Family.FILE: "file I/O",
}

# Collective operations by stem: MPI_<stem> blocking, MPI_I<stem> non-blocking,
# MPI_<stem>_init persistent. The standard has no "collective" attribute, and parameter
# kinds alone cannot tell MPI_Allgather from MPI_Pack (buffer, datatype, communicator).
_COLLECTIVE_STEMS = frozenset(
    {
        "barrier",
        "bcast",
        "gather",
        "gatherv",
        "scatter",
        "scatterv",
        "allgather",
        "allgatherv",
        "alltoall",
        "alltoallv",
        "alltoallw",
        "reduce",
        "allreduce",
        "reduce_scatter",
        "reduce_scatter_block",
        "scan",
        "exscan",
        "neighbor_allgather",
        "neighbor_allgatherv",
        "neighbor_alltoall",
        "neighbor_alltoallv",
        "neighbor_alltoallw",
    }
)


@dataclass(frozen=True)
class StdParam:
    """One parameter as the standard describes it: its kind (BUFFER, REQUEST...),
    direction (IN, OUT, INOUT), name and whether it is an array (recvcounts[])."""

    kind: str
    direction: str
    name: str = ""
    array: bool = False


def classify(name: str, params: Sequence[StdParam] | None) -> Family:
    """The family of MPI function `name`; `params` are its standard parameters, None when
    the standard does not know the function (its family is then OTHER)."""
    if params is None:
        return Family.OTHER
    base = name[len("MPI_") :].lower()
    if base.endswith("_c"):
        base = base[: -len("_c")]  # large-count variant: same family as its base
    kinds = {p.kind for p in params}
    request_out = any(p.kind == "REQUEST" and p.direction == "OUT" for p in params)
    request_use = any(p.kind == "REQUEST" and p.direction != "OUT" for p in params)
    if _CONVERSION.search(name):
        return Family.OTHER
    if base.startswith("file_") or "FILE" in kinds or base == "register_datarep":
        return Family.FILE
    if base.startswith("win_") or "WINDOW" in kinds:
        return Family.RMA
    if "COMMUNICATOR" in kinds:
        if base in _COLLECTIVE_STEMS:
            return Family.COLL
        if base.startswith("i") and base[1:] in _COLLECTIVE_STEMS:
            return Family.COLL_NB
        if base.endswith("_init") and base[: -len("_init")] in _COLLECTIVE_STEMS:
            return Family.COLL_PERSISTENT
    if "PARTITION" in kinds or base in ("start", "startall"):
        return Family.PERSISTENT
    if request_out and "TAG" in kinds and base.endswith("_init"):
        return Family.PERSISTENT
    if "TAG" in kinds and "COMMUNICATOR" in kinds and ({"BUFFER", "STATUS"} & kinds or request_out):
        return Family.P2P
    if "MESSAGE" in kinds and {"BUFFER", "STATUS"} & kinds:
        return Family.P2P
    if request_use:
        return Family.COMPLETION
    return Family.OTHER


def import_standard() -> ModuleType:
    """The pympistandard module, API version 1 selected; GenError naming the package
    and the interpreter when it is not importable. Imported only once a header is parsed."""
    try:
        import pympistandard as std
    except ImportError as err:
        raise GenError(
            f"the Python package 'pympistandard' is not importable by {sys.executable} "
            f"({err}); install it (pip install pympistandard) or pass the interpreter "
            "that has it to CMake with -DMO_PYTHON=<python>"
        ) from None
    std.use_api_version(1)
    return std


class Standard:
    """The MPI standard's procedures (pympistandard), by C name."""

    def __init__(self, procedures: dict[str, list[StdParam]], version: str) -> None:
        self.procedures = procedures
        self.version = version

    @classmethod
    def load(cls) -> Standard:
        std = import_standard()
        procs: dict[str, list[StdParam]] = {}
        for key, proc in std.PROCEDURES.items():
            iso_c = proc.express.iso_c
            if iso_c is None:
                continue
            params = [
                StdParam(p.kind.name, p.direction.value, p.name, bool(p.array))
                for p in iso_c.parameters
            ]
            procs[key] = params
            if proc.has_embiggenment():
                procs[key + "_c"] = params
        return cls(procs, getattr(std, "__version__", "?"))

    def params(self, name: str) -> list[StdParam] | None:
        return self.procedures.get(name.lower())


# ----- parsing the preprocessed header --------------------------------------------------

_C_QUALIFIERS = frozenset(
    {"const", "volatile", "restrict", "__restrict", "__restrict__", "_Atomic", "register"}
)
_C_TYPE_KEYWORDS = frozenset(
    {
        "void",
        "char",
        "short",
        "int",
        "long",
        "float",
        "double",
        "signed",
        "unsigned",
        "_Bool",
        "_Complex",
        "__int128",
    }
)
_C_TAG_KEYWORDS = frozenset({"struct", "union", "enum"})
_STORAGE = frozenset(
    {"extern", "static", "inline", "__inline", "__inline__", "_Noreturn", "__extension__"}
)
# GNU/MSVC decorations that carry a parenthesised argument list and mean nothing for the
# wrapper's own prototype (visibility, deprecation, MPICH's pointer_with_type_tag...).
_DECORATIONS = ("__attribute__", "__attribute", "__declspec")
_ASM_LABELS = ("__asm__", "__asm", "asm")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_LINE_MARKER = re.compile(r'^#\s*(?:line\s+)?\d+\s+"((?:[^"\\]|\\.)*)"')
_DECL = re.compile(r"^(?P<ret>[^()]*?)\b(?P<name>P?MPI_\w+)\s*\(", re.DOTALL)


@dataclass
class Param:
    """One parameter of a declaration: its text as the wrapper writes it and its name."""

    text: str
    name: str
    named_by_header: bool = True


@dataclass
class Declaration:
    name: str
    ret: str
    params: list[Param]
    varargs: bool = False
    inline_body: bool = False  # defined (static inline) by the header itself
    asm_label: bool = False

    @property
    def prototype(self) -> str:
        plist = ", ".join(p.text for p in self.params) if self.params else "void"
        if self.varargs:
            plist += ", ..."
        return f"{self.ret} {self.name}({plist})"


@dataclass
class Header:
    """What the preprocessed header declares."""

    functions: dict[str, Declaration] = field(default_factory=dict)  # MPI_ names
    profiling: set[str] = field(default_factory=set)  # PMPI_ names
    files: list[str] = field(default_factory=list)  # headers read (for the depfile)


def _skip_literal(text: str, i: int) -> int:
    """Index after the string or character literal starting at text[i]."""
    quote = text[i]
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            return i + 1
        i += 1
    return i


def _matching(text: str, i: int) -> int:
    """Index of the bracket closing the one at text[i], skipping literals and comments;
    len(text) if none."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = [pairs[text[i]]]
    i += 1
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = _skip_literal(text, i)
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end + 1
            continue
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")}]":
            if c != stack[-1]:
                raise GenError(f"unbalanced {c!r} in preprocessed header near: {text[i - 60 : i]}")
            stack.pop()
            if not stack:
                return i
        i += 1
    return len(text)


def strip_decorations(text: str) -> tuple[str, bool]:
    """Remove __attribute__((...)), __declspec(...) and asm labels; collapse whitespace.
    Returns the text and whether an asm label was present."""
    out: list[str] = []
    asm = False
    i = 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            j = _skip_literal(text, i)
            out.append(text[i:j])
            i = j
            continue
        m = _IDENT.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            word = m.group()
            j = m.end()
            if word in _DECORATIONS or word in _ASM_LABELS:
                k = j
                while k < len(text) and text[k].isspace():
                    k += 1
                if k < len(text) and text[k] == "(":
                    asm = asm or word in _ASM_LABELS
                    i = _matching(text, k) + 1
                    out.append(" ")
                    continue
            out.append(word)
            i = j
            continue
        out.append(c)
        i += 1
    return " ".join("".join(out).split()), asm


def _statements(text: str) -> Iterator[tuple[str, bool]]:
    """Top-level statements of preprocessed C: (text, is_function_definition)."""
    i, start, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            i = _skip_literal(text, i)
        elif c in "([":
            i = _matching(text, i) + 1
        elif c == ";":
            yield text[start:i], False
            i += 1
            start = i
        elif c == "{":
            end = _matching(text, i)
            head, _ = strip_decorations(text[start:i])
            if head.endswith(")") and not head.startswith("typedef"):
                yield text[start:i], True  # a function body
                start = end + 1
            i = end + 1  # otherwise struct/enum body or initializer: part of the statement
        else:
            i += 1
    if text[start:].strip():
        yield text[start:], False


def split_params(text: str) -> list[str]:
    """Split a parameter list at its top-level commas."""
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            j = _skip_literal(text, i)
            cur.append(text[i:j])
            i = j
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    last = "".join(cur).strip()
    if last or parts:
        parts.append(last)
    return parts


_FUNC_PTR = re.compile(r"\(\s*(?:\*\s*)+(?P<name>[A-Za-z_]\w*)?\s*\)\s*\(")


def name_param(text: str, index: int) -> Param:
    """The parameter `text` with a name: its own, or ``mop_arg<index>`` when unnamed."""
    text = " ".join(text.split())
    m = _FUNC_PTR.search(text)
    if m:  # function pointer declarator: int (*name)(int)
        if m.group("name"):
            return Param(text, m.group("name"))
        close = text.rindex(")", m.start(), m.end() - 1)  # the one after (*
        name = f"mop_arg{index}"
        return Param(text[:close].rstrip() + name + text[close:], name, False)
    # Array suffixes go after the name: int ranges[][3], char *argv[].
    bracket = text.find("[")
    base, suffix = (text, "") if bracket < 0 else (text[:bracket].rstrip(), text[bracket:])
    tokens = re.findall(r"[A-Za-z_]\w*|\S", base)
    if tokens and _IDENT.fullmatch(tokens[-1]):
        last = tokens[-1]
        before = tokens[:-1]
        typed = [t for t in before if t not in _C_QUALIFIERS]
        if (
            last not in _C_QUALIFIERS
            and last not in _C_TYPE_KEYWORDS
            and last not in _C_TAG_KEYWORDS
            and typed
            and typed[-1] not in _C_TAG_KEYWORDS
        ):
            return Param(text, last)
    name = f"mop_arg{index}"
    sep = "" if base.endswith("*") else " "
    return Param(f"{base}{sep}{name}{suffix}", name, False)


def parse_declaration(statement: str, has_body: bool = False) -> Declaration | None:
    """The MPI_/PMPI_ function declared by one statement, or None."""
    text, asm = strip_decorations(statement)
    if not text or text.startswith("typedef") or "{" in text:
        return None
    m = _DECL.match(text)
    if not m:
        return None
    open_paren = m.end() - 1
    close = _matching(text, open_paren)
    if close != len(text) - 1:
        return None  # e.g. a function returning a function pointer; not MPI's style
    words = m.group("ret").split()
    storage = {w for w in words if w in _STORAGE}
    ret = " ".join(w for w in words if w not in _STORAGE)
    ret = re.sub(r"\s+\*", " *", ret).strip()
    if not ret:
        return None
    raw = split_params(text[open_paren + 1 : close])
    varargs = bool(raw) and raw[-1] == "..."
    if varargs:
        raw = raw[:-1]
    if raw == ["void"]:
        raw = []
    params = [name_param(p, i) for i, p in enumerate(raw)]
    return Declaration(
        name=m.group("name"),
        ret=ret,
        params=params,
        varargs=varargs,
        inline_body=has_body or "static" in storage,
        asm_label=asm,
    )


def parse_header(preprocessed: str) -> Header:
    """Every MPI_ and PMPI_ function declared by preprocessed C text."""
    header = Header()
    lines: list[str] = []
    for line in preprocessed.splitlines():
        if line.lstrip().startswith("#"):
            m = _LINE_MARKER.match(line.strip())
            if m and not m.group(1).startswith("<") and m.group(1) not in header.files:
                header.files.append(m.group(1))
            lines.append("")  # pragmas and markers
            continue
        lines.append(line)
    for statement, body in _statements("\n".join(lines)):
        decl = parse_declaration(statement, body)
        if decl is None:
            continue
        if decl.name.startswith("PMPI_"):
            header.profiling.add(decl.name)
        elif decl.name not in header.functions or body:
            header.functions[decl.name] = decl
    return header


def parse_macros(defines: str) -> set[str]:
    """Names of the macros listed by ``cc -E -dM``."""
    return set(re.findall(r"^\s*#\s*define\s+([A-Za-z_]\w*)", defines, re.MULTILINE))


# ----- hand-written wrappers ------------------------------------------------------------

_HAND_WRITTEN = re.compile(r"^\w[\w\s\*]*\bMPI_(\w+)\s*\(", re.MULTILINE)
_COMMENT = re.compile(r"\s*(?:/\*.*?\*/|//[^\n]*\n)\s*", re.DOTALL)


def scan_hand_written(sources: Iterable[tuple[str, str]]) -> dict[str, str]:
    """MPI functions defined (not merely declared) at column 0 in (path, text) sources:
    {name: path}."""
    found: dict[str, str] = {}
    for path, text in sources:
        for m in _HAND_WRITTEN.finditer(text):
            close = _matching(text, m.end() - 1)
            rest = text[close + 1 :]
            while True:  # comments between ) and {
                c = _COMMENT.match(rest)
                if not c or not c.group().strip():
                    break
                rest = rest[c.end() :]
            if rest.lstrip().startswith("{"):
                found.setdefault("MPI_" + m.group(1), path)
    return found


# ----- exclusions -----------------------------------------------------------------------

# Handle conversions (MPI_Comm_c2f, MPI_Status_f2c, MPI_Request_toint...): often macros or
# inline, some without a PMPI_ symbol, and no communication to observe.
_CONVERSION = re.compile(r"_(?:c2f|f2c|c2f08|f082c|f2f08|f082f|toint|fromint)$")


def exclusion_reason(decl: Declaration, header: Header, macros: set[str]) -> str | None:
    """Why `decl` gets no generated wrapper (None: it gets one)."""
    name = decl.name
    # Variable arguments cannot be forwarded to PMPI_ in C; the only one, MPI_Pcontrol,
    # drives the profiler and is written by hand.
    if decl.varargs:
        return "variable arguments"
    # Clocks: often macros or inline functions, without PMPI_ in some MPIs, and a
    # wrapper would perturb the timer programs use around communication.
    if name in ("MPI_Wtime", "MPI_Wtick"):
        return "clock"
    if _CONVERSION.search(name):
        return "handle conversion"
    # Address arithmetic (may be macros; no communication).
    if name in ("MPI_Aint_add", "MPI_Aint_diff"):
        return "address arithmetic"
    # The tool information interface: no communication, and callable before MPI_Init
    # and after MPI_Finalize, when the runtime is not there.
    if name.startswith("MPI_T_"):
        return "tool interface"
    # A function-like macro of the same name would mangle the wrapper's definition.
    if name in macros or "P" + name in macros:
        return "macro"
    # Defined inline by the header itself: a second definition would not compile.
    if decl.inline_body:
        return "defined by the header"
    if decl.asm_label:
        return "asm label"
    # Nothing to forward to.
    if "P" + name not in header.profiling:
        return "no PMPI_ declaration"
    return None


# ----- transfer-recording wrappers -----------------------------------------------------
#
# A function with a rule below gets a wrapper that records its transfer the way
# docs/method.md ("Where the events go", "Collectives") places it: MOP_WRAP of
# mop_wrap_util.h around the call, the events from mop_wrap_xfer.h. The rule only says
# which shape a function has; where its buffers, counts, datatypes, peers, communicator,
# request and status are is read from the standard's parameter kinds and directions,
# and the types (int or MPI_Count arrays) from the header's own declaration. A function
# without a rule, or whose parameters do not fit its rule, keeps the enter/exit wrapper.

# Point-to-point functions with a transfer rule, by lower-case name without MPI_ and _c.
# Isendrecv(_replace), matched probes, partitioned and generalized requests are special
# cases written by hand (mop_wrap_p2p_special.c).
P2P_TRANSFERS = frozenset(
    {
        "send",
        "ssend",
        "bsend",
        "rsend",
        "recv",
        "sendrecv",
        "sendrecv_replace",
        "isend",
        "issend",
        "ibsend",
        "irsend",
        "irecv",
        "send_init",
        "ssend_init",
        "bsend_init",
        "rsend_init",
        "recv_init",
    }
)

# Element counts of a buffer (MPI_Count in the _c variants).
_COUNT_KINDS = frozenset(
    {"XFER_NUM_ELEM", "XFER_NUM_ELEM_NNI", "POLYXFER_NUM_ELEM", "POLYXFER_NUM_ELEM_NNI"}
)

# A collective's message size (COMMON contract, docs/method.md "Collectives") by stem:
# (shape, group the size is read from, group read on non-root processes). R = the receive
# buffer's group (recvbuf, or bcast's buffer), S = the send buffer's.
_COLL_SIZES: dict[str, tuple[str, str, str]] = {
    "barrier": ("zero", "", ""),
    "bcast": ("block", "R", ""),
    "reduce": ("block", "R", ""),
    "allreduce": ("block", "R", ""),
    "scan": ("block", "R", ""),
    "exscan": ("block", "R", ""),
    "reduce_scatter_block": ("block", "R", ""),
    "allgather": ("block", "R", ""),
    "alltoall": ("block", "R", ""),
    "neighbor_allgather": ("block", "R", ""),
    "neighbor_alltoall": ("block", "R", ""),
    "reduce_scatter": ("mine", "R", ""),
    "gather": ("rooted", "R", "S"),
    "scatter": ("rooted", "S", "R"),
    "gatherv": ("rooted_v", "R", "S"),
    "scatterv": ("rooted_v", "S", "R"),
    "allgatherv": ("v", "R", ""),
    "alltoallv": ("v", "R", ""),
    "alltoallw": ("w", "R", ""),
    "neighbor_allgatherv": ("neighbor_v", "R", ""),
    "neighbor_alltoallv": ("neighbor_v", "R", ""),
    "neighbor_alltoallw": ("neighbor_w", "R", ""),
}

_COLL_OP = re.compile(r'X\(\s*(\w+)\s*,\s*"(\w+)"\s*\)')
COLL_OPS_HEADER = Path(__file__).resolve().parent / "mop_coll_ops.h"

# Locals of MOP_WRAP and of the generated bodies; a parameter of the same name would
# clash with them.
_WRAPPER_LOCALS = frozenset({"th", "t0", "t1", "rc", "mop_own", "mop_st", "mop_n"})


def load_coll_ops(text: str) -> dict[str, str]:
    """The collective ops of mop_coll_ops.h: {stem ("bcast"): op id ("BCAST")}."""
    ops = {name: op for op, name in _COLL_OP.findall(text)}
    if not ops:
        raise GenError('no collective ops (X(ID, "name")) found in mop_coll_ops.h')
    return ops


@dataclass
class BufferGroup:
    """A buffer with the parameters that describe it: the counts and datatypes that
    follow it up to the next buffer, and the ranks (peers, root) in that stretch."""

    direction: str
    counts: list[int] = field(default_factory=list)
    types: list[int] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    tags: list[int] = field(default_factory=list)


def buffer_groups(params: Sequence[StdParam]) -> list[BufferGroup]:
    groups: list[BufferGroup] = []
    for i, p in enumerate(params):
        if p.kind == "BUFFER":
            groups.append(BufferGroup(p.direction))
        elif groups and p.kind in _COUNT_KINDS:
            groups[-1].counts.append(i)
        elif groups and p.kind == "DATATYPE":
            groups[-1].types.append(i)
        elif groups and p.kind == "RANK":
            groups[-1].ranks.append(i)
        elif groups and p.kind == "TAG":
            groups[-1].tags.append(i)
    return groups


@dataclass
class Transfer:
    """What a transfer-recording wrapper adds to the plain call: statements before it
    (our status), the call's arguments when ours differ, and the events it records."""

    setup: list[str]
    call_args: list[str]
    record: list[str]


def _only(params: Sequence[StdParam], kind: str, direction: str | None = None) -> int | None:
    """Index of the one parameter of `kind` (and `direction`); None if not exactly one."""
    found = [
        i
        for i, p in enumerate(params)
        if p.kind == kind and (direction is None or p.direction == direction)
    ]
    return found[0] if len(found) == 1 else None


def _base_name(name: str) -> str:
    base = name[len("MPI_") :].lower()
    return base[: -len("_c")] if base.endswith("_c") else base


def coll_stem(name: str, family: Family) -> str:
    """The collective operation of a (blocking, non-blocking, persistent) collective."""
    base = _base_name(name)
    if family is Family.COLL_NB:
        return base[1:]
    if family is Family.COLL_PERSISTENT:
        return base[: -len("_init")]
    return base


def _p2p_transfer(decl: Declaration, params: Sequence[StdParam]) -> Transfer | None:
    names = [p.name for p in decl.params]
    comm = _only(params, "COMMUNICATOR")
    req = _only(params, "REQUEST", "OUT")
    status = _only(params, "STATUS", "OUT")
    groups = buffer_groups(params)
    if comm is None or not groups:
        return None
    if req is not None:
        event = "MOP_EV_PINIT" if _base_name(decl.name).endswith("_init") else "MOP_EV_BEGIN"
        key = f"mop_key(*{names[req]})"
    else:
        event, key = "MOP_EV_INCALL", "0"
    halves = {"IN": ["SEND"], "OUT": ["RECV"], "INOUT": ["SEND", "RECV"]}
    record: list[str] = []
    own_status = False
    for g in groups:
        if len(g.counts) != 1 or len(g.types) != 1 or g.direction not in halves:
            return None
        if params[g.counts[0]].array or params[g.types[0]].array:
            return None
        count, dt = names[g.counts[0]], names[g.types[0]]
        # A buffer both sent and received (Sendrecv_replace) has its dest, then its source,
        # each followed by its tag.
        for n, kind in enumerate(halves[g.direction]):
            if n >= len(g.ranks) or n >= len(g.tags):
                return None
            peer, tag = names[g.ranks[n]], names[g.tags[n]]
            if kind == "RECV" and event == "MOP_EV_INCALL" and status is not None:
                own_status = True
                record.append(
                    f"mop_recv_incall(th, t0, MOP_FN_{decl.name}, {peer}, mop_st, {count}, "
                    f"{dt}, {names[comm]})"
                )
            else:
                record.append(
                    f"MOP_MESSAGE({event}, {decl.name}, {key}, MOP_KIND_{kind}, {peer}, {tag}, "
                    f"{count}, {dt}, {names[comm]})"
                )
    setup: list[str] = []
    call_args = list(names)
    if own_status and status is not None:
        st = names[status]
        setup = [
            "MPI_Status mop_own;",
            f"MPI_Status *mop_st = {st} == MPI_STATUS_IGNORE ? &mop_own : {st};",
        ]
        call_args[status] = "mop_st"
    return Transfer(setup, call_args, record)


def _coll_bytes(decl: Declaration, params: Sequence[StdParam], stem: str) -> str | None:
    """The C expression of the collective's message size, None if the parameters do not
    have the shape its stem needs."""
    names = [p.name for p in decl.params]
    shape, root_group, other_group = _COLL_SIZES[stem]
    if shape == "zero":
        return "0"
    comm = names[i] if (i := _only(params, "COMMUNICATOR")) is not None else None
    if comm is None:
        return None
    groups = buffer_groups(params)
    send = next((g for g in groups if g.direction == "IN"), None)
    recv = next((g for g in groups if g.direction in ("OUT", "INOUT")), None)
    by_name = {"R": recv, "S": send}

    def scalar(g: BufferGroup | None) -> tuple[str, str] | None:
        if g is None or len(g.counts) != 1 or len(g.types) != 1:
            return None
        if params[g.counts[0]].array or params[g.types[0]].array:
            return None
        return names[g.counts[0]], names[g.types[0]]

    def vector(g: BufferGroup | None, types_array: bool) -> tuple[str, str, str] | None:
        if g is None or len(g.counts) != 1 or len(g.types) != 1:
            return None
        if not params[g.counts[0]].array or params[g.types[0]].array != types_array:
            return None
        large = "MPI_Count" in decl.params[g.counts[0]].text
        return names[g.counts[0]], names[g.types[0]], "_c" if large else ""

    main = by_name[root_group]
    if shape == "block":
        b = scalar(main)
        return f"mop_bytes({b[0]}, {b[1]})" if b else None
    if shape in ("v", "w", "neighbor_v", "neighbor_w", "mine"):
        v = vector(main, shape.endswith("w"))
        if v is None:
            return None
        counts, types, sfx = v
        fn = {"v": "v", "w": "w", "neighbor_v": "neighbor_v", "neighbor_w": "neighbor_w"}
        if shape == "mine":
            return f"mop_coll_mine_bytes{sfx}({comm}, {counts}, {types})"
        first = "mop_n" if shape in ("v", "w") else comm
        return f"mop_coll_{fn[shape]}_bytes{sfx}({first}, {counts}, {types})"
    root = _only(params, "RANK")
    other = scalar(by_name[other_group])
    if root is None or other is None:
        return None
    if shape == "rooted":
        b = scalar(main)
        if b is None:
            return None
        return (
            f"mop_coll_rooted_bytes({comm}, {names[root]}, {b[0]}, {b[1]}, {other[0]}, {other[1]})"
        )
    v = vector(main, False)
    if v is None:
        return None
    return (
        f"mop_coll_rooted_v_bytes{v[2]}({comm}, {names[root]}, mop_n, {v[0]}, {v[1]}, "
        f"{other[0]}, {other[1]})"
    )


def _coll_transfer(
    decl: Declaration, params: Sequence[StdParam], family: Family, op: str, stem: str
) -> Transfer | None:
    names = [p.name for p in decl.params]
    comm = _only(params, "COMMUNICATOR")
    bytes_expr = _coll_bytes(decl, params, stem)
    if comm is None or bytes_expr is None:
        return None
    if family is Family.COLL:
        event, key, kind = "MOP_EV_INCALL", "0", f"MOP_KIND_COLL_OP({op})"
    else:
        req = _only(params, "REQUEST", "OUT")
        if req is None:
            return None
        event = "MOP_EV_BEGIN" if family is Family.COLL_NB else "MOP_EV_PINIT"
        key, kind = f"mop_key(*{names[req]})", f"MOP_KIND_COLL_NB_OP({op})"
    root = _only(params, "RANK")
    root_expr = names[root] if root is not None else "-1"
    record = [
        f"MOP_COLLECTIVE({event}, {decl.name}, {key}, {kind}, {names[comm]}, {root_expr}, "
        f"{bytes_expr})"
    ]
    return Transfer([], list(names), record)


def transfer_rule(
    decl: Declaration, params: Sequence[StdParam] | None, family: Family, ops: dict[str, str]
) -> Transfer | None:
    """The transfer-recording wrapper of `decl`, None when it has no rule (or its
    parameters do not fit it): it then keeps the enter/exit wrapper."""
    if params is None or len(params) != len(decl.params) or decl.ret != "int":
        return None
    if any(p.name in _WRAPPER_LOCALS for p in decl.params):
        return None
    if family in (Family.P2P, Family.PERSISTENT) and _base_name(decl.name) in P2P_TRANSFERS:
        return _p2p_transfer(decl, params)
    if family in (Family.COLL, Family.COLL_NB, Family.COLL_PERSISTENT):
        stem = coll_stem(decl.name, family)
        if stem in ops and stem in _COLL_SIZES:
            return _coll_transfer(decl, params, family, ops[stem], stem)
    return None


def created_comm(decl: Declaration, params: Sequence[StdParam] | None) -> str | None:
    """The name of the communicator a communicator-creating function returns (MPI_Comm_dup,
    _split, _create, MPI_Cart_create, MPI_Intercomm_create, MPI_Comm_spawn...), None for
    other functions. Its wrapper names the new communicator in trace mode
    (mop_comm_created, mop_trace_match.c). MPI_Comm_idup's communicator is not usable
    before its request completes: it is named at its first use instead."""
    if params is None or len(params) != len(decl.params) or decl.ret != "int":
        return None
    if any(p.kind == "REQUEST" and p.direction == "OUT" for p in params):
        return None
    out = [i for i, p in enumerate(params)
           if p.kind == "COMMUNICATOR" and p.direction == "OUT" and not p.array]
    return decl.params[out[0]].name if len(out) == 1 else None


# ----- output ---------------------------------------------------------------------------


@dataclass
class Entry:
    decl: Declaration
    fid: int
    family: Family
    known: bool  # to the standard
    hand_written: str | None  # path
    excluded: str | None  # reason
    transfer: Transfer | None = None  # its generated wrapper records transfers
    creates: str | None = None  # the communicator it creates (a parameter's name)

    @property
    def status(self) -> str:
        if self.hand_written:
            return "hand-written"
        if self.excluded:
            return f"excluded: {self.excluded}"
        return "generated, records transfers" if self.transfer else "generated"


@dataclass
class Plan:
    entries: list[Entry]
    hand_written_undeclared: list[str]
    source: str
    headers: list[str] = field(default_factory=list)  # files the preprocessor read
    standard_version: str = "?"  # of pympistandard

    @property
    def generated(self) -> list[Entry]:
        return [e for e in self.entries if not e.hand_written and not e.excluded]

    def transfers_by_family(self) -> dict[Family, int]:
        """How many generated wrappers record transfers, per family."""
        counts: dict[Family, int] = {}
        for e in self.generated:
            if e.transfer:
                counts[e.family] = counts.get(e.family, 0) + 1
        return counts

    def summary(self) -> str:
        n = len(self.entries)
        m = sum(1 for e in self.entries if e.hand_written)
        k = len(self.generated)
        x = sum(1 for e in self.entries if not e.hand_written and e.excluded)
        unknown = [e.decl.name for e in self.entries if not e.known]
        line = (
            f"gen_wrappers: {n} MPI functions declared, {m} hand-written, {k} generated, "
            f"{x} excluded"
        )
        by_family = self.transfers_by_family()
        if by_family:
            parts = ", ".join(f"{fam.label} {by_family[fam]}" for fam in sorted(by_family))
            line += f"; {sum(by_family.values())} record transfers ({parts})"
        if unknown:
            shown = ", ".join(unknown[:6]) + (", ..." if len(unknown) > 6 else "")
            line += f"; {len(unknown)} not in the MPI standard ({shown})"
        return line


def plan(
    header: Header,
    macros: set[str],
    hand_written: dict[str, str],
    standard: Standard,
    source: str,
    coll_ops: dict[str, str] | None = None,
) -> Plan:
    names = sorted(header.functions)
    if len(names) > MAX_FUNCTIONS:
        raise GenError(
            f"the MPI header declares {len(names)} MPI_ functions; function ids must be below "
            f"{MAX_FUNCTIONS} (raise MAX_FUNCTIONS in gen_wrappers.py and the runtime's tables)"
        )
    ops = load_coll_ops(COLL_OPS_HEADER.read_text()) if coll_ops is None else coll_ops
    entries = []
    for fid, name in enumerate(names):
        decl = header.functions[name]
        params = standard.params(name)
        family = classify(name, params)
        entries.append(
            Entry(
                decl=decl,
                fid=fid,
                family=family,
                known=params is not None,
                hand_written=hand_written.get(name),
                excluded=exclusion_reason(decl, header, macros),
                transfer=transfer_rule(decl, params, family, ops),
                creates=created_comm(decl, params),
            )
        )
    undeclared = sorted(set(hand_written) - set(names))
    source = source.replace("*/", "*\\/")  # it goes into C comments
    return Plan(entries, undeclared, source, list(header.files), standard.version)


_BANNER = "Generated by native/profiler/gen_wrappers.py at build time; do not edit."


def render_ids_header(p: Plan) -> str:
    out = [
        f"/* mop_fn_ids.h - {_BANNER}",
        f" * Functions declared by <mpi.h> as preprocessed by: {p.source}",
        " * MOP_FN_<name>: the function's id (event id field, mop_fn_names index);",
        " * MOP_HAVE_<name>: the header declares it (guard hand-written wrappers of",
        " * functions that not every MPI has, e.g. large-count MPI_*_c). */",
        "#ifndef MOP_FN_IDS_H",
        "#define MOP_FN_IDS_H",
        "",
        f"#define MOP_FN_COUNT {len(p.entries)}",
        "",
    ]
    for e in p.entries:
        out.append(f"#define MOP_FN_{e.decl.name} {e.fid}")
        out.append(f"#define MOP_HAVE_{e.decl.name} 1")
    out += ["", "/* Function families (classified with the MPI standard's parameter kinds). */"]
    out.append("typedef enum mop_family {")
    for fam in Family:
        out.append(f"    MOP_FAMILY_{fam.name} = {int(fam)}, /* {fam.label} */")
    out += [f"    MOP_FAMILY_COUNT = {len(Family)}", "} mop_family;", ""]
    out += [
        "/* Indexed by function id. */",
        "extern const char *const mop_fn_names[MOP_FN_COUNT];",
        "extern const unsigned mop_fn_count;",
        "/* mop_family of each function id. */",
        "extern const unsigned char mop_fn_family[MOP_FN_COUNT];",
        "/* Indexed by mop_family. */",
        "extern const char *const mop_family_names[MOP_FAMILY_COUNT];",
        "",
        "#endif",
        "",
    ]
    return "\n".join(out)


def render_names(p: Plan) -> str:
    out = [f"/* mop_fn_names.c - {_BANNER} */", '#include "mop_fn_ids.h"', ""]
    out.append("const char *const mop_fn_names[MOP_FN_COUNT] = {")
    out += [f'    "{e.decl.name}",' for e in p.entries]
    out += ["};", "", "const unsigned mop_fn_count = MOP_FN_COUNT;", ""]
    out.append("const unsigned char mop_fn_family[MOP_FN_COUNT] = {")
    out += [f"    MOP_FAMILY_{e.family.name}, /* {e.decl.name} */" for e in p.entries]
    out += ["};", "", "const char *const mop_family_names[MOP_FAMILY_COUNT] = {"]
    out += [f'    "{fam.label}",' for fam in Family]
    out += ["};", ""]
    return "\n".join(out)


def sets_errhandler(name: str) -> bool:
    """Whether the function sets an error handler: from then on the waits make no tests
    before waiting (mop_idle.h says why)."""
    return name.endswith("_set_errhandler") or name == "MPI_Errhandler_set"


# Blocking receives and probes that first work on the profiler's queue while no
# matching message is there (mop_idle.h): the call then waits, and the work would
# otherwise be on the program's path. Not MPI_Sendrecv: its peer may be waiting for its
# send. (MPI_Mprobe is written by hand.)
IDLE_PROBE = {"MPI_Recv", "MPI_Recv_c", "MPI_Probe"}


def render_transfer(d: Declaration, t: Transfer) -> list[str]:
    """The body of a transfer-recording wrapper: MOP_WRAP(name, the caller's call, our
    call, the events)."""
    indent = " " * len("    MOP_WRAP(")
    caller = ", ".join(prm.name for prm in d.params)
    ours = ", ".join(t.call_args)
    lines = [f"    {stmt}" for stmt in t.setup]
    lines.append(f"    MOP_WRAP({d.name}, P{d.name}({caller}),")
    if d.name in IDLE_PROBE:
        lines.append(f"{indent}(mop_idle_until_message(th, source, tag, comm), "
                     f"P{d.name}({ours})),")
    else:
        lines.append(f"{indent}P{d.name}({ours}),")
    record = f";\n{indent}".join(t.record)
    lines.append(f"{indent}{record})")
    return lines


def render_wrappers(p: Plan) -> str:
    width = max((len(e.decl.name) for e in p.entries), default=8)
    out = [
        f"/* mop_wrap_generated.c - {_BANNER}",
        f" * <mpi.h> as preprocessed by: {p.source}",
        " *",
        " * Wrappers of the MPI functions not written by hand (native/profiler/mop_wrap_*.c):",
        " * those with a transfer rule (point-to-point messages, collectives) record their",
        " * transfers with MOP_WRAP and mop_wrap_xfer.h; the others bracket the call with",
        " * enter/exit events.",
        *textwrap.wrap(p.summary(), 88, initial_indent=" * ", subsequent_indent=" *   "),
        " *",
        f" * Functions by family (pympistandard {p.standard_version}; * = not in the standard):",
    ]
    for fam in Family:
        members = [e for e in p.entries if e.family is fam]
        if not members:
            continue
        out.append(" *")
        out.append(f" * {fam.label} ({len(members)})")
        for e in members:
            mark = " " if e.known else "*"
            out.append(f" *   {mark}{e.decl.name:<{width}}  {e.status}")
    if p.hand_written_undeclared:
        out.append(" *")
        out.append(" * hand-written, not declared by this header (guard with MOP_HAVE_*):")
        out += [f" *    {name}" for name in p.hand_written_undeclared]
    out += [
        " */",
        "#include <mpi.h>",
        "",
        '#include "mop_fn_ids.h"',
        '#include "mop_runtime.h"',
        '#include "mop_idle.h"',
        '#include "mop_wrap_xfer.h"',
    ]
    for e in p.generated:
        d = e.decl
        args = ", ".join(prm.name for prm in d.params)
        if e.transfer:
            out += ["", d.prototype, "{", *render_transfer(d, e.transfer), "}"]
            continue
        out += ["", d.prototype, "{", f"    MOP_CALL_BEGIN({d.name})"]
        if d.name in IDLE_PROBE:
            out += ["    if (mop_th_)",
                    "        mop_idle_until_message(mop_th_, source, tag, comm);"]
        if d.ret == "void":
            out += [f"    P{d.name}({args});", "    MOP_CALL_END()", "}"]
        else:
            out.append(f"    {d.ret} mop_rc_ = P{d.name}({args});")
            if e.creates:  # named inside the call: its cost is MPI time
                out.append(f"    mop_comm_created(mop_rc_, *{e.creates});")
            if sets_errhandler(d.name):
                out.append("    mop_idle_waits_off();")
            out += ["    MOP_CALL_END()", "    return mop_rc_;", "}"]
    out.append("")
    return "\n".join(out)


def write_if_changed(path: Path, text: str) -> None:
    """Leave an unchanged output alone so that nothing recompiles for it."""
    if path.is_file() and path.read_text() == text:
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _depfile_escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")


def write_depfile(depfile: Path, target: Path, deps: Iterable[str]) -> None:
    """A Make-style depfile; files that no longer exist (the preprocessor's temporary
    input) are left out, or the build would consider the outputs always stale."""
    paths = dict.fromkeys(str(Path(d).resolve()) for d in deps if Path(d).is_file())
    body = " \\\n  ".join(_depfile_escape(p) for p in paths)
    write_if_changed(depfile, f"{_depfile_escape(str(target))}: \\\n  {body}\n")


# ----- driver ---------------------------------------------------------------------------


def preprocess(cc: Sequence[str]) -> tuple[str, str]:
    """(preprocessed text, macro definitions) of ``#include <mpi.h>`` by command `cc`."""
    with tempfile.TemporaryDirectory(prefix="mop-gen-") as tmp:
        src = Path(tmp) / "mop_mpi_h.c"
        src.write_text("#include <mpi.h>\n")
        results = []
        for extra in (["-E"], ["-E", "-dM"]):
            cmd = [*cc, *extra, str(src)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            except OSError as err:
                raise GenError(f"cannot run the C preprocessor {cc[0]}: {err}") from None
            if proc.returncode != 0:
                raise GenError(
                    f"preprocessing <mpi.h> failed ({' '.join(cmd)}):\n{proc.stderr.strip()}"
                )
            results.append(proc.stdout)
    return results[0], results[1]


def generate(
    out_dir: Path,
    preprocessed: str,
    macros_text: str,
    hand_written_files: Sequence[Path],
    source: str,
    standard: Standard | None = None,
) -> Plan:
    """Parse, classify and write the three outputs; returns the plan."""
    header = parse_header(preprocessed)
    if "MPI_Send" not in header.functions:
        raise GenError(f"no MPI_Send declaration found in <mpi.h> as preprocessed by {source}")
    hand = scan_hand_written((str(f), f.read_text()) for f in hand_written_files)
    the_plan = plan(header, parse_macros(macros_text), hand, standard or Standard.load(), source)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_if_changed(out_dir / "mop_fn_ids.h", render_ids_header(the_plan))
    write_if_changed(out_dir / "mop_fn_names.c", render_names(the_plan))
    write_if_changed(out_dir / "mop_wrap_generated.c", render_wrappers(the_plan))
    return the_plan


def split_compiler(args: list[str]) -> tuple[list[str], list[str]]:
    """The generator's own arguments and the C compiler command after `--`."""
    if "--" not in args:
        return args, []
    cut = args.index("--")
    return args[:cut], [a for a in args[cut + 1 :] if a]


def add_header_options(ap: argparse.ArgumentParser) -> None:
    """Options shared by the generators (this one and gen_fortran.py): where mpi.h comes from."""
    ap.add_argument("--depfile", type=Path, help="write a Make-style depfile of what was read")
    ap.add_argument("--preprocessed", type=Path, help="read this instead of running CC -E")
    ap.add_argument("--macros", type=Path, help="with --preprocessed: output of CC -E -dM")
    ap.add_argument("--quiet", action="store_true")


def read_header(ns: argparse.Namespace, cc: Sequence[str]) -> tuple[str, str, str]:
    """(preprocessed mpi.h, its macros, where it came from) per add_header_options."""
    if ns.preprocessed:
        macros = ns.macros.read_text() if ns.macros else ""
        return ns.preprocessed.read_text(), macros, str(ns.preprocessed)
    if cc:
        text, macros = preprocess(cc)
        return text, macros, " ".join(cc)
    raise GenError("give the C compiler command after --, or --preprocessed FILE")


def main(argv: Sequence[str] | None = None) -> int:
    args, cc = split_compiler(list(sys.argv[1:] if argv is None else argv))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", type=Path, required=True)
    ap.add_argument("--hand-written", type=Path, nargs="*", default=[])
    add_header_options(ap)
    ns = ap.parse_args(args)
    try:
        text, macros, source = read_header(ns, cc)
        result = generate(ns.out_dir, text, macros, ns.hand_written, source)
        if ns.depfile:
            deps = [*result.headers, *map(str, ns.hand_written), __file__, str(COLL_OPS_HEADER)]
            write_depfile(ns.depfile, (ns.out_dir / GENERATED_FILES[0]).resolve(), deps)
    except GenError as err:
        print(f"gen_wrappers: error: {err}", file=sys.stderr)
        return 1
    if not ns.quiet:
        print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
