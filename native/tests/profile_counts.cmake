# What the threaded profile checks (check_thread_stress.cmake,
# check_xthread_reuse.cmake) compare: a rank profile's status, transfers, the
# in-call / across-calls / begin-only / end-only cases and the cross-thread
# completions, in that order, as one string.
set(MO_PROFILE_COUNTS_NAMES
    "status transfers in-call across-calls begin-only end-only cross_thread_completions")

function(mo_profile_counts doc out_var)
  string(JSON status GET "${doc}" status)
  string(JSON transfers GET "${doc}" profile totals transfers)
  set(counts "${status} ${transfers}")
  foreach(case in-call across-calls begin-only end-only)
    string(JSON n GET "${doc}" profile cases ${case})
    string(APPEND counts " ${n}")
  endforeach()
  string(JSON cross GET "${doc}" profile counters cross_thread_completions)
  set(${out_var} "${counts} ${cross}" PARENT_SCOPE)
endfunction()
