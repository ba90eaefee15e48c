# Unit tests of the J transform (lang/ad/): primal graphs and gradient rules
# written as IR text, transformed, run on the debug-mode graph executor and
# checked against float64 finite differences of the primal graph (msl_exec).
file(GLOB MSL_AD_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/ad/*.cpp)
add_executable(msl_ad_tests unit/doctest_main.cpp ${MSL_AD_TEST_SOURCES})
target_include_directories(msl_ad_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_ad_tests PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_ad_tests PRIVATE msl_exec)
add_test(NAME unit.ad COMMAND msl_ad_tests)
