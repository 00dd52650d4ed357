"""The two things the profiler reads from ELF files, with struct: the PT_LOAD segments
(callsites.py: where an address lies in its file) and the dynamic section's DT_NEEDED,
DT_RUNPATH and DT_RPATH (program_abi.py: which MPI a program is linked with).

pyelftools read both; its import (0.1–0.3 s, pdb among what it imports) was a good part
of what `profile` may add to its program (issue 38). The layouts are the System V gABI's
("ELF header", "Program header", "Sections", "Dynamic section"): 32 and 64 bits, either
byte order, the extended counts of e_phnum and e_shnum in section 0.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO

PT_LOAD = 1
SHT_DYNAMIC = 6
DT_NULL, DT_NEEDED, DT_RPATH, DT_RUNPATH = 0, 1, 15, 29
PN_XNUM = 0xFFFF
_MAX_ENTRIES = 1 << 16  # headers or dynamic entries read from one file: a bound


class NotElf(ValueError):
    """The file is not ELF, or not ELF that can be read (truncated, inconsistent)."""


@dataclass(frozen=True)
class _Header:
    order: str  # "<" little-endian, ">" big
    wide: bool  # ELFCLASS64
    phoff: int
    phentsize: int
    phnum: int
    shoff: int
    shentsize: int
    shnum: int


def _read(f: BinaryIO, offset: int, size: int) -> bytes:
    f.seek(offset)
    data = f.read(size)
    if len(data) != size:
        raise NotElf("truncated")
    return data


def _section_format(h: _Header) -> str:
    # sh_name sh_type sh_flags sh_addr sh_offset sh_size sh_link sh_info sh_addralign
    # sh_entsize
    return h.order + ("IIQQQQIIQQ" if h.wide else "IIIIIIIIII")


def _section0(f: BinaryIO, h: _Header) -> tuple[int, int]:
    """(sh_size, sh_info) of section 0, where the extended counts are kept."""
    fmt = _section_format(h)
    fields = struct.unpack(fmt, _read(f, h.shoff, struct.calcsize(fmt)))
    return fields[5], fields[7]


def _header(f: BinaryIO) -> _Header:
    ident = f.read(16)
    if len(ident) < 16 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) \
            or ident[5] not in (1, 2):
        raise NotElf("no ELF header")
    order, wide = ("<" if ident[5] == 1 else ">"), ident[4] == 2
    # e_type e_machine e_version e_entry e_phoff e_shoff e_flags e_ehsize e_phentsize
    # e_phnum e_shentsize e_shnum e_shstrndx
    fmt = order + ("HHIQQQIHHHHHH" if wide else "HHIIIIIHHHHHH")
    fields = struct.unpack(fmt, _read(f, 16, struct.calcsize(fmt)))
    h = _Header(order, wide, phoff=fields[4], phentsize=fields[8], phnum=fields[9],
                shoff=fields[5], shentsize=fields[10], shnum=fields[11])
    if h.shoff and (h.shnum == 0 or h.phnum == PN_XNUM):
        size, info = _section0(f, h)
        h = _Header(order, wide, h.phoff, h.phentsize, info if h.phnum == PN_XNUM else h.phnum,
                    h.shoff, h.shentsize, h.shnum or size)
    if h.phnum > _MAX_ENTRIES or h.shnum > _MAX_ENTRIES:
        raise NotElf("too many headers")
    return h


def _entries(f: BinaryIO, offset: int, count: int, stride: int,
             fmt: str) -> list[tuple[int, ...]]:
    size = struct.calcsize(fmt)
    if count and stride < size:
        raise NotElf("header entries smaller than their layout")
    table = _read(f, offset, stride * count) if count else b""
    return [struct.unpack_from(fmt, table, i * stride) for i in range(count)]


def load_segments(path: str) -> list[tuple[int, int, int]] | None:
    """(p_offset, p_filesz, p_vaddr) of the PT_LOAD segments; None when the file cannot be
    read as ELF."""
    try:
        with open(path, "rb") as f:
            h = _header(f)
            if h.wide:  # p_type p_flags p_offset p_vaddr p_paddr p_filesz p_memsz p_align
                rows = _entries(f, h.phoff, h.phnum, h.phentsize, h.order + "IIQQQQQQ")
                return [(r[2], r[5], r[3]) for r in rows if r[0] == PT_LOAD]
            # p_type p_offset p_vaddr p_paddr p_filesz p_memsz p_flags p_align
            rows = _entries(f, h.phoff, h.phnum, h.phentsize, h.order + "IIIIIIII")
            return [(r[1], r[4], r[2]) for r in rows if r[0] == PT_LOAD]
    except (OSError, NotElf, struct.error):
        return None


def _string(table: bytes, index: int) -> str:
    end = table.find(b"\0", index)
    if index >= len(table) or end < 0:
        raise NotElf("a dynamic string outside its table")
    return table[index:end].decode("utf-8", "replace")


def dynamic_strings(path: str) -> dict[int, list[str]] | None:
    """The string entries DT_NEEDED, DT_RPATH and DT_RUNPATH of every SHT_DYNAMIC section
    (its strings in the section sh_link names), in file order, by tag; None when the file
    cannot be read as ELF."""
    wanted = (DT_NEEDED, DT_RPATH, DT_RUNPATH)
    found: dict[int, list[str]] = {tag: [] for tag in wanted}
    try:
        with open(path, "rb") as f:
            h = _header(f)
            sections = _entries(f, h.shoff, h.shnum if h.shoff else 0, h.shentsize,
                                _section_format(h))
            dyn_fmt = h.order + ("qQ" if h.wide else "iI")
            dyn_size = struct.calcsize(dyn_fmt)
            for s in sections:
                if s[1] != SHT_DYNAMIC or not 0 <= s[6] < len(sections):
                    continue
                strtab = sections[s[6]]
                strings = _read(f, strtab[4], strtab[5])
                count = min(s[5] // dyn_size, _MAX_ENTRIES)
                for tag, value in _entries(f, s[4], count, dyn_size, dyn_fmt):
                    if tag == DT_NULL:
                        break
                    if tag in found:
                        found[tag].append(_string(strings, value))
    except (OSError, NotElf, struct.error):
        return None
    return found
