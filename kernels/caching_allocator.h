// A stream-ordered caching allocator, shared by the devices.
//
// Freed blocks wait in a free list per (stream, size class) and are handed
// back to the next request of that class on that stream, because training
// allocates the same sizes every step and the system allocator (page faults,
// zeroing; cudaMalloc's device synchronization) is slow.
//
// Stream order: a block freed on stream S may be reused at once by later work
// on S (that work runs after the free). A block that other streams also used
// (record_stream) is reusable only when an event recorded on each of them
// has completed; until then it waits in a pending list. On the CPU there is
// one stream (the null stream) and every event is complete, so the CPU path
// is a free-list push and pop under a mutex.
//
// The memory itself comes from a BlockSource (aligned_alloc for the CPU,
// cudaMalloc for a GPU); the cache is bounded, and past the bound freed
// blocks go back to the source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "kernels/device.h"

namespace msl::kernels {

// Where a caching allocator's memory and events come from.
class BlockSource {
 public:
  virtual ~BlockSource() = default;
  // `bytes` (a size class) of fresh memory, or nullptr when exhausted.
  virtual void* raw_allocate(size_t bytes) = 0;
  virtual void raw_free(void* p, size_t bytes) = 0;
  // An event recorded on `stream` after the work queued so far; nullptr
  // means "already complete" (the CPU's only answer).
  virtual void* record_event(Stream stream) = 0;
  // True once the event's work has finished; the allocator then destroys it.
  virtual bool event_done(void* event) = 0;
  virtual void destroy_event(void* event) = 0;
};

class CachingAllocator {
 public:
  CachingAllocator(BlockSource& source, size_t max_cached_bytes);
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // At least `bytes` bytes (64-byte aligned) for work on `stream`. Throws
  // std::bad_alloc when the source is exhausted even after releasing the cache.
  void* allocate(size_t bytes, Stream stream);
  // Returns a block allocated on `stream`; later work on `stream` may reuse it.
  void free(void* p, size_t bytes, Stream stream);
  // Declares that work on `user` (a stream other than the block's own) reads
  // or writes the block at p, allocated with `bytes` on `owner`: when it is
  // freed, reuse waits for an event recorded on `user`.
  void record_stream(void* p, size_t bytes, Stream owner, Stream user);

  AllocatorStats stats();
  // Frees every cached (unused) block, waiting blocks whose events completed included.
  void release_cache();
  // Starts a new peak measurement: peak_bytes_in_use = bytes_in_use.
  void reset_peak();

  // The size class `bytes` rounds up to (64-byte steps up to 1 KiB, then
  // four classes per power of two: at most 25% waste).
  static size_t size_class(size_t bytes);

 private:
  static constexpr size_t kAlign = 64;
  static constexpr int kSmallClasses = 1024 / kAlign;

  // The free lists of one stream.
  struct Pool {
    std::vector<void*> small[kSmallClasses];  // classes 64..1024, the tiny tensors of eager dispatch
    std::map<size_t, std::vector<void*>> large;
    std::vector<void*>& list(size_t cls) { return cls <= 1024 ? small[cls / kAlign - 1] : large[cls]; }
  };
  // A freed block waiting for other streams' events before it joins its pool.
  struct Pending {
    void* p;
    size_t cls;
    Stream stream;
    std::vector<void*> events;
  };

  Pool& pool(Stream s) { return s == nullptr ? default_pool_ : other_pools_[s]; }
  void note_use(size_t cls);
  void collect_pending_locked();
  void release_locked();

  BlockSource& source_;
  size_t max_cached_;
  std::mutex mu_;
  Pool default_pool_;
  std::map<Stream, Pool> other_pools_;
  // Blocks used on other streams: (block, owner) -> the streams that used it.
  std::map<std::pair<void*, Stream>, std::vector<Stream>> cross_stream_;
  std::vector<Pending> pending_;
  AllocatorStats stats_;
};

}  // namespace msl::kernels
