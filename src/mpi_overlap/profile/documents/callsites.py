"""Call sites to source lines (docs/profiler.md, "Call sites").

Each rank's profile records its MPI calls' return addresses ("sites") and the process's
executable file mappings at the time it wrote ("maps"). Here, on the machine that ran the
program, an address becomes a place in the source:

1. the mapping that holds it gives the object file and the file offset
   (offset = address − mapping start + mapping offset);
2. that object's PT_LOAD segment holding the offset gives its ELF virtual address
   (vaddr = offset − p_offset + p_vaddr; elf_read.py reads the program headers), which is
   the address its debug information speaks of, PIE executables and shared libraries
   alike;
3. vaddr − 1 (inside the call instruction: the return address is the one after it)
   becomes function, file and line with binutils' `addr2line -f -C`, one process per
   object. Without debug information addr2line still names the function from the symbol
   table; without addr2line the site stays object + offset, and the note says why.

The result is written into the rank documents of result.json (each site gains `object`,
`vaddr`, `function`, `file`, `line` and `label`), so later analyses need neither the
binaries nor this machine.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..run.elf_read import load_segments

ADDR2LINE = "addr2line"
ADDR2LINE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Mapping:
    start: int
    end: int
    offset: int
    path: str


@dataclass
class Place:
    obj: str | None = None
    vaddr: int | None = None
    function: str | None = None
    file: str | None = None
    line: int | None = None

    def label(self, addr: int | None) -> str:
        """'halo.c:42 (exchange)', 'exchange in app', 'libfoo.so+0x1234', or the address."""
        where = Path(self.obj).name if self.obj else None
        if self.file and self.line:
            fn = f" ({self.function})" if self.function else ""
            return f"{Path(self.file).name}:{self.line}{fn}"
        if self.function and where:
            return f"{self.function} in {where}"
        if where and self.vaddr is not None:
            return f"{where}+{self.vaddr:#x}"
        return f"{addr:#x}" if addr else "unknown"


def _hex(value: Any) -> int | None:
    try:
        return int(str(value), 16)
    except ValueError:
        return None


def mappings(doc: dict[str, Any]) -> list[Mapping]:
    out = []
    for m in doc.get("maps") or []:
        start, end, off = _hex(m.get("start")), _hex(m.get("end")), _hex(m.get("offset"))
        if None not in (start, end, off) and isinstance(m.get("path"), str):
            out.append(Mapping(start, end, off, m["path"]))  # type: ignore[arg-type]
    return out


def _vaddr(addr: int, maps: list[Mapping], segments: dict[str, Any]) -> tuple[str, int] | None:
    for m in maps:
        if m.start <= addr < m.end:
            return _vaddr_in(m.path, addr - m.start + m.offset, segments)
    return None


def _vaddr_in(path: str, off: int, segments: dict[str, Any]) -> tuple[str, int] | None:
    """(path, ELF virtual address) of a file offset in an object (step 2 above)."""
    if path not in segments:
        segments[path] = load_segments(path)
    segs = segments[path]
    for p_off, p_size, p_vaddr in segs or []:
        if p_off <= off < p_off + p_size:
            return path, off - p_off + p_vaddr
    return None


Found = tuple[str | None, str | None, int | None]  # function, file, line


def _addr2line(obj: str, vaddrs: list[int], tool: str) -> list[Found]:
    """(function, file, line) for each address of one object (call instruction = vaddr − 1)."""
    args = [tool, "-f", "-C", "-e", obj] + [f"{max(v - 1, 0):#x}" for v in vaddrs]
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=ADDR2LINE_TIMEOUT_S,
                             check=False).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        return [(None, None, None)] * len(vaddrs)
    res = []
    for i in range(len(vaddrs)):
        fn = out[2 * i] if 2 * i < len(out) else "??"
        loc = out[2 * i + 1] if 2 * i + 1 < len(out) else "??:0"
        file, _, line = loc.partition(" (discriminator")[0].rpartition(":")
        lineno = int(line) if line.isdigit() and int(line) > 0 else None
        res.append((None if fn == "??" else fn, None if file in ("", "??") else file, lineno))
    return res


def addresses(site: dict[str, Any]) -> list[int]:
    """The addresses naming a site: its chain's frames, innermost first (--callsite-depth),
    or its return address; [] for the unknown site."""
    frames = [a for a in (_hex(f) for f in site.get("frames") or []) if a is not None]
    if frames:
        return frames
    addr = _hex(site.get("addr")) if site.get("addr") else None
    return [addr] if addr is not None else []


class Resolver:
    """Resolves the call sites of a job's rank documents, one at a time, sharing what it
    found between them: each object's load segments are read once, and each (object,
    virtual address) goes to addr2line once. The ranks of a job mostly run one binary,
    whose sites have the same virtual addresses whatever ASLR did to each process, so
    after the first rank's document the others need no addr2line at all (one process per
    object and rank before: thousands of processes for thousands of ranks)."""

    def __init__(self, tool: str | None = None) -> None:
        self.tool = tool if tool is not None else (shutil.which(ADDR2LINE) or "")
        self._segments: dict[str, Any] = {}
        self._found: dict[tuple[str, int], Found] = {}

    def _places(self, addresses: set[int], maps: list[Mapping]) -> dict[int, Place]:
        """Every address's place: object and virtual address, then function, file and
        line (addr2line for the (object, address) pairs not seen before, one run per
        object)."""
        places: dict[int, Place] = {}
        hits = []
        for addr in sorted(addresses):
            place = places[addr] = Place()
            hit = _vaddr(addr, maps, self._segments)
            if hit:
                place.obj, place.vaddr = hit
                hits.append(hit)
        self._found_for(hits)
        for place in places.values():
            if place.obj is not None and place.vaddr is not None:
                place.function, place.file, place.line = self._found.get(
                    (place.obj, place.vaddr), (None, None, None))
        return places

    def _found_for(self, hits: list[tuple[str, int]]) -> None:
        """addr2line for the (object, virtual address) pairs not seen before."""
        new: dict[str, set[int]] = {}
        for obj, vaddr in hits:
            if (obj, vaddr) not in self._found:
                new.setdefault(obj, set()).add(vaddr)
        if self.tool:
            for obj, vaddrs in new.items():
                ordered = sorted(vaddrs)
                for v, found in zip(ordered, _addr2line(obj, ordered, self.tool), strict=True):
                    self._found[(obj, v)] = found

    def labels_of(self, wheres: set[str]) -> tuple[dict[str, str], int]:
        """The label of each place the job's statistics name ("<path>+0x<offset>" frames
        joined by " < ": profile/documents/job_sites.py), as resolve() labels a site whose frames
        are there; and how many of them have a source line."""
        hits: dict[str, tuple[str, int] | None] = {}
        for where in wheres:
            for frame in where.split(" < "):
                path, sep, off = frame.rpartition("+0x")
                if frame not in hits:
                    hits[frame] = _vaddr_in(path, int(off, 16), self._segments) if sep and \
                        all(c in "0123456789abcdef" for c in off) else None
        self._found_for([h for h in hits.values() if h])

        def label(frame: str) -> tuple[str, bool]:
            hit = hits[frame]
            if not hit:
                return frame, False
            fn, file, line = self._found.get(hit, (None, None, None))
            place = Place(hit[0], hit[1], fn, file, line)
            return place.label(None), bool(file and line)

        out, with_line = {}, 0
        for where in wheres:
            parts = [label(f) for f in where.split(" < ")]
            out[where] = " ← ".join(p for p, _ in parts)
            with_line += parts[0][1]
        return out, with_line

    def resolve(self, doc: dict[str, Any]) -> dict[str, Any]:
        """Adds object, vaddr, function, file, line and label to every site of one rank's
        profile document (in place; a chain's are its innermost frame's, its label every
        frame's, innermost first: "a.c:3 (helper) ← b.c:9 (main)"); returns what it could
        do, for the run's notes."""
        sites = (doc.get("profile") or {}).get("sites") or []
        places = self._places({a for s in sites for a in addresses(s)}, mappings(doc))
        with_line = 0
        for site in sites:
            addrs = addresses(site)
            place = places[addrs[0]] if addrs else Place()
            site.update({
                "object": place.obj,
                "vaddr": f"{place.vaddr:#x}" if place.vaddr is not None else None,
                "function": place.function,
                "file": place.file,
                "line": place.line,
                "label": " ← ".join(places[a].label(a) for a in addrs) if addrs else "unknown",
            })
            with_line += bool(place.file and place.line)
        known = [s for s in sites if s.get("addr")]
        note = None
        if known and not self.tool:
            note = (f"{ADDR2LINE} (GNU binutils) not found: call sites are shown as object + "
                    "offset (install binutils for functions, files and lines)")
        elif known and with_line < len(known):
            note = ("some call sites have no source line: their object has no debug "
                    "information (build with -g) or could not be read")
        return {"sites": len(known), "with_line": with_line, "note": note}


def resolve(doc: dict[str, Any], tool: str | None = None) -> dict[str, Any]:
    """Resolver(tool).resolve(doc): one document on its own."""
    return Resolver(tool).resolve(doc)
