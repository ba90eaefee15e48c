// Runs the GPU's kernel texts on the host, without a GPU: the CUDA C is
// compiled by the host's C++ compiler (the one that built the tests) behind
// a prelude that defines CUDA's built-ins, loaded with dlopen, and a grid is
// emulated by calling the kernel once per (block, thread). The kernels are
// grid-stride loops without barriers, so running the threads one after
// another computes exactly what the GPU computes, up to the order of
// atomicAdd's additions.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace msl::test {

// CUDA's built-ins as the kernels use them.
inline const char* cuda_host_prelude() {
  return R"(#include <math.h>
#include <string.h>
#define __global__
#define __device__
#define __forceinline__ inline
struct msl_dim3 { unsigned x, y, z; };
static msl_dim3 threadIdx, blockIdx, blockDim, gridDim;
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
static inline float atomicAdd(float* p, float v) { float o = *p; *p = o + v; return o; }
static inline double atomicAdd(double* p, double v) { double o = *p; *p = o + v; return o; }
static inline int atomicAdd(int* p, int v) { int o = *p; *p = (int)((unsigned)o + (unsigned)v); return o; }
static inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
  unsigned long long o = *p; *p = o + v; return o;
}
static inline unsigned atomicCAS(unsigned* p, unsigned expected, unsigned v) {
  unsigned o = *p; if (o == expected) *p = v; return o;
}
static inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
  unsigned long long o = *p; if (v > o) *p = v; return o;
}
// Warp operations: each emulated thread runs alone, so its warp is itself
// (code that takes a whole-warp path runs its one-lane fallback).
static inline unsigned __activemask() { return 1u << (threadIdx.x & 31u); }
static inline bool __all_sync(unsigned, bool p) { return p; }
template <class T> static inline T __shfl_sync(unsigned, T v, int) { return v; }
template <class T> static inline T __shfl_down_sync(unsigned, T v, unsigned) { return v; }
// Sets the emulated grid before the kernel's calls.
static inline void msl_set_thread(unsigned blocks, unsigned threads, unsigned b, unsigned t) {
  gridDim.x = blocks; blockDim.x = threads; blockIdx.x = b; threadIdx.x = t;
  gridDim.y = gridDim.z = blockDim.y = blockDim.z = 1;
}
)";
}

// A shared object compiled from `source` (after the prelude); unloaded and
// deleted with the object.
class HostModule {
 public:
  explicit HostModule(const std::string& source) {
    char dir[] = "/tmp/msl-cuda-host-XXXXXX";
    if (!mkdtemp(dir)) throw std::runtime_error("mkdtemp failed");
    dir_ = dir;
    std::string src = dir_ + "/kernels.cpp", lib = dir_ + "/kernels.so";
    std::ofstream(src) << cuda_host_prelude() << source;
    // No contraction into FMA and IEEE semantics: the kernels' arithmetic
    // is specified operation by operation (NVRTC runs with --fmad=false).
    std::string cmd = std::string(MSL_HOST_CXX) + " -std=c++17 -O1 -ffp-contract=off -w -shared -fPIC -o " + lib +
                      " " + src + " 2> " + dir_ + "/log.txt";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(dir_ + "/log.txt");
      std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      throw std::runtime_error("host compile failed:\n" + text.substr(0, 4000));
    }
    handle_ = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  }
  ~HostModule() {
    if (handle_) dlclose(handle_);
    std::string cmd = "rm -rf " + dir_;
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir_.c_str());
  }
  HostModule(const HostModule&) = delete;
  HostModule& operator=(const HostModule&) = delete;

  template <class F>
  F* symbol(const std::string& name) const {
    void* p = dlsym(handle_, name.c_str());
    if (!p) throw std::runtime_error("no symbol " + name);
    return reinterpret_cast<F*>(p);
  }

 private:
  std::string dir_;
  void* handle_ = nullptr;
};

}  // namespace msl::test
