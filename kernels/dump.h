// `msl --dump DIR`: every kernel's outputs written as NumPy .npy files, in
// execution order, whichever path ran the kernel (PyNative dispatch, the
// graph executor, a data pipeline job), with an index of what ran.
//
// Two runs of one program (PyNative and graph mode, or two builds) dumped
// into two folders can then be compared file by file: the first file that
// differs names the first diverging op. Files are DIR/NNNNNN_<primitive>.npy
// (NNNNNN_<primitive>_<k>.npy for multi-output primitives), and
// DIR/index.txt has one line per file: name, dtype, shape, and where the op
// came from (` @ FILE:LINE`, or ` @ -`). .npy because
// NumPy, PyTorch and MindSpore users can load it (numpy.load); bfloat16,
// which NumPy lacks, is written as float32.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/primitives.h"

namespace msl::kernels {

// What a dump writes: MindSpore's dump settings (interp/dump_config.h reads
// them from MindSpore's JSON file). A kernel's inputs are written as
// NNNNNN_<primitive>_input_<k>.npy, before its outputs' files.
struct DumpConfig {
  std::string dir;
  bool inputs = false;  // MindSpore's input_output: 0 both, 1 inputs, 2 outputs
  bool outputs = true;
  // Which kernels: empty for all; else a primitive's name, in any case and
  // with or without underscores (MindSpore's "MatMul", "BiasAdd"), or a
  // source site "FILE:LINE" (FILE: the path or its last components).
  std::vector<std::string> kernels;
  // Which iterations, as inclusive ranges (MindSpore's "0|5-8"); empty: all.
  // An iteration is a step of Model.train (dump_next_iteration); a program
  // without one runs in iteration 0.
  std::vector<std::pair<int64_t, int64_t>> iterations;
};

// Starts dumping into `config.dir` (created if missing; emptied of earlier
// .npy files and the index). Throws std::runtime_error naming the folder
// when it cannot be created or written.
void start_dump(const DumpConfig& config);
inline void start_dump(const std::string& dir) {
  DumpConfig c;
  c.dir = dir;
  start_dump(c);
}
// Stops dumping (set_context(enable_dump=False)); the files stay.
void stop_dump();
// A training step begins: Model.train's first step is iteration 0 (with
// whatever ran before it), its second iteration 1, as MindSpore counts.
void dump_next_iteration();
namespace dump_detail {
extern std::atomic<bool> on;
}
inline bool dumping() { return dump_detail::on.load(std::memory_order_relaxed); }
// Called by the registry before each kernel: writes its inputs if the
// config asks for them; returns the kernel's dump number, -1 when the
// config leaves the kernel out.
int64_t dump_inputs(Prim p, std::span<const Tensor> in);
// ... and after it, with that number.
void dump_outputs(int64_t seq, Prim p, std::span<const Tensor> outs);


}  // namespace msl::kernels
