# The torch baseline's plan (torch_baseline.py --plan) has a row, with the same
# rotation, for every (layer, token count) moegen-bench-h200 --plan times, and
# a baseline for fewer token counts is refused.
#   cmake -DPYTHON= -DBENCH= -DSOURCE_DIR= -DWORK_DIR= -P PlanAgreesTest.cmake
set(script ${SOURCE_DIR}/bench/h200/torch_baseline.py)
execute_process(COMMAND ${PYTHON} ${script} --plan OUTPUT_FILE ${WORK_DIR}/plan.csv
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "torch_baseline.py --plan failed: ${err}")
endif()
execute_process(COMMAND ${BENCH} --plan --baseline ${WORK_DIR}/plan.csv
  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "moegen-bench-h200 --plan disagrees with the torch plan:\n${err}")
endif()
string(REGEX MATCHALL "\n" lines "${out}")
list(LENGTH lines count)
if(NOT count EQUAL 51) # the header, 5 layers x 10 token counts
  message(FATAL_ERROR "moegen-bench-h200 --plan printed ${count} lines:\n${out}")
endif()
execute_process(COMMAND ${PYTHON} ${script} --plan --tokens 1,4 OUTPUT_FILE ${WORK_DIR}/few.csv
  RESULT_VARIABLE rc)
execute_process(COMMAND ${BENCH} --plan --baseline ${WORK_DIR}/few.csv
  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "the baseline has no row for kimi_k3_tp8_a16w4 at 16 tokens")
  message(FATAL_ERROR "a baseline without 16 tokens was accepted (${rc}):\n${err}")
endif()
message(STATUS "the torch plan covers the bench's")
