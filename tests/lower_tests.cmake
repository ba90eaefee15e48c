# Lowering from the AST to ANF IR (lang/ir/lower.*): golden IR text,
# structure checks, verifier, error diagnostics, execution of lowered
# graphs with the graph executor (msl_exec); and `msl --emit=anf`.
file(GLOB MSL_LOWER_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/lower/*.cpp)
add_executable(msl_lower_tests unit/doctest_main.cpp ${MSL_LOWER_TEST_SOURCES})
target_include_directories(msl_lower_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_lower_tests PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_lower_tests PRIVATE msl_exec)
add_test(NAME unit.lower COMMAND msl_lower_tests)

if(TARGET msl)
  add_test(NAME cli.emit_anf
           COMMAND msl --emit=anf run ${CMAKE_CURRENT_SOURCE_DIR}/lower/example.msl)
  set_tests_properties(cli.emit_anf PROPERTIES PASS_REGULAR_EXPRESSION
    "subgraph @mlp\\(%para1_x, %para2_w1, %para3_w2\\) \\{.*subgraph @count\\(%para1_n\\) \\{.*subgraph @count_while\\(%para1_i, %para2_s\\) parent=@count \\{")
endif()
