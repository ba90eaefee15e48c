# Unit tests of tracing MSL functions into IR graphs (interp/tensor/trace.*): the
# graphs' structure, their results under the graph executor against eager
# calls of the same functions, and the trace errors.
file(GLOB MSL_TRACE_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/trace/*.cpp)
if(MSL_TRACE_TEST_SOURCES)
  add_executable(msl_trace_tests unit/doctest_main.cpp ${MSL_TRACE_TEST_SOURCES})
  target_include_directories(msl_trace_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
  target_compile_options(msl_trace_tests PRIVATE ${MSL_WARNINGS})
  target_compile_definitions(msl_trace_tests PRIVATE MSL_STDLIB_DIR="${CMAKE_SOURCE_DIR}/stdlib")
  target_link_libraries(msl_trace_tests PRIVATE msl_interp)
  add_test(NAME unit.trace COMMAND msl_trace_tests)
endif()
