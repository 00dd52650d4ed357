"""The second layer: the MPI toolchains and the native build, over core/ only. Which MPI
libraries are registered and how each is probed (`toolchains`, `probe/mpi_version.c`),
and native/ built with CMake once per toolchain (`build`)."""
