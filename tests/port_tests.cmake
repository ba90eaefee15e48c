# Port corpus (label `port`): tests/port/<name>.msl are MindSpore programs
# (tutorial topics, model-zoo-style training scripts, the APIs of the seeds'
# listings) with only the imports renamed from `mindspore` to `msl`; each
# checks its own numbers and prints checks, not raw floats (tests/port/README.md).
# Each runs twice, through msl_script_runner and its `# expect:` lines:
#   port/<name>            the default mode (GRAPH_MODE)
#   pynative/port/<name>   MSL_TEST_MODE=pynative, i.e. `msl --mode pynative`
# The programs do not set the mode themselves, so the second run is op by op.
# PORT_OUT is a folder per variant for what a program writes (checkpoints,
# images), so the two variants never share files and the source tree stays
# clean.
# PORT_DATA holds the data sets the programs read besides Fashion-MNIST: a
# small CIFAR-10 in MindSpore's binary format (PORT_DATA/cifar10), written
# once by tests/fixtures/make_cifar10.msl (classes separable by colour).
#   ctest -L port -j2
set(MSL_PORT_DATA ${CMAKE_CURRENT_BINARY_DIR}/port_data)
add_test(NAME port.data COMMAND $<TARGET_FILE:msl> run ${CMAKE_CURRENT_LIST_DIR}/fixtures/make_cifar10.msl
                                ${MSL_PORT_DATA}/cifar10 512 128)
set_tests_properties(port.data PROPERTIES LABELS port TIMEOUT 60 FIXTURES_SETUP msl_port_data)
file(GLOB MSL_PORT_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/port/*.msl)
foreach(test_file IN LISTS MSL_PORT_TESTS)
  get_filename_component(test_case ${test_file} NAME_WLE)
  foreach(variant IN ITEMS graph pynative)
    if(variant STREQUAL "graph")
      set(test_name port/${test_case})
      set(env "PORT_DATA=${MSL_PORT_DATA};PORT_OUT=${CMAKE_CURRENT_BINARY_DIR}/port_out/graph/${test_case}")
    else()
      set(test_name pynative/port/${test_case})
      set(env "MSL_TEST_MODE=pynative;PORT_DATA=${MSL_PORT_DATA};PORT_OUT=${CMAKE_CURRENT_BINARY_DIR}/port_out/pynative/${test_case}")
    endif()
    add_test(NAME ${test_name}
             COMMAND $<TARGET_FILE:msl_script_runner> $<TARGET_FILE:msl> ${test_file})
    set_tests_properties(${test_name} PROPERTIES LABELS port TIMEOUT 120 ENVIRONMENT "${env}"
                         FIXTURES_REQUIRED msl_port_data)
  endforeach()
endforeach()
