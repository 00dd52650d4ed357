"""Datatype layouts in a trace (version 3; native/profiler/mop_trace_dtype.c, docs/profiler.md,
"Datatype layouts"): each non-contiguous datatype a message used, as its constructor tree,
and what that tree lays out in memory: the contiguous blocks of one element.

The tree is MPI_Type_get_envelope / MPI_Type_get_contents' answer, node by node, depth
first; a node's kind is the trace's own number (KINDS), since MPI's combiner constants
differ between MPIs. Blocks follow the standard's type maps for the constructors below;
a darray, a Fortran-90 parameterised type or an unknown constructor leaves them unknown.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ...core.sizes import format_size

# mop_dtype_node (mop_trace_dtype.c)
KINDS = {0: "named", 1: "dup", 2: "contiguous", 3: "vector", 4: "hvector", 5: "indexed",
         6: "hindexed", 7: "indexed_block", 8: "hindexed_block", 9: "struct", 10: "subarray",
         11: "darray", 12: "resized", 99: "other"}
HEAD = struct.Struct("<IIII qqqq")  # id, flags, n values, name bytes, size, extent, true lb/extent
FLAG_CUT = 1
# Flattening stops past this many blocks in one element (a layout that large is named
# by its tree alone).
MAX_BLOCKS = 1 << 16


@dataclass
class Node:
    kind: str
    ints: tuple[int, ...] = ()
    addrs: tuple[int, ...] = ()
    children: list[Node] = field(default_factory=list)
    size: int = 0  # named: its size
    name: str = ""  # named: its name (MPI_Type_get_name)


@dataclass
class Layout:
    """One datatype as a trace recorded it: its size, extent and true extent (bytes), its
    tree (None where it was cut short), and its element's contiguous blocks as (offset,
    length) from the true lower bound (None where they are not known)."""

    ident: int
    size: int
    extent: int
    true_lb: int
    true_extent: int
    tree: Node | None
    blocks: list[tuple[int, int]] | None
    # the record's tree and names as written (a probe builds the datatype again from them)
    values: tuple[int, ...] = ()
    names: tuple[str, ...] = ()

    def words(self) -> str:
        """e.g. "subarray of MPI_DOUBLE: 4,096 block(s) of 8 B in 32 KiB (extent 296208 B)"."""
        what = _shape(self.tree) if self.tree is not None else "a datatype (its tree cut short)"
        if self.blocks is None:
            pieces = "blocks not known"
        else:
            lengths = {n for _, n in self.blocks}
            each = (f"of {format_size(lengths.pop())}" if len(lengths) == 1
                    else f"of {format_size(min(lengths))} to {format_size(max(lengths))}")
            pieces = f"{len(self.blocks):,} block(s) {each}"
        return (f"{what}: {pieces} in {format_size(self.size)} "
                f"(extent {format_size(self.extent)})")


def _shape(node: Node) -> str:
    """The constructors down to the predefined type: "vector of subarray of MPI_DOUBLE"."""
    kinds = []
    while node.kind != "named":
        kinds.append(node.kind)
        if len(node.children) != 1:
            return " of ".join(kinds) + (f" of {len(node.children)} types" if node.children
                                         else "")
        node = node.children[0]
    return " of ".join([*kinds, node.name or f"a {node.size}-byte type"])


def parse_record(payload: bytes) -> Layout:
    """One DTYPES record (ValueError where it does not hold together)."""
    ident, flags, n, name_bytes, size, extent, true_lb, true_extent = HEAD.unpack_from(payload)
    need = HEAD.size + 8 * n + ((name_bytes + 7) & ~7)
    if need != len(payload):
        raise ValueError(f"a datatype record of {len(payload)} bytes where {need} are needed")
    values = struct.unpack_from(f"<{n}q", payload, HEAD.size)
    raw = bytes(payload[HEAD.size + 8 * n:HEAD.size + 8 * n + name_bytes])
    names = [s.decode("utf-8", "replace") for s in raw.split(b"\0")[:-1]] if raw else []
    tree = None
    if not flags & FLAG_CUT:
        tree, pos, _ = _node(values, 0, names, 0)
        if pos != len(values):
            raise ValueError("a datatype tree with values left over")
    return Layout(ident, size, extent, true_lb, true_extent, tree,
                  _element_blocks(tree, true_lb) if tree is not None else None,
                  tuple(values) if tree is not None else (), tuple(names))


def _node(v: tuple[int, ...], pos: int, names: list[str], named: int) -> tuple[Node, int, int]:
    """The node at v[pos], its end and the count of named nodes read so far."""
    kind = KINDS.get(v[pos], "other")
    if kind == "named":
        return Node(kind, size=v[pos + 1], name=names[named] if named < len(names) else ""), \
            pos + 2, named + 1
    ni, na, nd = v[pos + 1:pos + 4]
    pos += 4
    node = Node(kind, tuple(v[pos:pos + ni]), tuple(v[pos + ni:pos + ni + na]))
    pos += ni + na
    for _ in range(nd):
        child, pos, named = _node(v, pos, names, named)
        node.children.append(child)
    return node, pos, named


# ----- what a tree lays out (MPI 4.1 §5.1: type maps) ---------------------------------------

class _Unknown(Exception):
    """A constructor whose type map is not worked out here, or one too large."""


def _element_blocks(tree: Node, true_lb: int) -> list[tuple[int, int]] | None:
    try:
        pieces, _, _ = _map(tree)
    except _Unknown:
        return None
    return _merged([(off - true_lb, n) for off, n in pieces])


def _merged(pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for off, n in sorted(p for p in pieces if p[1] > 0):
        if out and out[-1][0] + out[-1][1] == off:
            out[-1] = (out[-1][0], out[-1][1] + n)
        else:
            out.append((off, n))
    return out


def _shifted(pieces: list[tuple[int, int]], by: int) -> list[tuple[int, int]]:
    return [(off + by, n) for off, n in pieces]


def _repeat(pieces: list[tuple[int, int]], shifts: list[int]) -> list[tuple[int, int]]:
    if len(pieces) * len(shifts) > MAX_BLOCKS:
        raise _Unknown
    return [p for s in shifts for p in _shifted(pieces, s)]


def _map(node: Node) -> tuple[list[tuple[int, int]], int, int]:
    """(offset, length) pieces of one element, its lower bound and its extent."""
    k, i, a = node.kind, node.ints, node.addrs
    if k == "named":
        return [(0, node.size)], 0, node.size
    if k in ("other", "darray") or not node.children:
        raise _Unknown
    if k == "struct":
        count = i[0]
        out: list[tuple[int, int]] = []
        lo, hi = None, None
        for j in range(count):
            p, lb, ext = _map(node.children[j])
            shifts = [a[j] + b * ext for b in range(i[1 + j])]
            out += _repeat(p, shifts)
            if i[1 + j]:
                lo = min(x for x in (lo, a[j] + lb) if x is not None)
                hi = max(x for x in (hi, a[j] + lb + i[1 + j] * ext) if x is not None)
        return out, lo or 0, (hi or 0) - (lo or 0)
    p, lb, ext = _map(node.children[0])
    if k == "dup":
        return p, lb, ext
    if k == "resized":
        return p, a[0], a[1]
    if k == "contiguous":
        shifts = [j * ext for j in range(i[0])]
    elif k == "vector":
        shifts = [(j * i[2] + b) * ext for j in range(i[0]) for b in range(i[1])]
    elif k == "hvector":
        shifts = [j * a[0] + b * ext for j in range(i[0]) for b in range(i[1])]
    elif k == "indexed":
        count = i[0]
        shifts = [(i[1 + count + j] + b) * ext for j in range(count) for b in range(i[1 + j])]
    elif k == "hindexed":
        count = i[0]
        shifts = [a[j] + b * ext for j in range(count) for b in range(i[1 + j])]
    elif k == "indexed_block":
        shifts = [(d + b) * ext for d in i[2:2 + i[0]] for b in range(i[1])]
    elif k == "hindexed_block":
        shifts = [d + b * ext for d in a[:i[0]] for b in range(i[1])]
    elif k == "subarray":
        return _subarray(i, p, ext)
    else:
        raise _Unknown
    if len(shifts) * len(p) > MAX_BLOCKS:
        raise _Unknown
    out = _repeat(p, shifts)
    lo = min((s + lb for s in shifts), default=0)
    hi = max((s + lb + ext for s in shifts), default=0)
    return out, lo, hi - lo


def _subarray(i: tuple[int, ...], p: list[tuple[int, int]],
              ext: int) -> tuple[list[tuple[int, int]], int, int]:
    """MPI_Type_create_subarray: ints are ndims, sizes, subsizes, starts and the order
    (0 C, 1 Fortran: the trace's own); lower bound 0, extent the whole array's."""
    n = i[0]
    sizes, subs, starts = i[1:1 + n], i[1 + n:1 + 2 * n], i[1 + 2 * n:1 + 3 * n]
    dims = range(n) if i[1 + 3 * n] == 0 else range(n - 1, -1, -1)  # slowest first
    order = list(dims)
    stride = [0] * n
    acc = ext
    for d in reversed(order):  # the fastest dimension's stride is one element
        stride[d] = acc
        acc *= sizes[d]
    shifts = [0]
    for d in order:
        if len(shifts) * subs[d] > MAX_BLOCKS:
            raise _Unknown
        shifts = [s + (starts[d] + x) * stride[d] for s in shifts for x in range(subs[d])]
    return _repeat(p, shifts), 0, acc
