# Runs xthread_reuse profiled (EXE links libmpi_overlap) on 2 ranks, once per
# scenario with INSTANCES instances, and checks each rank's profile for the
# counts the program fixes (native/tests/xthread_reuse.c): 4 transfers per
# instance, all across calls, none begin-only or end-only, and completions on
# another thread than the posting one: 1 per instance (own-first) or 2
# (foreign-first). A handle the MPI reuses at once must not send an END to the
# wrong thread, which would add one (own-first) or lose one (foreign-first).
# The program must say that every instance was held inside the MPI call
# (otherwise the window was not opened and the check proves nothing) and
# that the MPI gave the freed handle to the next request in at least one.
# Under ThreadSanitizer a race report makes the rank exit non-zero.
include(${CMAKE_CURRENT_LIST_DIR}/profile_counts.cmake)
foreach(scenario own-first foreign-first)
  set(outdir ${OUTDIR}/${scenario})
  file(REMOVE_RECURSE ${outdir})
  file(MAKE_DIRECTORY ${outdir})
  set(ENV{MPI_OVERLAP_OUTDIR} ${outdir})
  execute_process(
    COMMAND ${MPIEXEC} ${NPFLAG} 2 ${EXE} ${scenario} ${INSTANCES}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${scenario}: exited with '${rc}'\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(scenario STREQUAL "own-first")
    set(cross ${INSTANCES})
  else()
    math(EXPR cross "2 * ${INSTANCES}")
  endif()
  math(EXPR transfers "4 * ${INSTANCES}")
  foreach(rank 0 1)
    string(REGEX MATCH "rank ${rank}: [a-z-]+ [0-9]+ instances, ([0-9]+) handles reused, held ([0-9]+)"
           line "${out}")
    if(NOT line OR NOT CMAKE_MATCH_2 EQUAL ${INSTANCES} OR CMAKE_MATCH_1 EQUAL 0)
      message(FATAL_ERROR "${scenario} rank ${rank}: want every instance held and a handle "
                          "reused: '${line}'\nstdout:\n${out}")
    endif()
    set(reuse "${CMAKE_MATCH_1} reused")
    file(READ ${outdir}/profile.rank-${rank}.json doc)
    mo_profile_counts("${doc}" have)
    set(want "complete ${transfers} 0 ${transfers} 0 0 ${cross}")
    if(NOT have STREQUAL want)
      message(FATAL_ERROR "${scenario} rank ${rank}: ${MO_PROFILE_COUNTS_NAMES}: got "
                          "'${have}', expected '${want}'")
    endif()
    message(STATUS "${scenario} rank ${rank}: ${have}, ${reuse}")
  endforeach()
endforeach()
