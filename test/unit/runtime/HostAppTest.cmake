# ctest: install the moegen_runtime component to a temporary prefix, build
# examples/host_app against it as an outside project would, and run it: the
# ahead-of-time host_app_aot refuses an empty cache, host_app (JIT) fills it,
# then host_app_aot runs from it. Neither host_app_aot nor
# libmoegen_runtime.so may need libMLIR.
#   cmake -DBUILD_DIR= -DSOURCE_DIR= -DWORK_DIR= -DCXX= -DGENERATOR= -DREADELF= -P HostAppTest.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
    --component moegen_runtime)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/host_app -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
# Kimi-K3's layer (a4w4, situv2, topk 16, its tuned schedules) with fewer and
# narrower experts, so that the CPU emulator runs it in seconds.
set(kimi_small --set model_dim=512 --set inter_dim=128 --set experts=32)
set(aot_app ${WORK_DIR}/build/host_app_aot ${SOURCE_DIR}/examples/kimi_k3_tp8_a4w4.moe ${kimi_small}
    --tokens 9)
execute_process(COMMAND ${CMAKE_COMMAND} -E env MOEGEN_CACHE_DIR=${WORK_DIR}/cache ${aot_app}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(rc EQUAL 0 OR NOT out MATCHES "is not in the kernel cache" OR NOT out MATCHES "moegen cache prefill")
  message(FATAL_ERROR "host_app_aot on an empty cache: expected a clear error, got (${rc})")
endif()
run(${CMAKE_COMMAND} -E env MOEGEN_CACHE_DIR=${WORK_DIR}/cache
    ${WORK_DIR}/build/host_app ${SOURCE_DIR}/examples/kimi_k3_tp8_a4w4.moe ${kimi_small}
    --tokens 9)
# The same again: the kernels come from the disk cache.
run(${CMAKE_COMMAND} -E env MOEGEN_CACHE_DIR=${WORK_DIR}/cache
    ${WORK_DIR}/build/host_app ${SOURCE_DIR}/examples/kimi_k3_tp8_a4w4.moe ${kimi_small}
    --tokens 9)
file(GLOB_RECURSE entries ${WORK_DIR}/cache/*.moeko)
list(LENGTH entries n)
if(n LESS 1)
  message(FATAL_ERROR "host_app left no cache entry in ${WORK_DIR}/cache")
endif()
# Ahead of time: the kernels host_app compiled, without a compiler.
run(${CMAKE_COMMAND} -E env MOEGEN_CACHE_DIR=${WORK_DIR}/cache ${aot_app})
file(GLOB_RECURSE runtime_lib ${WORK_DIR}/prefix/libmoegen_runtime.so)
if(NOT runtime_lib)
  message(FATAL_ERROR "no libmoegen_runtime.so under ${WORK_DIR}/prefix")
endif()
foreach(binary ${WORK_DIR}/build/host_app_aot ${runtime_lib})
  execute_process(COMMAND ${READELF} --needed-libs ${binary} RESULT_VARIABLE rc OUTPUT_VARIABLE needed)
  if(NOT rc EQUAL 0 OR needed MATCHES "MLIR" OR NOT needed MATCHES "LLVM")
    message(FATAL_ERROR "${binary} must need libLLVM and not libMLIR; it needs:\n${needed}")
  endif()
endforeach()
