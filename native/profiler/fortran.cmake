# fortran.cmake - whether libmpi_overlap gets its Fortran entry points
# (docs/profiler.md, "Fortran"), included from native/CMakeLists.txt after
# find_package(MPI) because enable_language belongs at the top level.
#
# They need the MPI's own Fortran compiler wrapper: the routine that records
# where the MPI's Fortran sentinels live is compiled with its mpif.h, and the
# Fortran test programs with its modules. The wrapper is MPI_Fortran_COMPILER
# when given, else the one beside mpicc (mpicc -> mpifort / mpif90 / mpif77,
# mpicc.mpich -> mpifort.mpich..., following symbolic links, so Debian's
# alternatives give the wrapper of the same MPI). It is used as the Fortran
# compiler after it compiled a probe, so a wrapper without a working compiler
# behind it skips Fortran with a message instead of failing the build.
#
# Sets MOP_FORTRAN (ON/OFF) and MOP_FORTRAN_STATUS (one line, also written to
# <build>/profiler/fortran-status.txt for the tests).

set(MO_FORTRAN AUTO CACHE STRING
  "Fortran entry points of the profiler: AUTO (when the MPI has a working Fortran wrapper), ON (required), OFF")
set_property(CACHE MO_FORTRAN PROPERTY STRINGS AUTO ON OFF)

set(MOP_FORTRAN OFF)
set(MOP_FORTRAN_STATUS "")

if(MO_FORTRAN STREQUAL "OFF")
  set(MOP_FORTRAN_STATUS "skipped: MO_FORTRAN=OFF")
else()
  set(_mop_fc "")
  if(MPI_Fortran_COMPILER)
    set(_mop_fc "${MPI_Fortran_COMPILER}")
  elseif(MPI_C_COMPILER)
    set(_mop_path "${MPI_C_COMPILER}")
    if(NOT IS_ABSOLUTE "${_mop_path}")
      find_program(_mop_mpicc_abs NAMES "${_mop_path}")
      set(_mop_path "${_mop_mpicc_abs}")
    endif()
    foreach(_mop_hop RANGE 8)
      if(NOT _mop_path OR _mop_fc)
        break()
      endif()
      get_filename_component(_mop_dir "${_mop_path}" DIRECTORY)
      get_filename_component(_mop_name "${_mop_path}" NAME)
      if(_mop_name MATCHES "mpicc")
        foreach(_mop_f mpifort mpif90 mpif77)
          string(REPLACE "mpicc" "${_mop_f}" _mop_cand "${_mop_name}")
          if(EXISTS "${_mop_dir}/${_mop_cand}" AND NOT _mop_fc)
            set(_mop_fc "${_mop_dir}/${_mop_cand}")
          endif()
        endforeach()
      endif()
      if(IS_SYMLINK "${_mop_path}")
        file(READ_SYMLINK "${_mop_path}" _mop_next)
        if(NOT IS_ABSOLUTE "${_mop_next}")
          set(_mop_next "${_mop_dir}/${_mop_next}")
        endif()
        set(_mop_path "${_mop_next}")
      else()
        set(_mop_path "")
      endif()
    endforeach()
  endif()

  if(NOT _mop_fc)
    set(MOP_FORTRAN_STATUS
      "skipped: no MPI Fortran compiler wrapper (mpifort, mpif90, mpif77) beside ${MPI_C_COMPILER}; pass -DMPI_Fortran_COMPILER=...")
  else()
    set(_mop_probe_dir "${CMAKE_BINARY_DIR}/CMakeFiles/mop_fortran_probe")
    file(MAKE_DIRECTORY "${_mop_probe_dir}")
    execute_process(
      COMMAND "${_mop_fc}" -c "${CMAKE_CURRENT_SOURCE_DIR}/profiler/mop_fortran_sentinels.f90"
              -o "${_mop_probe_dir}/probe.o"
      WORKING_DIRECTORY "${_mop_probe_dir}"
      RESULT_VARIABLE _mop_rc OUTPUT_VARIABLE _mop_out ERROR_VARIABLE _mop_err)
    if(NOT _mop_rc EQUAL 0)
      string(REGEX REPLACE "\n.*" "" _mop_first "${_mop_err}${_mop_rc}")
      set(MOP_FORTRAN_STATUS "skipped: ${_mop_fc} cannot compile a routine with mpif.h (${_mop_first})")
    else()
      set(CMAKE_Fortran_COMPILER "${_mop_fc}")
      enable_language(Fortran)
      set(MOP_FORTRAN ON)
      set(MOP_FORTRAN_STATUS "enabled: ${_mop_fc}")
    endif()
  endif()
endif()

if(MO_FORTRAN STREQUAL "ON" AND NOT MOP_FORTRAN)
  message(FATAL_ERROR "MO_FORTRAN=ON, but Fortran is ${MOP_FORTRAN_STATUS}")
endif()
message(STATUS "mpi-overlap Fortran entry points: ${MOP_FORTRAN_STATUS}")
