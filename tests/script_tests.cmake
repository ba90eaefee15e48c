# Script tests: tests/lang/<feature>/<case>.msl (the language) and
# tests/ops/<feature>/<case>.msl (tensors and msl.ops), each checked by
# msl_script_runner against its own `# expect:` annotations (see the header of
# script_runner.cpp for the annotation syntax). One CTest test per script,
# named lang/<feature>/<case> and labelled `script`:
#   ctest -L script -j8 --output-on-failure
# Helper modules imported by the tests live one folder deeper
# (lang/imports/helpers/, lang/imports/pkg/...) and are not tests themselves.
add_executable(msl_script_runner ${CMAKE_CURRENT_LIST_DIR}/script_runner.cpp)
target_compile_options(msl_script_runner PRIVATE ${MSL_WARNINGS})

file(GLOB MSL_SCRIPT_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/lang/*/*.msl
     ${CMAKE_CURRENT_LIST_DIR}/ops/*/*.msl)
foreach(test_file IN LISTS MSL_SCRIPT_TESTS)
  get_filename_component(test_case ${test_file} NAME_WLE)
  get_filename_component(test_dir ${test_file} DIRECTORY)
  get_filename_component(test_feature ${test_dir} NAME)
  get_filename_component(test_area_dir ${test_dir} DIRECTORY)
  get_filename_component(test_area ${test_area_dir} NAME)
  set(test_name ${test_area}/${test_feature}/${test_case})
  add_test(NAME ${test_name}
           COMMAND $<TARGET_FILE:msl_script_runner> $<TARGET_FILE:msl> ${test_file})
  # The runner kills a script after 20 s itself; this is the backstop.
  set_tests_properties(${test_name} PROPERTIES LABELS script TIMEOUT 60)
endforeach()

