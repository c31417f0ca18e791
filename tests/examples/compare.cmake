# ctest driver: run an example and compare what it prints with the checked-in expected output.
# Variables: CMD (a ;-list), EXPECTED (file).
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit ${rc}: ${CMD}\n${err}")
endif()
file(READ "${EXPECTED}" expected)
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "output of ${CMD} differs from ${EXPECTED}:\n--- got ---\n${out}\n--- expected ---\n${expected}")
endif()
