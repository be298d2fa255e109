# bench/h200/compare.sh without a GPU: two sets of tables for the small layer
# (test/lit/Inputs/small-sm90a-tables/a and b: stage 1 on 32x32 and 32x64
# tiles) prefilled one set at a time, then both benched in two rounds over the stand-in libcuda (which
# runs no kernel: every check fails, so the script exits 1 after its report).
# Each set must run its own rows (had the sets been prefilled together, the
# second set's rows would be hidden by the first's and their kernels missing),
# the rounds must alternate their order, and the report must name both sets.
#   cmake -DMOEGEN= -DBENCH= -DFAKE_CUDA= -DSOURCE_DIR= -DWORK_DIR= -P CompareTest.cmake
include(${CMAKE_CURRENT_LIST_DIR}/CompareChecks.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/out)
set(spec ${SOURCE_DIR}/test/lit/Inputs/small.moe)
set(tables ${SOURCE_DIR}/test/lit/Inputs/small-sm90a-tables)
set(sets ${tables}/a ${tables}/b)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env MOEGEN_BIN=${MOEGEN} SPECS=${spec}
          bash ${SOURCE_DIR}/bench/h200/compare.sh prefill ${WORK_DIR}/cache ${sets}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compare.sh prefill exited ${rc}:\n${out}\n${err}")
endif()
if(err MATCHES "duplicate key")
  message(FATAL_ERROR "the sets were prefilled together:\n${err}")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env MOEGEN_CUDA_LIB=${FAKE_CUDA} OUT=${WORK_DIR}/out TOKENS=1,4
          bash ${SOURCE_DIR}/bench/h200/compare.sh run ${WORK_DIR}/cache ${BENCH} ${sets}
          -- ${spec} --target-ms 1
  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "compare.sh run exited ${rc}, expected 1 (the checks fail):\n${out}\n${err}")
endif()
expect_round_order("${out}" "[^\n]*tables/([ab])" "1a;1b;2b;2a")
expect_each_set_ran_its_rows(${WORK_DIR}/out)
expect_report(${WORK_DIR}/out "\\| layer \\| M \\| [^|]*tables/a \\| [^|]*tables/b \\|"
              "\\| small \\| 4 \\| FAIL" "0 cell\\(s\\) faster than")
message(STATUS "compare.sh prefilled each set, ran both in alternating rounds and reported them")
