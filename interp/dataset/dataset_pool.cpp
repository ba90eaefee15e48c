// The shared worker pool of msl.dataset and map() chunk jobs; see
// dataset_pool.h for the design.
#include "interp/dataset/dataset_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "kernels/trace.h"

namespace msl::dataset {

namespace {

class WorkerPool {
 public:
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void grow(size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (threads_.size() < n) threads_.emplace_back([this] { loop(); });
  }

  void post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (stop_) return;  // at exit: nobody waits for what is still queued
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

WorkerPool& pool() {
  static WorkerPool p;
  return p;
}

struct RowJob {
  size_t n = 0, tasks = 0;
  std::function<void(size_t)> row;
  std::function<void()> finish;
  std::atomic<size_t> left{0};
};

struct ChunkJob {
  std::vector<ImageOp> ops;
  std::vector<Tensor> rows;
  std::vector<uint64_t> seeds;
  std::vector<std::string> errors;
  std::promise<std::vector<Tensor>> done;

  void run_row(size_t i) {
    try {
      rows[i] = apply_ops(ops, std::move(rows[i]), seeds[i]);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    } catch (...) {  // nothing may escape into a pool thread
      errors[i] = "map: unknown error in a transform";
    }
  }
  // The first failing row in row order, or nothing.
  const std::string* first_error() const {
    for (auto& e : errors)
      if (!e.empty()) return &e;
    return nullptr;
  }
};

}  // namespace

void for_each_row_async(size_t n, int workers, std::function<void(size_t)> row, std::function<void()> finish) {
  if (n == 0) {
    finish();
    return;
  }
  auto job = std::make_shared<RowJob>();
  job->n = n;
  job->tasks = std::min(static_cast<size_t>(std::max(workers, 1)), n);
  job->row = std::move(row);
  job->finish = std::move(finish);
  job->left = job->tasks;
  pool().grow(job->tasks);
  for (size_t k = 0; k < job->tasks; ++k)
    pool().post([job, k] {
      {
        kernels::TraceSpan span("rows", "data");  // the profiler's timeline: a worker's share of a chunk or batch
        for (size_t i = k; i < job->n; i += job->tasks) job->row(i);
      }
      if (job->left.fetch_sub(1, std::memory_order_acq_rel) == 1) job->finish();
    });
}

std::future<std::vector<Tensor>> submit_chunk(std::vector<ImageOp> ops, std::vector<Tensor> rows,
                                              std::vector<uint64_t> seeds, int workers) {
  auto job = std::make_shared<ChunkJob>();
  job->ops = std::move(ops);
  job->rows = std::move(rows);
  job->seeds = std::move(seeds);
  job->errors.resize(job->rows.size());
  auto result = job->done.get_future();
  for_each_row_async(
      job->rows.size(), workers, [job](size_t i) { job->run_row(i); },
      [job] {
        if (const std::string* e = job->first_error())
          job->done.set_exception(std::make_exception_ptr(DatasetError(*e)));
        else
          job->done.set_value(std::move(job->rows));
      });
  return result;
}

std::vector<Tensor> run_chunk(const std::vector<ImageOp>& ops, std::vector<Tensor> rows,
                              const std::vector<uint64_t>& seeds, int workers) {
  if (workers > 1 && rows.size() > 1) return submit_chunk(ops, std::move(rows), seeds, workers).get();
  ChunkJob job;  // on this thread: eager transforms and one-worker maps skip the hand-off
  job.ops = ops;
  job.rows = std::move(rows);
  job.seeds = seeds;
  job.errors.resize(job.rows.size());
  for (size_t i = 0; i < job.rows.size(); ++i) job.run_row(i);
  if (const std::string* e = job.first_error()) throw DatasetError(*e);
  return std::move(job.rows);
}

}  // namespace msl::dataset
