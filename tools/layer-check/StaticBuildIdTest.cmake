# Configures the static device build (MOEGEN_STATIC_DEVICE_TOOLS) in WORK_DIR,
# generates only its build id header and fails unless it is EXPECTED's (the
# regular build's): the static moegen-layer-check must read the caches this
# build's moegen fills.
#   cmake -DSOURCE_DIR= -DWORK_DIR= -DEXPECTED= -DCXX= -DCC= -DGENERATOR= -DLLVM_ROOT=
#         -P StaticBuildIdTest.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -G "${GENERATOR}" -S "${SOURCE_DIR}" -B "${WORK_DIR}"
          -DMOEGEN_STATIC_DEVICE_TOOLS=ON -DCMAKE_BUILD_TYPE=Release
          -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC} -DMOEGEN_LLVM_ROOT=${LLVM_ROOT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the static build failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}" --target moegen-build-id
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generating the static build's id failed:\n${out}")
endif()
file(READ "${WORK_DIR}/runtime/cache/BuildId.inc" static_id)
file(READ "${EXPECTED}" expected_id)
if(NOT static_id STREQUAL expected_id)
  message(FATAL_ERROR "the static build's id differs from this build's:\n"
                      "  static: ${static_id}  regular: ${expected_id}")
endif()
message(STATUS "same build id: ${static_id}")
