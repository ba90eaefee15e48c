// The worker threads of msl.dataset and the jobs that run on them.
//
// Design:
//  - One process-wide pool of threads, created on first use and grown (never
//    shrunk) to the largest worker count a pipeline asked for. Starting
//    threads per chunk or per batch cost tens of microseconds each time,
//    comparable to the whole per-batch work of a small-image pipeline.
//  - A job splits its rows over `workers` tasks, task k taking rows k,
//    k + tasks, ...; every row writes only its own slot, so results never
//    depend on which thread ran what. The task that finishes last calls the
//    job's finish step (stacking, error reporting) and fulfils its promise,
//    so nothing waits on a pool thread and jobs never deadlock the pool.
//  - Row errors are kept per row and the first failing row (in row order)
//    is reported, whatever finished first.
//  - Everything here is plain C++ over kernels::Tensor; the interpreter
//    binds it in module_msl_dataset.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <vector>

#include "interp/dataset/dataset_core.h"

namespace msl::dataset {

// Calls row(i) for i in [0, n) on up to `workers` pool tasks, then finish()
// once, on the thread that completed the last row (on the calling thread
// when n == 0). Returns at once.
void for_each_row_async(size_t n, int workers, std::function<void(size_t)> row, std::function<void()> finish);

// A map() chunk: apply_ops(ops, rows[i], seeds[i]) for every row. With
// workers <= 1 run_chunk works on the calling thread.
std::future<std::vector<Tensor>> submit_chunk(std::vector<ImageOp> ops, std::vector<Tensor> rows,
                                              std::vector<uint64_t> seeds, int workers);
std::vector<Tensor> run_chunk(const std::vector<ImageOp>& ops, std::vector<Tensor> rows,
                              const std::vector<uint64_t>& seeds, int workers);

// ------------------------------------------------------------ fused batches

// One map() node over a column of a fused pipeline: its op chain and, when
// some op is random, the index of its seed list in a batch's seeds.
struct BatchStage {
  int column = 0;
  std::vector<ImageOp> ops;
  int seed_slot = -1;
};

// Batches of an array source through map() chains: per batch, rows are
// gathered by index from the source columns (first axis = rows), each
// column's stages run per row on the pool, and every column is stacked into
// one tensor. Equivalent to fetching rows, mapping them and stacking.
struct BatchPlan {
  std::vector<Tensor> columns;     // contiguous
  std::vector<BatchStage> stages;  // in pipeline order (source side first)
  int random_stages = 0;
  int workers = 1;
};

// The batch of source rows `rows`; seeds[s][i] is row i's seed for the
// stage with seed_slot s.
std::future<std::vector<Tensor>> submit_batch(std::shared_ptr<const BatchPlan> plan, std::vector<int64_t> rows,
                                              std::vector<std::vector<uint64_t>> seeds);

}  // namespace msl::dataset
