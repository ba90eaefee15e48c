# Unit tests of jit/specialize (abstract interpretation and specialization):
# IR text in, abstract values and specialized graphs out. Specialized graphs
# are run against their primal graphs on the debug-mode graph executor,
# whose sources are compiled in as tests/passes_tests.cmake does.
file(GLOB MSL_SPECIALIZE_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/specialize/*.cpp)
file(GLOB MSL_SPECIALIZE_GRAPH_EXEC_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/interp/graph_executor.cpp
     ${CMAKE_SOURCE_DIR}/interp/graph_exec_*.cpp)
add_executable(msl_specialize_tests unit/doctest_main.cpp ${MSL_SPECIALIZE_TEST_SOURCES}
               ${MSL_SPECIALIZE_GRAPH_EXEC_SOURCES})
target_include_directories(msl_specialize_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_specialize_tests PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_specialize_tests PRIVATE msl_jit)
add_test(NAME unit.specialize COMMAND msl_specialize_tests)
