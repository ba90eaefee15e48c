// Graph units of GPU kernels (jit/codegen/cuda_unit.h), without a GPU: the
// unit of several programs holds the helpers once and one kernel per
// distinct program, under the names the fused nodes launch; NVRTC compiles
// it (a cubin: an ELF image) once, and a second compile of the same source
// is read from the disk cache, byte for byte the same; a damaged cache
// entry is compiled again; a source NVRTC rejects is a DeviceError with
// its log and the graph's name. Without NVRTC (a build without the CUDA
// toolkit) compiling is a DeviceError saying why.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../temp_dir.h"
#include "jit/codegen/cuda_unit.h"
#include "kernels/cuda/elementwise_cuda.h"
#include "kernels/cuda/nvrtc_compiler.h"
#include "kernels/errors.h"

using namespace msl::jit::codegen;
using msl::kernels::EwOp;
using msl::kernels::EwProgram;
using msl::test::ScopedEnv;
using msl::test::TempDir;
namespace fs = std::filesystem;

namespace {

// out = relu(in0 * c + in1)
EwProgram scale_add_relu(float c) {
  EwProgram p;
  p.num_inputs = 2;
  int x = p.input(0), y = p.input(1);
  p.outputs = {p.unary(EwOp::Relu, p.binary(EwOp::Add, p.binary(EwOp::Mul, x, p.constant(c)), y))};
  return p;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

}  // namespace

TEST_CASE("a graph unit holds the helpers once and one kernel per distinct program") {
  EwProgram a = scale_add_relu(2.0f), b = scale_add_relu(3.0f), a_again = scale_add_relu(2.0f);
  std::vector<const EwProgram*> programs{&a, &b, &a_again};
  std::string unit = render_cuda_unit(programs);
  CHECK(count(unit, "__device__ __forceinline__ float msl_exp") == 1);
  CHECK(count(unit, "extern \"C\" __global__ void") == 2);
  CHECK(count(unit, "extern \"C\" __global__ void " + msl::kernels::cuda::cuda_kernel_name(a) + "(") == 1);
  CHECK(count(unit, "extern \"C\" __global__ void " + msl::kernels::cuda::cuda_kernel_name(b) + "(") == 1);
  CHECK(msl::kernels::cuda::cuda_kernel_name(a) != msl::kernels::cuda::cuda_kernel_name(b));
  CHECK(count(unit, "0x1p+1f") == 1);    // a's constant
  CHECK(count(unit, "0x1.8p+1f") == 1);  // b's
}

TEST_CASE("graph units are compiled by NVRTC once and then read from the disk cache") {
  TempDir dir;
  ScopedEnv cache("XDG_CACHE_HOME", dir.path.c_str());
  EwProgram a = scale_add_relu(2.0f), b = scale_add_relu(-1.5f);
  std::vector<const EwProgram*> programs{&a, &b};
  std::string source = render_cuda_unit(programs);
  if (std::string why = msl::kernels::cuda::nvrtc_unavailable_reason(); !why.empty()) {
    MESSAGE("NVRTC unavailable (" << why << "): checking the error only");
    CHECK_THROWS_AS(compile_cuda_unit(source, "@g"), msl::kernels::DeviceError);
    return;
  }
  CudaUnitStats before = cuda_unit_stats();
  auto first = compile_cuda_unit(source, "@g");
  REQUIRE(first->image.size() > 4);
  CHECK_FALSE(first->ptx);
  CHECK(first->image.compare(0, 4, "\x7f" "ELF") == 0);  // a cubin
  CHECK(first->arch >= 50);
  CHECK(first->source == source);
  CudaUnitStats after_first = cuda_unit_stats();
  CHECK(after_first.compiled == before.compiled + 1);
  CHECK(after_first.disk_hits == before.disk_hits);
  std::vector<fs::path> entries = files_in(dir.path);
  REQUIRE(entries.size() == 1);

  auto second = compile_cuda_unit(source, "@g");
  CHECK(second->image == first->image);
  CudaUnitStats after_second = cuda_unit_stats();
  CHECK(after_second.compiled == after_first.compiled);
  CHECK(after_second.disk_hits == after_first.disk_hits + 1);

  // A damaged entry is a miss: compiled again and rewritten.
  {
    std::fstream f(entries[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(entries[0]) - 3));
    f.put('\x5a');
  }
  auto third = compile_cuda_unit(source, "@g");
  CHECK(third->image == first->image);
  CHECK(cuda_unit_stats().compiled == after_second.compiled + 1);
  CHECK(compile_cuda_unit(source, "@g")->image == first->image);
  CHECK(cuda_unit_stats().disk_hits == after_second.disk_hits + 1);
}

TEST_CASE("a unit NVRTC rejects is a DeviceError with its log and the graph's name") {
  if (!msl::kernels::cuda::nvrtc_unavailable_reason().empty()) return;
  TempDir dir;
  ScopedEnv cache("XDG_CACHE_HOME", dir.path.c_str());
  EwProgram a = scale_add_relu(2.0f);
  std::vector<const EwProgram*> programs{&a};
  std::string source = render_cuda_unit(programs);
  source.replace(source.find("out0[i] ="), 9, "out0[i] = =");  // no longer C
  std::string message;
  try {
    compile_cuda_unit(source, "@train_step");
  } catch (const msl::kernels::DeviceError& e) {
    message = e.what();
  }
  INFO(message);
  CHECK(message.find("@train_step") != std::string::npos);
  CHECK(message.find("error") != std::string::npos);
  CHECK(files_in(dir.path).empty());  // nothing stored
}
