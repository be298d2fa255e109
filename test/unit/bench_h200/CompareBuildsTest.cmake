# bench/h200/compare.sh pack and run-builds without a GPU: two builds' sides of
# a comparison packed for the small layer (the same moegen, the tables of
# test/lit/Inputs/small-sm90a-tables/a and b), the second as a .tar.xz, then
# both benched in two rounds over the stand-in libcuda (which runs no kernel:
# every check fails, so the script exits 1 after its report). Each build must
# run its own binary, cache and rows, the rounds must alternate, and the report
# must name both builds. pack must refuse a bench of another build id and a
# directory that is not empty, and run-builds a build without its cache.
#   cmake -DMOEGEN= -DBENCH= -DFAKE_CUDA= -DSOURCE_DIR= -DWORK_DIR= -P CompareBuildsTest.cmake
include(${CMAKE_CURRENT_LIST_DIR}/CompareChecks.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/out ${WORK_DIR}/tmp)
set(compare ${SOURCE_DIR}/bench/h200/compare.sh)
set(spec ${SOURCE_DIR}/test/lit/Inputs/small.moe)
set(tables ${SOURCE_DIR}/test/lit/Inputs/small-sm90a-tables)

function(run_compare expect_rc)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env MOEGEN_BIN=${MOEGEN} SPECS=${spec}
            MOEGEN_CUDA_LIB=${FAKE_CUDA} OUT=${WORK_DIR}/out TOKENS=1,4
            TMPDIR=${WORK_DIR}/tmp bash ${compare} ${ARGN}
    WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "compare.sh ${ARGN} exited ${rc}, expected ${expect_rc}:\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

run_compare(0 pack ${WORK_DIR}/base ${BENCH} ${tables}/a)
run_compare(0 pack ${WORK_DIR}/next ${BENCH} ${tables}/b)
execute_process(COMMAND tar cJf ${WORK_DIR}/next.tar.xz -C ${WORK_DIR} next RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tar exited ${rc}")
endif()
file(REMOVE_RECURSE ${WORK_DIR}/next)

# Refusals: nothing is written or run.
file(WRITE ${WORK_DIR}/other-bench "#!/bin/sh\necho 'moegen-bench-h200 0.1.0 (build 0.0.0+0)'\n")
file(CHMOD ${WORK_DIR}/other-bench PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
run_compare(1 pack ${WORK_DIR}/other ${WORK_DIR}/other-bench ${tables}/a)
if(NOT err MATCHES "build id '0.0.0\\+0'" OR EXISTS ${WORK_DIR}/other)
  message(FATAL_ERROR "pack of another build id: '${err}'")
endif()
run_compare(1 pack ${WORK_DIR}/base ${BENCH} ${tables}/b)
if(NOT err MATCHES "is not empty")
  message(FATAL_ERROR "pack into a filled directory: '${err}'")
endif()
file(MAKE_DIRECTORY ${WORK_DIR}/broken/tables)
file(COPY ${BENCH} DESTINATION ${WORK_DIR}/broken)
run_compare(1 run-builds ${WORK_DIR}/base ${WORK_DIR}/broken -- ${spec})
if(NOT err MATCHES "build '[^']*broken' has no cache" OR EXISTS ${WORK_DIR}/out/round1)
  message(FATAL_ERROR "run-builds of a build without its cache: '${err}'")
endif()

run_compare(1 run-builds ${WORK_DIR}/base ${WORK_DIR}/next.tar.xz -- ${spec} --target-ms 1)
expect_round_order("${out}" "(base|next)" "1base;1next;2next;2base")
expect_each_set_ran_its_rows(${WORK_DIR}/out)
expect_report(${WORK_DIR}/out "\\| layer \\| M \\| base \\| next \\|" "\\| small \\| 4 \\| FAIL"
              "faster than base")
file(GLOB left "${WORK_DIR}/tmp/compare-builds.*")
if(left)
  message(FATAL_ERROR "run-builds left its unpacked builds: ${left}")
endif()
message(STATUS "compare.sh packed two builds, ran each with its own cache in alternating rounds")
