"""profile/run/elf_read.py reads what pyelftools read for the profiler (issue 38: its import
left `profile`'s start-up): the PT_LOAD segments and the dynamic section's DT_NEEDED,
DT_RPATH and DT_RUNPATH, of real files on this machine and of small files made here in
each ELF class and byte order."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

from mpi_overlap.profile.run.elf_read import (
    DT_NEEDED,
    DT_RPATH,
    DT_RUNPATH,
    dynamic_strings,
    load_segments,
)


def _pyelftools(path: str) -> tuple[list[tuple[int, int, int]], dict[int, list[str]]]:
    with open(path, "rb") as f:
        elf = ELFFile(f)
        segments = [(s["p_offset"], s["p_filesz"], s["p_vaddr"]) for s in elf.iter_segments()
                    if s["p_type"] == "PT_LOAD"]
        tags: dict[int, list[str]] = {DT_NEEDED: [], DT_RPATH: [], DT_RUNPATH: []}
        for section in elf.iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    name = tag.entry.d_tag
                    if name == "DT_NEEDED":
                        tags[DT_NEEDED].append(tag.needed)
                    elif name == "DT_RPATH":
                        tags[DT_RPATH].append(tag.rpath)
                    elif name == "DT_RUNPATH":
                        tags[DT_RUNPATH].append(tag.runpath)
    return segments, tags


def _real_files() -> list[str]:
    candidates = [Path(sys.executable).resolve(), Path("/bin/sh").resolve(),
                  *sorted(Path("/usr/lib/x86_64-linux-gnu").glob("libc.so*")),
                  *sorted(Path("/usr/lib/x86_64-linux-gnu").glob("libm.so*"))]
    return [str(p) for p in candidates if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]


@pytest.mark.parametrize("path", _real_files())
def test_real_files_read_as_pyelftools_reads_them(path: str) -> None:
    segments, tags = _pyelftools(path)
    assert load_segments(path) == segments and segments
    assert dynamic_strings(path) == tags


def _make_elf(path: Path, *, wide: bool, order: str) -> None:
    """An ELF file with one PT_LOAD segment and a dynamic section (two DT_NEEDED, a
    DT_RUNPATH, a DT_RPATH) whose strings are in the section its sh_link names."""
    strings = b"\0libmpi.so.12\0libm.so.6\0$ORIGIN/../lib:/opt/x\0/old\0"
    idx = {s: strings.index(s.encode() + b"\0") for s in
           ("libmpi.so.12", "libm.so.6", "$ORIGIN/../lib:/opt/x", "/old")}
    dyn_fmt = order + ("qQ" if wide else "iI")
    dynamic = b"".join(struct.pack(dyn_fmt, t, v) for t, v in (
        (DT_NEEDED, idx["libmpi.so.12"]), (5, 0), (DT_RUNPATH, idx["$ORIGIN/../lib:/opt/x"]),
        (DT_NEEDED, idx["libm.so.6"]), (DT_RPATH, idx["/old"]), (0, 0), (DT_NEEDED, 0)))
    eh = 64 if wide else 52
    ph_fmt = order + ("IIQQQQQQ" if wide else "IIIIIIII")
    sh_fmt = order + ("IIQQQQIIQQ" if wide else "IIIIIIIIII")
    phoff = eh
    str_off = phoff + struct.calcsize(ph_fmt)
    dyn_off = str_off + len(strings)
    shoff = dyn_off + len(dynamic)
    if wide:  # p_type p_flags p_offset p_vaddr p_paddr p_filesz p_memsz p_align
        ph = struct.pack(ph_fmt, 1, 5, 0, 0x400000, 0x400000, shoff, shoff, 0x1000)
    else:  # p_type p_offset p_vaddr p_paddr p_filesz p_memsz p_flags p_align
        ph = struct.pack(ph_fmt, 1, 0, 0x8048000, 0x8048000, shoff, shoff, 5, 0x1000)
    sections = b"".join((
        struct.pack(sh_fmt, *[0] * 10),
        struct.pack(sh_fmt, 0, 3, 2, 0, str_off, len(strings), 0, 0, 1, 0),  # .dynstr
        struct.pack(sh_fmt, 0, 6, 3, 0, dyn_off, len(dynamic), 1, 0, 8,
                    struct.calcsize(dyn_fmt)),  # .dynamic, strings in section 1
    ))
    ident = b"\x7fELF" + bytes([2 if wide else 1, 1 if order == "<" else 2, 1]) + bytes(9)
    header = ident + struct.pack(order + ("HHIQQQIHHHHHH" if wide else "HHIIIIIHHHHHH"),
                                 3, 62 if wide else 3, 1, 0, phoff, shoff, 0, eh,
                                 struct.calcsize(ph_fmt), 1, struct.calcsize(sh_fmt), 3, 0)
    path.write_bytes(header + ph + strings + dynamic + sections)


@pytest.mark.parametrize("wide", [True, False])
@pytest.mark.parametrize("order", ["<", ">"])
def test_each_class_and_byte_order(tmp_path: Path, wide: bool, order: str) -> None:
    path = tmp_path / "prog"
    _make_elf(path, wide=wide, order=order)
    segments, tags = _pyelftools(str(path))
    assert load_segments(str(path)) == segments
    assert dynamic_strings(str(path)) == tags == {
        DT_NEEDED: ["libmpi.so.12", "libm.so.6"], DT_RPATH: ["/old"],
        DT_RUNPATH: ["$ORIGIN/../lib:/opt/x"]}  # nothing after DT_NULL


def test_what_is_not_elf_or_is_cut_short_is_none(tmp_path: Path) -> None:
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\necho hi\n")
    assert load_segments(str(script)) is None and dynamic_strings(str(script)) is None
    assert load_segments(str(tmp_path / "absent")) is None
    whole = tmp_path / "whole"
    _make_elf(whole, wide=True, order="<")
    cut = tmp_path / "cut"
    cut.write_bytes(whole.read_bytes()[:200])  # the section headers are past the end
    assert dynamic_strings(str(cut)) is None
