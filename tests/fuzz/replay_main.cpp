// Replays fuzz inputs without libFuzzer: each argument is a file or a folder
// of files, each fed to LLVMFuzzerTestOneInput. CTest runs it over every
// fuzz corpus (and the script tests), so every input that ever crashed
// stays fixed. An input fails the replay by crashing, by aborting (a broken
// property a target checks) or by letting a C++ exception out of the entry
// point: each target catches only the error its loader documents.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

static bool run_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: uncaught exception: %s\n", p.c_str(), e.what());
    return false;
  } catch (...) {
    std::fprintf(stderr, "%s: uncaught exception of an unknown type\n", p.c_str());
    return false;
  }
  return true;
}

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path p(argv[i]);
    if (fs::is_directory(p)) {
      for (auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  int failed = 0;
  for (const fs::path& f : files) failed += !run_file(f);
  std::printf("replayed %zu inputs, %d failed\n", files.size(), failed);
  return files.empty() || failed ? 1 : 0;
}
