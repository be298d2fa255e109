# What CompareTest.cmake and CompareBuildsTest.cmake both check of a compare.sh run of two sets
# of the small layer's tables (test/lit/Inputs/small-sm90a-tables/a and b) in two rounds.

# Each round's set found its kernels and ran its own 4-token row: set 1 stage 1 on 32x32 tiles
# (tables a), set 2 on 32x64 (tables b).
function(expect_each_set_ran_its_rows out_dir)
  foreach(run "round1/set1" "round1/set2" "round2/set1" "round2/set2")
    file(READ ${out_dir}/${run}/bench.md tables)
    if(tables MATCHES "not in the kernel cache")
      message(FATAL_ERROR "${run} lacked its kernels:\n${tables}")
    endif()
    set(tile t32x32x256)
    if(run MATCHES "set2")
      set(tile t32x64x256)
    endif()
    if(NOT tables MATCHES "\\| 4 \\| 8 \\|[^\n]*tuned: bm32 ${tile}")
      message(FATAL_ERROR "${run} did not run its own row (${tile}):\n${tables}")
    endif()
  endforeach()
endfunction()

# The two sets ran in alternating rounds: set 1 then set 2, then set 2 then set 1. `name` matches
# a set's name in compare.sh's "round R, NAME" lines, with one group capturing the short name that
# `expected` uses (e.g. "1a;1b;2b;2a").
function(expect_round_order output name expected)
  string(REGEX MATCHALL "round [12], ${name}" order "${output}")
  list(TRANSFORM order REPLACE "round ([12]), ${name}" "\\1\\2")
  if(NOT order STREQUAL "${expected}")
    message(FATAL_ERROR "the rounds ran in the order '${order}', expected ${expected}:\n${output}")
  endif()
endfunction()

# compare.md under out_dir matches every regular expression given after it.
function(expect_report out_dir)
  file(READ ${out_dir}/compare.md report)
  foreach(want ${ARGN})
    if(NOT report MATCHES "${want}")
      message(FATAL_ERROR "compare.md lacks '${want}':\n${report}")
    endif()
  endforeach()
endfunction()
