# Unit tests of kernels/: tensors, dtypes, allocator, RNG and every primitive
# against float64 reference code written in the tests.
file(GLOB MSL_KERNEL_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/kernels/*.cpp)
add_executable(msl_kernels_tests unit/doctest_main.cpp ${MSL_KERNEL_TEST_SOURCES})
target_include_directories(msl_kernels_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_kernels_tests PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_kernels_tests PRIVATE msl_kernels)
add_test(NAME unit.kernels COMMAND msl_kernels_tests)
