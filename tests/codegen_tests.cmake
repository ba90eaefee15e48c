# Unit tests of jit/codegen/: LLVM-generated fused elementwise loops against
# float64 reference code in the tests.
file(GLOB MSL_CODEGEN_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/codegen/*.cpp)
add_executable(msl_codegen_tests unit/doctest_main.cpp ${MSL_CODEGEN_TEST_SOURCES})
target_include_directories(msl_codegen_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_codegen_tests PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_codegen_tests PRIVATE msl_codegen)
add_test(NAME unit.codegen COMMAND msl_codegen_tests)

# The on-disk compile cache through the command line: a second run of a
# script compiles no loops (msl --profile counts them).
if(TARGET msl)
  add_test(NAME cli.jit_cache COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_jit_cache.sh $<TARGET_FILE:msl>)
endif()

# The on-disk cache of whole compiled graphs: a second run of a training
# script compiles no graph, a changed hyperparameter does.
if(TARGET msl)
  add_test(NAME cli.graph_cache COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_graph_cache.sh $<TARGET_FILE:msl>)
endif()
