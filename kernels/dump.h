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
#include <span>
#include <string>

#include "kernels/primitives.h"

namespace msl::kernels {

// Starts dumping into `dir` (created if missing; emptied of earlier .npy
// files and the index). Throws std::runtime_error naming the folder when
// it cannot be created or written.
void start_dump(const std::string& dir);
namespace dump_detail {
extern std::atomic<bool> on;
}
inline bool dumping() { return dump_detail::on.load(std::memory_order_relaxed); }
// Called by the registry after each kernel.
void dump_outputs(Prim p, std::span<const Tensor> outs);


}  // namespace msl::kernels
