# Runs thread_stress profiled (EXE links libmpi_overlap) on 2 ranks with ITERS
# iterations and checks each rank's profile for the counts the program fixes
# (native/tests/thread_stress.c): 8 threads x ITERS x 6 transfers, 1 of the 6
# completed on another thread, none begin-only or end-only, each region
# 8 x ITERS x 2 transfers. Under ThreadSanitizer a race report makes the rank
# exit non-zero, so the run itself fails.
include(${CMAKE_CURRENT_LIST_DIR}/profile_counts.cmake)
file(REMOVE_RECURSE ${OUTDIR})
file(MAKE_DIRECTORY ${OUTDIR})
set(ENV{MPI_OVERLAP_OUTDIR} ${OUTDIR})
execute_process(
  COMMAND ${MPIEXEC} ${NPFLAG} 2 ${EXE} ${ITERS}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "thread_stress exited with '${rc}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
math(EXPR transfers "8 * ${ITERS} * 6")
math(EXPR in_call "8 * ${ITERS} * 2")
math(EXPR across "8 * ${ITERS} * 4")
math(EXPR cross "8 * ${ITERS}")
math(EXPR per_region "8 * ${ITERS} * 2")
foreach(rank 0 1)
  file(READ ${OUTDIR}/profile.rank-${rank}.json doc)
  string(JSON threads GET "${doc}" threads)
  mo_profile_counts("${doc}" have)
  set(want "complete ${transfers} ${in_call} ${across} 0 0 ${cross}")
  if(NOT have STREQUAL want)
    message(FATAL_ERROR "rank ${rank}: ${MO_PROFILE_COUNTS_NAMES}: got '${have}', "
                        "expected '${want}'")
  endif()
  string(JSON nregions LENGTH "${doc}" profile by_region)
  set(seen "")
  math(EXPR last "${nregions} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${doc}" profile by_region ${i} region)
    string(JSON n GET "${doc}" profile by_region ${i} transfers)
    if(n GREATER 0)
      list(APPEND seen "${name}=${n}")
    endif()
  endforeach()
  set(want_regions "blocking=${per_region};handoff=${per_region};p2p=${per_region}")
  if(NOT seen STREQUAL want_regions)
    message(FATAL_ERROR "rank ${rank}: regions '${seen}', expected '${want_regions}'")
  endif()
  message(STATUS "rank ${rank}: ${threads} threads, ${have}, ${seen}")
endforeach()
