# Tests of the embedding API (include/msl/msl.h) and of the REPL.
#   unit.embed  doctest suite of every API entry point (tests/unit/embed/)
#   repl.pty    drives `msl` through a pseudo-terminal (tests/repl/repl_pty_test.cpp):
#               prompts, continuation lines, completion, Ctrl-C, Ctrl-D, meta commands
#   cli.pty_progress  `msl run tests/repl/train_progress.msl` on a pseudo-terminal:
#               isatty() is True there and LossMonitor draws its \r progress line
# The example host program examples/embed is registered as `examples.embed`
# in examples/CMakeLists.txt.
file(GLOB MSL_EMBED_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/unit/embed/*.cpp)
if(MSL_EMBED_TEST_SOURCES)
  add_executable(msl_embed_tests ${CMAKE_CURRENT_LIST_DIR}/unit/doctest_main.cpp ${MSL_EMBED_TEST_SOURCES})
  target_include_directories(msl_embed_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
  target_compile_options(msl_embed_tests PRIVATE ${MSL_WARNINGS})
  target_link_libraries(msl_embed_tests PRIVATE msl_interp pthread)
  target_compile_definitions(msl_embed_tests PRIVATE MSL_TEST_TMPDIR="${CMAKE_CURRENT_BINARY_DIR}")
  add_test(NAME unit.embed COMMAND msl_embed_tests)
  set_tests_properties(unit.embed PROPERTIES TIMEOUT 120)
endif()

if(TARGET msl)
  add_executable(msl_repl_pty_test ${CMAKE_CURRENT_LIST_DIR}/repl/repl_pty_test.cpp)
  target_compile_options(msl_repl_pty_test PRIVATE ${MSL_WARNINGS})
  target_link_libraries(msl_repl_pty_test PRIVATE util)
  # HOME (and so ~/.msl_history) points into the build tree; the program
  # creates the folder and checks that history was written there.
  set(MSL_REPL_HOME ${CMAKE_CURRENT_BINARY_DIR}/repl_home)
  add_test(NAME repl.pty COMMAND msl_repl_pty_test $<TARGET_FILE:msl> ${MSL_REPL_HOME})
  set_tests_properties(repl.pty PROPERTIES TIMEOUT 120
                       ENVIRONMENT "HOME=${MSL_REPL_HOME};MSL_HISTORY=;TERM=xterm;LC_ALL=C.UTF-8")
  add_test(NAME cli.pty_progress
           COMMAND msl_repl_pty_test --progress $<TARGET_FILE:msl> ${CMAKE_CURRENT_LIST_DIR}/repl/train_progress.msl)
  set_tests_properties(cli.pty_progress PROPERTIES TIMEOUT 60 ENVIRONMENT "TERM=xterm;LC_ALL=C.UTF-8")
endif()
