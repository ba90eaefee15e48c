# The fuzz targets, and the replay of their corpora as plain CTest tests, so
# CI needs no clang (tests/fuzz/README.md).
#
# fuzz.replay: the whole-language target over its corpus and every script
# test. fuzz.replay.<loader>: each file loader's target over its corpus
# tests/fuzz/corpus_<loader>/.
add_executable(msl_fuzz_replay fuzz/replay_main.cpp fuzz/fuzz_msl.cpp)
target_compile_options(msl_fuzz_replay PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_fuzz_replay PRIVATE msl_interp)
add_test(NAME fuzz.replay COMMAND msl_fuzz_replay ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus ${CMAKE_CURRENT_SOURCE_DIR}/lang)

# One target per file loader: name, then the libraries its entry point needs.
set(MSL_FUZZ_LOADERS ckpt safetensors idx cifar image graph_cache)
set(MSL_FUZZ_LIBS_ckpt msl_checkpoint)
set(MSL_FUZZ_LIBS_safetensors msl_checkpoint)
set(MSL_FUZZ_LIBS_idx msl_dataset)
set(MSL_FUZZ_LIBS_cifar msl_dataset)
set(MSL_FUZZ_LIBS_image msl_dataset)
set(MSL_FUZZ_LIBS_graph_cache msl_jit)
foreach(loader ${MSL_FUZZ_LOADERS})
  add_executable(msl_fuzz_replay_${loader} fuzz/replay_main.cpp fuzz/fuzz_${loader}.cpp)
  target_compile_options(msl_fuzz_replay_${loader} PRIVATE ${MSL_WARNINGS})
  target_link_libraries(msl_fuzz_replay_${loader} PRIVATE ${MSL_FUZZ_LIBS_${loader}})
  add_test(NAME fuzz.replay.${loader} COMMAND msl_fuzz_replay_${loader} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus_${loader})
endforeach()

# libFuzzer build: cmake -DMSL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ (see tests/fuzz/README.md).
if(MSL_FUZZ)
  add_executable(msl_fuzz fuzz/fuzz_msl.cpp)
  target_compile_options(msl_fuzz PRIVATE -fsanitize=fuzzer)
  target_link_options(msl_fuzz PRIVATE -fsanitize=fuzzer)
  target_link_libraries(msl_fuzz PRIVATE msl_interp)
  foreach(loader ${MSL_FUZZ_LOADERS})
    add_executable(msl_fuzz_${loader} fuzz/fuzz_${loader}.cpp)
    target_compile_options(msl_fuzz_${loader} PRIVATE ${MSL_WARNINGS} -fsanitize=fuzzer)
    target_link_options(msl_fuzz_${loader} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(msl_fuzz_${loader} PRIVATE ${MSL_FUZZ_LIBS_${loader}})
  endforeach()
  # Seed inputs for the loader targets, written by the project's own savers
  # and encoders (tests/fuzz/README.md).
  add_executable(msl_fuzz_seeds fuzz/make_seeds.cpp)
  target_link_libraries(msl_fuzz_seeds PRIVATE msl_checkpoint msl_dataset png jpeg z)
  add_executable(msl_fuzz_graph_cache_seeds fuzz/make_graph_cache_seeds.cpp)
  target_link_libraries(msl_fuzz_graph_cache_seeds PRIVATE msl_jit)
  # The kernels with clang 14: it rejects __builtin_cpu_supports("f16c")
  # (answered from CPUID here: the header says more), and it ignores
  # `#pragma GCC target`, so the two files of per-ISA loops get their
  # instruction sets as flags (they run only where the CPU has them).
  file(GLOB MSL_FUZZ_KERNEL_SOURCES ${CMAKE_SOURCE_DIR}/kernels/*.cpp)
  set_source_files_properties(${MSL_FUZZ_KERNEL_SOURCES} DIRECTORY ${CMAKE_SOURCE_DIR}/kernels
    PROPERTIES COMPILE_OPTIONS "-include;${CMAKE_CURRENT_SOURCE_DIR}/fuzz/clang14_cpu_supports.h")
  set(MSL_FUZZ_AVX2 -mavx2 -mfma -mf16c -mbmi -mbmi2 -mlzcnt -mpopcnt)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/kernels/elementwise_isa_avx2.cpp DIRECTORY ${CMAKE_SOURCE_DIR}/kernels
    PROPERTIES COMPILE_OPTIONS "-include;${CMAKE_CURRENT_SOURCE_DIR}/fuzz/clang14_cpu_supports.h;${MSL_FUZZ_AVX2}")
  set_source_files_properties(${CMAKE_SOURCE_DIR}/kernels/elementwise_isa_avx512.cpp DIRECTORY ${CMAKE_SOURCE_DIR}/kernels
    PROPERTIES COMPILE_OPTIONS
    "-include;${CMAKE_CURRENT_SOURCE_DIR}/fuzz/clang14_cpu_supports.h;${MSL_FUZZ_AVX2};-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl")
endif()
