# Unit tests of interp/ (formatting, values, interpreter internals).
file(GLOB MSL_INTERP_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/interp/*.cpp)
if(MSL_INTERP_TEST_SOURCES)
  add_executable(msl_interp_tests unit/doctest_main.cpp ${MSL_INTERP_TEST_SOURCES})
  target_include_directories(msl_interp_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
  target_compile_options(msl_interp_tests PRIVATE ${MSL_WARNINGS})
  target_link_libraries(msl_interp_tests PRIVATE msl_interp)
  # The source tree's standard library, for tests that run library code.
  # (__FILE__ would do only while it is an absolute path: a compiler cache
  # that rewrites paths relative to the build folder makes it relative.)
  target_compile_definitions(msl_interp_tests PRIVATE MSL_STDLIB_DIR="${CMAKE_SOURCE_DIR}/stdlib")
  add_test(NAME unit.interp COMMAND msl_interp_tests)
endif()
