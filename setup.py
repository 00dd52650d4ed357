"""Packaging step pyproject.toml cannot declare: the native sources (native/: CMake, C,
the wrapper generator's inputs) go into the wheel as mpi_overlap/_native, so that an
installed package builds its benchmarks and profiler with no checkout (paths.py looks
there first). Everything else is in pyproject.toml."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

NATIVE = Path(__file__).resolve().parent / "native"


class BuildPyWithNative(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "mpi_overlap" / "_native"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(NATIVE, target,
                        ignore=shutil.ignore_patterns("build*", "__pycache__", "*.o", "*.so"))
        # native/CMakeLists.txt reads the version beside itself when ../VERSION is absent
        shutil.copy2(NATIVE.parent / "VERSION", target / "VERSION")


setup(cmdclass={"build_py": BuildPyWithNative})
