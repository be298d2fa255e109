# bench/h200/run-on-device.sh without a GPU: the small layer's sm_90a kernels
# prefilled by moegen, moegen-bench-h200 over the stand-in libcuda (which runs
# no kernel: the check fails, so the bench exits 1). The script must go on
# without the torch baseline when it cannot run (no torch, or no GPU for it),
# keep the bench's tables under $OUT and exit with the bench's status.
#   cmake -DMOEGEN= -DBENCH= -DFAKE_CUDA= -DSOURCE_DIR= -DWORK_DIR= -P RunOnDeviceTest.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/out)
set(spec ${SOURCE_DIR}/test/lit/Inputs/small.moe)
execute_process(COMMAND ${MOEGEN} cache prefill --target sm_90a --spec ${spec} --dir ${WORK_DIR}/cache
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "prefill failed: ${err}")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env MOEGEN_CUDA_LIB=${FAKE_CUDA} OUT=${WORK_DIR}/out TOKENS=1,3
          bash ${SOURCE_DIR}/bench/h200/run-on-device.sh ${WORK_DIR}/cache ${BENCH} ${spec}
          --target-ms 1
  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "run-on-device.sh exited ${rc}, expected the bench's 1:\n${out}\n${err}")
endif()
if(NOT err MATCHES "the torch baseline failed; the bench runs without its column")
  message(FATAL_ERROR "no word of the torch baseline's failure:\n${err}")
endif()
if(NOT out MATCHES "bench exit status 1")
  message(FATAL_ERROR "the exit status is not reported:\n${out}")
endif()
file(READ ${WORK_DIR}/out/bench.md tables)
foreach(want "### small \\(model_dim 256" "\\| 1 \\| 8 \\|" "\\| 3 \\| 8 \\|"
        "2 row\\(s\\) failed their check")
  if(NOT tables MATCHES "${want}")
    message(FATAL_ERROR "bench.md lacks '${want}':\n${tables}")
  endif()
endforeach()
message(STATUS "run-on-device.sh ran the bench and kept its tables")
