// Replays fuzz inputs without libFuzzer: each argument is a file or a folder
// of files, each fed to LLVMFuzzerTestOneInput. CTest runs it over the fuzz
// corpus and the script tests, so every input that ever crashed stays fixed.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

static void run_file(const fs::path& p, int& count) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  ++count;
}

int main(int argc, char** argv) {
  int count = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path p(argv[i]);
    if (fs::is_directory(p)) {
      for (auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) run_file(e.path(), count);
    } else {
      run_file(p, count);
    }
  }
  std::printf("replayed %d inputs without a crash\n", count);
  return count > 0 ? 0 : 1;
}
