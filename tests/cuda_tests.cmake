# Tests of the GPU back end (kernels/cuda/).
#
# unit.cuda_text.*: the kernel texts without a GPU, on every build: run under
# host emulation (compiled by this build's C++ compiler) against the CPU's
# kernels, and compiled with NVRTC when the toolkit is there.
file(GLOB MSL_CUDA_TEXT_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/cuda/test_*.cpp)
add_executable(msl_cuda_text_tests unit/doctest_main.cpp ${MSL_CUDA_TEXT_TEST_SOURCES})
target_include_directories(msl_cuda_text_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
target_compile_options(msl_cuda_text_tests PRIVATE ${MSL_WARNINGS})
target_compile_definitions(msl_cuda_text_tests PRIVATE MSL_HOST_CXX="${CMAKE_CXX_COMPILER}")
target_link_libraries(msl_cuda_text_tests PRIVATE msl_codegen msl_kernels ${CMAKE_DL_LIBS})
if(MSL_HAVE_CUDA)
  target_compile_definitions(msl_cuda_text_tests PRIVATE MSL_HAVE_CUDA=1)
endif()
# One CTest test per source file (doctest's --source-file filter), so the
# groups run in parallel and each stays well inside CI's time limit (the
# host compiles and NVRTC's take most of the time).
foreach(test_source IN LISTS MSL_CUDA_TEXT_TEST_SOURCES)
  get_filename_component(test_stem ${test_source} NAME_WE)
  string(REGEX REPLACE "^test_" "" test_group ${test_stem})
  add_test(NAME unit.cuda_text.${test_group} COMMAND msl_cuda_text_tests --source-file=*/${test_stem}.cpp)
  set_tests_properties(unit.cuda_text.${test_group} PROPERTIES TIMEOUT 900)
endforeach()

# unit.gpu: the device and its kernels on a GPU (CTest label gpu). Without a
# usable GPU the executable says why and exits 77, which CTest reports as
# skipped; CI has none.
if(MSL_HAVE_CUDA)
  file(GLOB MSL_GPU_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/cuda/gpu/*.cpp)
  add_executable(msl_gpu_tests ${MSL_GPU_TEST_SOURCES})
  target_include_directories(msl_gpu_tests SYSTEM PRIVATE ${DOCTEST_INCLUDE_DIR})
  target_compile_options(msl_gpu_tests PRIVATE ${MSL_WARNINGS})
  # msl_jit: graph mode's fused kernels (test_gpu_fused.cpp).
  target_link_libraries(msl_gpu_tests PRIVATE msl_jit msl_kernels)
  add_test(NAME unit.gpu COMMAND msl_gpu_tests)
  set_tests_properties(unit.gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu)
endif()
