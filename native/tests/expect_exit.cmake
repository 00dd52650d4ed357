# Runs EXE under MPIEXEC with 2 ranks and one argument ARG, and checks that
# the exit status is EXPECT and that the benchmark printed exactly one
# "error:" line (launchers may add their own notices; those are not ours).
execute_process(
  COMMAND ${MPIEXEC} ${NPFLAG} 2 ${EXE} ${ARG}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECT)
  message(FATAL_ERROR "expected exit status ${EXPECT}, got '${rc}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
string(REGEX MATCHALL "mo_[a-z]+: error: [^\n]*" lines "${err}")
list(LENGTH lines n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one error line, got ${n}:\n${err}")
endif()
message(STATUS "exit ${rc}: ${lines}")
