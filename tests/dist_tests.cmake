# Data-parallel tests (label `dist`): two processes under `msl launch`
# (mpirun) on this machine, one kernel thread each (tests/dist/run.sh).
#   dist/<name>     tests/dist/<name>.msl, each rank checking itself
#   dist.kill       a killed rank ends the job fast, with the rank named
#   dist.timeout    a rank that never joins ends the job after the timeout
#   dist.launcher   msl launch's usage errors and the mpirun line it runs
#   dist/world1/<name>  the collectives alone: a world of one process
# The two-process tests are registered when the MPI back end is built and
# mpirun exists. Each takes both cores (PROCESSORS 2), so ctest -j2 runs
# them one at a time.
foreach(test_case IN ITEMS collectives collective_grads)
  add_test(NAME dist/world1/${test_case} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/dist/run.sh $<TARGET_FILE:msl> world1
                                                 ${CMAKE_CURRENT_LIST_DIR}/dist/${test_case}.msl)
  set_tests_properties(dist/world1/${test_case} PROPERTIES LABELS dist TIMEOUT 300)
endforeach()
find_program(MSL_MPIRUN mpirun)
if(MSL_HAVE_MPI AND MSL_MPIRUN)
  set(run ${CMAKE_CURRENT_LIST_DIR}/dist/run.sh)
  file(GLOB MSL_DIST_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/dist/*.msl)
  list(REMOVE_ITEM MSL_DIST_TESTS ${CMAKE_CURRENT_LIST_DIR}/dist/rank_stops.msl)
  foreach(test_file IN LISTS MSL_DIST_TESTS)
    get_filename_component(test_case ${test_file} NAME_WLE)
    add_test(NAME dist/${test_case} COMMAND bash ${run} $<TARGET_FILE:msl> script ${test_file})
  endforeach()
  # The seed book's listings read the CIFAR-10 fixture of the port tests.
  set_tests_properties(dist/book_listings PROPERTIES FIXTURES_REQUIRED msl_port_data ENVIRONMENT
                       "PORT_DATA=${MSL_PORT_DATA};DIST_OUT=${CMAKE_CURRENT_BINARY_DIR}/dist_out/book_listings")
  add_test(NAME dist.kill COMMAND bash ${run} $<TARGET_FILE:msl> kill)
  add_test(NAME dist.timeout COMMAND bash ${run} $<TARGET_FILE:msl> timeout)
  add_test(NAME dist.launcher COMMAND bash ${run} $<TARGET_FILE:msl> launcher)
  get_property(dist_tests DIRECTORY PROPERTY TESTS)
  list(FILTER dist_tests INCLUDE REGEX "^dist[/.]")
  list(FILTER dist_tests EXCLUDE REGEX "^dist/world1/")
  set_tests_properties(${dist_tests} PROPERTIES LABELS dist PROCESSORS 2 TIMEOUT 300)
endif()