# Mode equivalence (label `modes`): every ops script again with PYNATIVE_MODE
# as the default (MSL_TEST_MODE, i.e. `msl --mode pynative`), so code that
# runs compiled by default (Cells, msl.jit, gradients: fused and expanded in
# GRAPH_MODE) must give the same output op by op. Scripts that read the
# default mode itself say `mode-sensitive` in a comment and are skipped.
file(GLOB MSL_OPS_SCRIPT_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/ops/*/*.msl)

# One CTest test of an ops script under a variant: named
# PREFIX/ops/<feature>/<case>, with LABELS and ENVIRONMENT (;-lists); the
# suites below call it per script. msl_ops_script_key sets OUT to
# "<feature>/<case>" (what their skip lists name).
function(msl_ops_script_key test_file out)
  get_filename_component(test_case ${test_file} NAME_WLE)
  get_filename_component(test_dir ${test_file} DIRECTORY)
  get_filename_component(test_feature ${test_dir} NAME)
  set(${out} ${test_feature}/${test_case} PARENT_SCOPE)
endfunction()
function(msl_ops_script_test test_file prefix labels env)
  msl_ops_script_key(${test_file} key)
  add_test(NAME ${prefix}/ops/${key} COMMAND $<TARGET_FILE:msl_script_runner> $<TARGET_FILE:msl> ${test_file})
  set_tests_properties(${prefix}/ops/${key} PROPERTIES LABELS "${labels}" TIMEOUT 60 ENVIRONMENT "${env}")
endfunction()

foreach(test_file IN LISTS MSL_OPS_SCRIPT_TESTS)
  file(STRINGS ${test_file} sensitive REGEX "^#.*mode-sensitive")
  if(NOT sensitive)
    msl_ops_script_test(${test_file} pynative "script;modes" MSL_TEST_MODE=pynative)
  endif()
endforeach()

# Debug device (label `debug_device`): every ops script (grad, train,
# checkpoints and datasets included) again with the Debug device as the
# default device (MSL_DEFAULT_DEVICE=debug, kernels/device_debug.h). Its
# memory is unreadable outside its kernels, so any host code that reads a
# tensor's memory directly instead of through to_host aborts the script:
# this is how the core is kept GPU-ready on machines without a GPU. Each
# script runs twice: in its default mode and in PYNATIVE_MODE (as the modes
# suite does). OpenMP's workers sleep instead of spinning between kernels
# (OMP_WAIT_POLICY=passive): the mprotect calls around every kernel wait for
# each spinning thread's TLB flush, which made a ResNet script 4x slower.
#   ctest -L debug_device -j2
# Scripts whose expected output depends on the CPU device itself are skipped:
set(MSL_DEBUG_DEVICE_SKIP
    fusion/blocked_layout  # the blocked layout is the CPU target's (oneDNN); other devices keep NCHW
    fusion/blocked_layout_bf16
    grad/errors            # the messages print tensor types, which name a device other than the CPU
    grad/save_graphs       # the saved graphs print tensor types too
    context/runtime_memory  # reports the CPU's caching allocator, which the Debug device does not use
    numpy/shared_memory)    # Tensor(ndarray) shares the array's host memory only when the CPU is the default device
foreach(test_file IN LISTS MSL_OPS_SCRIPT_TESTS)
  msl_ops_script_key(${test_file} key)
  if(key IN_LIST MSL_DEBUG_DEVICE_SKIP)
    continue()
  endif()
  msl_ops_script_test(${test_file} debug_device debug_device "MSL_DEFAULT_DEVICE=debug;OMP_WAIT_POLICY=passive")
  # And op by op (the modes suite's PYNATIVE_MODE default), unless the
  # script reads the default mode itself.
  file(STRINGS ${test_file} sensitive REGEX "^#.*mode-sensitive")
  if(NOT sensitive)
    msl_ops_script_test(${test_file} debug_device/pynative debug_device
                        "MSL_DEFAULT_DEVICE=debug;MSL_TEST_MODE=pynative;OMP_WAIT_POLICY=passive")
  endif()
endforeach()

# The GPU's graph target (label `cuda_target`, in builds with the CUDA
# toolkit): every ops script again with graph mode compiled by the CUDA
# target's passes (MSL_TEST_GRAPH_TARGET, i.e. `msl --graph-target cuda`).
# Every fused kernel the scripts' graphs make is rendered to CUDA C and
# compiled by NVRTC, which needs no GPU, so a renderer bug fails here; the
# graphs then run on the CPU, so the scripts' own checks test the target's
# passes too.
#   ctest -L cuda_target -j2
set(MSL_CUDA_TARGET_SKIP
    fusion/blocked_layout  # the blocked layout is the CPU target's (oneDNN); the GPU keeps NCHW
    fusion/blocked_layout_bf16)
if(MSL_HAVE_CUDA)
  foreach(test_file IN LISTS MSL_OPS_SCRIPT_TESTS)
    msl_ops_script_key(${test_file} key)
    if(NOT key IN_LIST MSL_CUDA_TARGET_SKIP)
      msl_ops_script_test(${test_file} cuda_target cuda_target MSL_TEST_GRAPH_TARGET=cuda)
    endif()
  endforeach()
endif()

# Self-tests of the runner: each script's annotations are wrong on purpose, so
# the runner must fail it (WILL_FAIL). Guards against a vacuously passing runner.
file(GLOB MSL_SCRIPT_SELFTESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/script_runner_selftest/*.msl)
foreach(test_file IN LISTS MSL_SCRIPT_SELFTESTS)
  get_filename_component(test_case ${test_file} NAME_WLE)
  set(test_name script_runner_selftest/${test_case})
  add_test(NAME ${test_name}
           COMMAND $<TARGET_FILE:msl_script_runner> $<TARGET_FILE:msl> ${test_file})
  set_tests_properties(${test_name} PROPERTIES LABELS script WILL_FAIL TRUE TIMEOUT 60)
endforeach()

# IR golden tests: tests/ir/golden/<case>.msl with `# EMIT:` and `# CHECK:`
# lines, checked by ir_check_runner (FileCheck-style) against
# `msl --emit=STAGE run FILE`. CTest name ir/golden/<case>.
add_executable(msl_ir_check_runner ${CMAKE_CURRENT_LIST_DIR}/ir_check_runner.cpp)
target_compile_options(msl_ir_check_runner PRIVATE ${MSL_WARNINGS})
file(GLOB MSL_IR_GOLDEN_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/ir/golden/*.msl)
# `# EMIT: cuda` compiles the kernels it prints with NVRTC.
if(NOT MSL_HAVE_CUDA)
  list(FILTER MSL_IR_GOLDEN_TESTS EXCLUDE REGEX "/cuda_[^/]*\\.msl$")
endif()
foreach(test_file IN LISTS MSL_IR_GOLDEN_TESTS)
  get_filename_component(test_case ${test_file} NAME_WLE)
  add_test(NAME ir/golden/${test_case}
           COMMAND $<TARGET_FILE:msl_ir_check_runner> $<TARGET_FILE:msl> ${test_file})
  set_tests_properties(ir/golden/${test_case} PROPERTIES LABELS script TIMEOUT 60)
endforeach()
