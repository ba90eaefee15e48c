# The install tree (cmake/install.cmake), moved to another folder: a host
# builds examples/embed with find_package(msl), and bin/msl finds its
# standard library there (tests/cli/test_install.sh).
if(TARGET msl AND TARGET msl_shared)
  add_test(NAME cli.install
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_install.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}
                   ${CMAKE_COMMAND} ${CMAKE_CXX_COMPILER})
  set_tests_properties(cli.install PROPERTIES LABELS install TIMEOUT 120 PASS_REGULAR_EXPRESSION "install checks passed")
endif()
