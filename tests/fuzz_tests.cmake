# The fuzz target, and the replay of its corpus (plus every script test) as a
# plain CTest test, so CI needs no clang.
add_executable(msl_fuzz_replay fuzz/replay_main.cpp fuzz/fuzz_msl.cpp)
target_compile_options(msl_fuzz_replay PRIVATE ${MSL_WARNINGS})
target_link_libraries(msl_fuzz_replay PRIVATE msl_interp)
add_test(NAME fuzz.replay COMMAND msl_fuzz_replay ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus ${CMAKE_CURRENT_SOURCE_DIR}/lang)

# libFuzzer build: cmake -DMSL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ (see tests/fuzz/README.md).
if(MSL_FUZZ)
  add_executable(msl_fuzz fuzz/fuzz_msl.cpp)
  target_compile_options(msl_fuzz PRIVATE -fsanitize=fuzzer)
  target_link_options(msl_fuzz PRIVATE -fsanitize=fuzzer)
  target_link_libraries(msl_fuzz PRIVATE msl_interp)
endif()
