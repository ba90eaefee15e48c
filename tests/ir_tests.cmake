# Unit tests of lang/ir/: nodes, FuncGraph analyses, printer, IR text parser
# (round trips and malformed input) and verifier.
file(GLOB MSL_IR_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/ir/*.cpp)
add_executable(msl_ir_tests unit/doctest_main.cpp ${MSL_IR_TEST_SOURCES})
target_include_directories(msl_ir_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_ir_tests PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_ir_tests PRIVATE msl_lang)
add_test(NAME unit.ir COMMAND msl_ir_tests)
