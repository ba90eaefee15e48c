// Memory planning (see memory_plan.h): a replay of the executor's order
// counting the bytes each live buffer holds.
#include "jit/passes/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "jit/passes/fuse_elementwise.h"
#include "lang/ir/liveness.h"

namespace msl::jit {

using ir::Node;

namespace {

// Bytes of the tensors in a value; `known` turns false for values whose
// size the types do not give (a host value that might hold tensors).
int64_t value_bytes(const AbsValue& a, bool& known) {
  if (auto t = a.get_if<AbsTensor>()) return t->shape.product() * static_cast<int64_t>(kernels::dtype_size(t->dtype));
  if (auto t = a.get_if<AbsTuple>()) {
    int64_t sum = 0;
    for (const AbsValue& x : t->items) sum += value_bytes(x, known);
    return sum;
  }
  if (a.is<AbsAny>()) known = false;
  return 0;
}

enum class Effect { Allocates, Aliases, Nothing };

Effect effect_of(const Node* n) {
  const Node* c = n->callee();
  if (const ir::PrimRef* p = c->as_prim())
    return kernels::prim_def(p->prim).kind == kernels::PrimKind::Compute ? Effect::Allocates : Effect::Aliases;
  if (const ir::IrOp* op = c->as_ir_op()) {
    switch (*op) {
      case ir::IrOp::tuple_getitem:
      case ir::IrOp::make_tuple:
      case ir::IrOp::depend:
        return Effect::Aliases;
      case ir::IrOp::zeros_like:
        return Effect::Allocates;
      default:
        return Effect::Nothing;
    }
  }
  return c->as_host() ? Effect::Allocates : Effect::Nothing;
}

class Replay {
 public:
  explicit Replay(const Specialized& sp) : sp_(sp) {}

  MemoryPlan run(const ir::FuncGraph& g) {
    ir::Liveness live = ir::liveness(g);
    for (size_t k = 0; k < live.order.size(); ++k) {
      const Node* n = live.order[k];
      if (!n->is_apply()) continue;
      std::unordered_set<const Node*> dying(live.release[k].begin(), live.release[k].end());
      step(n, dying);
      for (const Node* d : live.release[k]) drop(d);
    }
    return plan_;
  }

 private:
  // Passes after specialization type what they create or re-create
  // (Specialized::keep_types), so every node has its type.
  const AbsValue* type(const Node* n) const {
    auto it = sp_.types.find(n->id());
    return it == sp_.types.end() ? nullptr : &it->second;
  }

  void step(const Node* n, const std::unordered_set<const Node*>& dying) {
    std::vector<const Node*>& own = owners_[n];
    switch (effect_of(n)) {
      case Effect::Allocates: {
        const AbsValue* t = type(n);
        bool known = t != nullptr;
        int64_t bytes = t ? value_bytes(*t, known) : 0;
        plan_.complete &= known;
        plan_.total_bytes += bytes;
        if (bytes > 0) ++plan_.buffers;
        for (const Node* reused : in_place(n, dying)) {
          const Node* o = owners_[reused][0];
          own.push_back(o);
          ++bufs_[o].refs;
          bytes -= bufs_[o].bytes;
          ++plan_.in_place;
          plan_.in_place_bytes += bufs_[o].bytes;
        }
        bufs_[n] = {bytes, 1};
        own.push_back(n);
        live_ += bytes;
        plan_.peak_bytes = std::max(plan_.peak_bytes, live_);
        break;
      }
      case Effect::Aliases:
        for (size_t i = 0; i < n->num_args(); ++i) {
          auto it = owners_.find(n->arg(i));
          if (it == owners_.end()) continue;
          for (const Node* o : it->second) {
            own.push_back(o);
            ++bufs_[o].refs;
          }
        }
        break;
      case Effect::Nothing:
        break;
    }
  }

  // The operands whose buffers a fused loop writes its outputs over: each
  // dies here, is passed once, is the only holder of its buffer, and has
  // the cluster's shape (as FusedElementwise::run decides at run time).
  std::vector<const Node*> in_place(const Node* n, const std::unordered_set<const Node*>& dying) {
    std::vector<const Node*> out;
    auto fused = dynamic_cast<const FusedElementwise*>(n->callee()->as_host());
    if (!fused) return out;
    size_t outputs = fused->program().outputs.size();
    for (size_t i = 0; i < n->num_args() && out.size() < outputs; ++i) {
      const Node* a = n->arg(i);
      if (!dying.count(a)) continue;
      bool once = true;
      for (size_t j = 0; j < n->num_args(); ++j) once &= j == i || n->arg(j) != a;
      auto it = owners_.find(a);
      const AbsValue* t = type(a);
      const AbsTensor* at = t ? t->get_if<AbsTensor>() : nullptr;
      if (!once || it == owners_.end() || it->second.size() != 1 || bufs_[it->second[0]].refs != 1 || !at ||
          at->dtype != kernels::DType::Float32 || at->shape != fused->shape())
        continue;
      out.push_back(a);
    }
    return out;
  }

  void drop(const Node* d) {
    auto it = owners_.find(d);
    if (it == owners_.end()) return;
    for (const Node* o : it->second) {
      Buf& b = bufs_[o];
      if (--b.refs == 0) live_ -= b.bytes;
    }
    owners_.erase(it);
  }

  struct Buf {
    int64_t bytes = 0;
    int refs = 0;
  };
  const Specialized& sp_;
  MemoryPlan plan_;
  int64_t live_ = 0;
  std::unordered_map<const Node*, std::vector<const Node*>> owners_;  // value -> buffers it keeps alive
  std::unordered_map<const Node*, Buf> bufs_;                         // allocating node -> its buffer
};

}  // namespace

std::string format_bytes(int64_t bytes) {
  char buf[32];
  if (bytes < 1024) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else if (bytes < (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  else if (bytes < (int64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / 1073741824.0);
  return buf;
}

std::string MemoryPlan::summary() const {
  std::string s = "peak " + format_bytes(peak_bytes) + " of intermediates (" + format_bytes(total_bytes) +
                  " without reuse), " + std::to_string(buffers) + (buffers == 1 ? " buffer, " : " buffers, ") +
                  std::to_string(in_place) + " written in place";
  if (!complete) s += " (some sizes unknown)";
  return s;
}

MemoryPlan plan_memory(const ir::FuncGraph& g, const Specialized& sp) { return Replay(sp).run(g); }

}  // namespace msl::jit
