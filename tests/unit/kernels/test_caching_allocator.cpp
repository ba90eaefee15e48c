// The stream-ordered caching allocator against a fake device whose events
// complete when the test says so.
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>

#include "kernels/caching_allocator.h"

using namespace msl::kernels;

namespace {

struct FakeBlocks final : BlockSource {
  int allocated = 0, freed = 0;
  std::set<void*> done_events;
  int next_event = 1;
  void* raw_allocate(size_t bytes) override {
    ++allocated;
    return std::aligned_alloc(64, bytes);
  }
  void raw_free(void* p, size_t) override {
    ++freed;
    std::free(p);
  }
  void* record_event(Stream) override { return reinterpret_cast<void*>(static_cast<uintptr_t>(next_event++)); }
  bool event_done(void* e) override { return done_events.count(e) > 0; }
  void destroy_event(void*) override {}
};

Stream stream(int i) { return reinterpret_cast<Stream>(static_cast<uintptr_t>(i)); }

}  // namespace

TEST_CASE("size classes: 64-byte steps to 1 KiB, then four per power of two") {
  CHECK(CachingAllocator::size_class(0) == 64);
  CHECK(CachingAllocator::size_class(65) == 128);
  CHECK(CachingAllocator::size_class(1024) == 1024);
  CHECK(CachingAllocator::size_class(1025) == 1280);
  CHECK(CachingAllocator::size_class(4097) == 5120);
}

TEST_CASE("a freed block is reused on its own stream, not on another") {
  FakeBlocks src;
  CachingAllocator a(src, 1 << 20);
  void* p = a.allocate(100, nullptr);
  a.free(p, 100, nullptr);
  CHECK(a.allocate(90, nullptr) == p);  // same class, same stream: a cache hit
  CHECK(a.stats().cache_hits == 1);
  void* q = a.allocate(100, stream(1));
  CHECK(q != p);
  a.free(q, 100, stream(1));
  void* r = a.allocate(100, nullptr);
  CHECK(r != q);  // stream 1's block waits for stream 1
  CHECK(src.allocated == 3);
  a.free(p, 100, nullptr);
  a.free(r, 100, nullptr);
  a.release_cache();
  CHECK(src.freed == 3);
  CHECK(a.stats().bytes_cached == 0);
}

TEST_CASE("a block another stream used is reused only after that stream's event completed") {
  FakeBlocks src;
  CachingAllocator a(src, 1 << 20);
  void* p = a.allocate(4096, nullptr);
  a.record_stream(p, 4096, nullptr, stream(2));
  a.free(p, 4096, nullptr);
  CHECK(a.stats().bytes_in_use == 0);
  void* q = a.allocate(4096, nullptr);
  CHECK(q != p);  // stream 2 may still be reading p
  src.done_events.insert(reinterpret_cast<void*>(uintptr_t{1}));
  void* r = a.allocate(4096, nullptr);
  CHECK(r == p);
  a.free(q, 4096, nullptr);
  a.free(r, 4096, nullptr);
  a.release_cache();
  CHECK(src.freed == src.allocated);
}
