// libFuzzer target: MindSpore .ckpt files (interp/checkpoint/checkpoint_ckpt.cpp),
// from a file and from memory; fuzz_checkpoint.h says what is checked.
#include "tests/fuzz/fuzz_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return msl::fuzz::fuzz_checkpoint(data, size, msl::checkpoint::Format::Ckpt);
}
