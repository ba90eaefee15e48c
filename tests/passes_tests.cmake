# Unit tests of jit/passes/: each clean-up pass as IR text in, IR text out,
# and the pipeline end to end. The pipeline tests run graphs before and
# after optimizing on the graph executor.
file(GLOB MSL_PASS_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/passes/*.cpp)
add_executable(msl_pass_tests unit/doctest_main.cpp ${MSL_PASS_TEST_SOURCES})
target_include_directories(msl_pass_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_pass_tests PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_pass_tests PRIVATE msl_jit)
add_test(NAME unit.passes COMMAND msl_pass_tests)
