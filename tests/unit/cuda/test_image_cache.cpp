// Persistent GPU images (kernels/cuda/image_cache.h), without a GPU: with a
// store installed, the first compile of a source runs NVRTC and stores its
// image under a key naming the source, architecture, cubin or PTX and the
// NVRTC version; the second is the stored image, NVRTC not run; another
// architecture or PTX is another key; a store that has nothing (or no
// store) compiles. Without NVRTC, compiling is a DeviceError.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "kernels/cuda/image_cache.h"
#include "kernels/cuda/nvrtc_compiler.h"
#include "kernels/errors.h"

using namespace msl::kernels;

namespace {

constexpr const char* kSource = R"(extern "C" __global__ void twice(long long n, float* x) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    x[i] = x[i] * 2.0f;
}
)";

// An in-memory store counting its calls; uninstalled at the end of the scope.
struct MemoryStore {
  std::map<std::string, std::string> entries;
  int loads = 0, stores = 0;
  MemoryStore() {
    cuda::set_image_store({[this](const std::string& key) -> std::optional<std::string> {
                             ++loads;
                             auto it = entries.find(key);
                             if (it == entries.end()) return std::nullopt;
                             return it->second;
                           },
                           [this](const std::string& key, const std::string& image) {
                             ++stores;
                             entries[key] = image;
                           }});
  }
  ~MemoryStore() { cuda::set_image_store({}); }
};

}  // namespace

TEST_CASE("GPU images come from the store after their first compile") {
#ifdef MSL_HAVE_CUDA
  if (std::string why = cuda::nvrtc_unavailable_reason(); !why.empty()) {
    MESSAGE("NVRTC unavailable: " << why);
    return;
  }
  MemoryStore store;
  cuda::CachedImage first = cuda::compile_cached(kSource, "twice", 90, false);
  CHECK_FALSE(first.from_store);
  CHECK(first.image.compare(0, 4, "\x7f" "ELF") == 0);
  REQUIRE(store.entries.size() == 1);
  const std::string& key = store.entries.begin()->first;
  CHECK(key.find("arch 90") != std::string::npos);
  CHECK(key.find("nvrtc " + cuda::nvrtc_version()) != std::string::npos);
  CHECK(key.find(kSource) != std::string::npos);

  cuda::CachedImage second = cuda::compile_cached(kSource, "twice", 90, false);
  CHECK(second.from_store);
  CHECK(second.image == first.image);
  CHECK(store.stores == 1);

  // Another target is another entry: PTX for compute_80 is text.
  cuda::CachedImage ptx = cuda::compile_cached(kSource, "twice", 80, true);
  CHECK_FALSE(ptx.from_store);
  CHECK(ptx.image.find(".visible .entry twice") != std::string::npos);
  CHECK(store.entries.size() == 2);

  // An emptied store compiles again.
  store.entries.clear();
  CHECK_FALSE(cuda::compile_cached(kSource, "twice", 90, false).from_store);
#else
  CHECK_THROWS_AS(cuda::compile_cached(kSource, "twice", 90, false), DeviceError);
#endif
}

TEST_CASE("without a store every compile runs NVRTC") {
#ifdef MSL_HAVE_CUDA
  if (!cuda::nvrtc_unavailable_reason().empty()) return;
  cuda::set_image_store({});
  CHECK_FALSE(cuda::compile_cached(kSource, "twice", 90, false).from_store);
  CHECK_FALSE(cuda::compile_cached(kSource, "twice", 90, false).from_store);
#endif
}
