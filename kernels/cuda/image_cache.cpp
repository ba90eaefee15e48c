// Persistent GPU images (image_cache.h).
#include "kernels/cuda/image_cache.h"

#include <fmt/format.h>

#include <mutex>

#include "kernels/cuda/nvrtc_compiler.h"

namespace msl::kernels::cuda {

namespace {

// Bumped when NVRTC's options (nvrtc_compiler.cpp) change what an image is.
constexpr int kImageFormat = 1;

std::mutex g_mu;
ImageStore g_store;

ImageStore store_copy() {
  std::lock_guard lock(g_mu);
  return g_store;
}

}  // namespace

void set_image_store(ImageStore store) {
  std::lock_guard lock(g_mu);
  g_store = std::move(store);
}

CachedImage compile_cached(const std::string& source, const std::string& name, int arch, bool ptx) {
  ImageStore store = store_copy();
  std::string key;
  if (store.load) {
    key = fmt::format("msl nvrtc image {}\narch {}\nimage {}\nnvrtc {}\n", kImageFormat, arch, ptx ? "ptx" : "cubin",
                      nvrtc_version()) +
          source;
    if (std::optional<std::string> image = store.load(key)) return {std::move(*image), true};
  }
  CachedImage out{nvrtc_compile(source, name, arch, ptx).image, false};
  if (store.store) store.store(key, out.image);
  return out;
}

}  // namespace msl::kernels::cuda
