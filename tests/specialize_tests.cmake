# Unit tests of jit/specialize (abstract interpretation and specialization):
# IR text in, abstract values and specialized graphs out. Specialized graphs
# are run against their primal graphs on the debug-mode graph executor.
file(GLOB MSL_SPECIALIZE_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/specialize/*.cpp)
add_executable(msl_specialize_tests unit/doctest_main.cpp ${MSL_SPECIALIZE_TEST_SOURCES})
target_include_directories(msl_specialize_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_specialize_tests PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_specialize_tests PRIVATE msl_jit)
add_test(NAME unit.specialize COMMAND msl_specialize_tests)
