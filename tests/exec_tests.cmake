# Unit tests of the graph executor (jit/exec/, the msl_exec library: it
# depends only on lang/ir and the kernels).
file(GLOB MSL_EXEC_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/exec/*.cpp)
add_executable(msl_exec_tests unit/doctest_main.cpp ${MSL_EXEC_TEST_SOURCES})
target_include_directories(msl_exec_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_exec_tests PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_exec_tests PRIVATE msl_exec)
add_test(NAME unit.exec COMMAND msl_exec_tests)
