# Unit tests of the debug-mode graph executor (interp/graph_executor.*,
# interp/graph_exec_*.cpp). The executor depends only on lang/ir and the
# kernels, so its sources are compiled here directly instead of linking the
# whole interpreter.
file(GLOB MSL_EXEC_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/exec/*.cpp)
file(GLOB MSL_GRAPH_EXEC_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/interp/graph_executor.cpp
     ${CMAKE_SOURCE_DIR}/interp/graph_exec_*.cpp)
add_executable(msl_exec_tests unit/doctest_main.cpp ${MSL_EXEC_TEST_SOURCES} ${MSL_GRAPH_EXEC_SOURCES})
target_include_directories(msl_exec_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_exec_tests PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_exec_tests PRIVATE msl_lang)
add_test(NAME unit.exec COMMAND msl_exec_tests)
