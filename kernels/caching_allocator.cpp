#include "kernels/caching_allocator.h"

#include <new>

namespace msl::kernels {

CachingAllocator::CachingAllocator(BlockSource& source, size_t max_cached_bytes)
    : source_(source), max_cached_(max_cached_bytes) {}

size_t CachingAllocator::size_class(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes <= 1024) return (bytes + kAlign - 1) & ~(kAlign - 1);
  size_t p = size_t(1) << (63 - __builtin_clzll(bytes - 1));  // largest power of two < bytes
  size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

void CachingAllocator::note_use(size_t cls) {
  stats_.bytes_in_use += cls;
  if (stats_.bytes_in_use > stats_.peak_bytes_in_use) stats_.peak_bytes_in_use = stats_.bytes_in_use;
}

void* CachingAllocator::allocate(size_t bytes, Stream stream) {
  size_t cls = size_class(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.allocations;
  if (!pending_.empty()) collect_pending_locked();
  std::vector<void*>& list = pool(stream).list(cls);
  if (!list.empty()) {
    void* p = list.back();
    list.pop_back();
    stats_.bytes_cached -= cls;
    ++stats_.cache_hits;
    note_use(cls);
    return p;
  }
  void* p = source_.raw_allocate(cls);
  if (!p) {
    release_locked();
    p = source_.raw_allocate(cls);
    if (!p) throw std::bad_alloc();
  }
  note_use(cls);
  return p;
}

void CachingAllocator::free(void* p, size_t bytes, Stream stream) {
  if (!p) return;
  size_t cls = size_class(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.bytes_in_use -= cls;
  if (!cross_stream_.empty()) {
    auto it = cross_stream_.find({p, stream});
    if (it != cross_stream_.end()) {
      Pending w{p, cls, stream, {}};
      for (Stream user : it->second)
        if (void* e = source_.record_event(user)) w.events.push_back(e);
      cross_stream_.erase(it);
      if (!w.events.empty()) {
        stats_.bytes_cached += cls;
        pending_.push_back(std::move(w));
        return;
      }
    }
  }
  if (stats_.bytes_cached + cls > max_cached_) {
    source_.raw_free(p, cls);
    return;
  }
  pool(stream).list(cls).push_back(p);
  stats_.bytes_cached += cls;
}

void CachingAllocator::record_stream(void* p, size_t /*bytes*/, Stream owner, Stream user) {
  if (user == owner) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Stream>& users = cross_stream_[{p, owner}];
  for (Stream s : users)
    if (s == user) return;
  users.push_back(user);
}

void CachingAllocator::collect_pending_locked() {
  size_t kept = 0;
  for (Pending& w : pending_) {
    size_t live = 0;
    for (void* e : w.events) {
      if (source_.event_done(e))
        source_.destroy_event(e);
      else
        w.events[live++] = e;
    }
    w.events.resize(live);
    if (live == 0)
      pool(w.stream).list(w.cls).push_back(w.p);  // still counted in bytes_cached
    else
      pending_[kept++] = std::move(w);
  }
  pending_.resize(kept);
}

void CachingAllocator::release_locked() {
  collect_pending_locked();
  auto drain = [&](Pool& pl) {
    for (auto& [cls, list] : pl.large) {
      for (void* p : list) source_.raw_free(p, cls);
      stats_.bytes_cached -= cls * list.size();
    }
    pl.large.clear();
    for (int i = 0; i < kSmallClasses; ++i) {
      size_t cls = (i + 1) * kAlign;
      for (void* p : pl.small[i]) source_.raw_free(p, cls);
      stats_.bytes_cached -= cls * pl.small[i].size();
      pl.small[i].clear();
    }
  };
  drain(default_pool_);
  for (auto& [s, pl] : other_pools_) drain(pl);
}

AllocatorStats CachingAllocator::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingAllocator::release_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  release_locked();
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
}

}  // namespace msl::kernels
