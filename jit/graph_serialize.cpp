// Flat graphs of primitives as bytes and back; the format is described in
// graph_serialize.h.
#include "jit/graph_serialize.h"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "jit/passes/fuse_elementwise.h"
#include "kernels/device.h"
#include "kernels/dtype.h"
#include "lang/ir/verifier.h"

namespace msl::jit {

using ir::ConstValue;
using ir::FuncGraph;
using ir::Node;

namespace {

constexpr char kMagic[8] = {'M', 'S', 'L', 'G', 'R', 'P', 'H', '\0'};

// Value tags of constants and attribute values.
enum class Tag : uint8_t { None, Bool, Int, Float, Str, Tensor, Prim, IrOp, Fused };
enum class AttrTag : uint8_t { Bool, Int, Float, Ints, Str, DType };
enum class NodeTag : uint8_t { Constant = 1, Apply = 2 };

// ------------------------------------------------------------------ writing

template <class T>
void put(std::string& s, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  s.append(b, sizeof(T));
}
void put_str(std::string& s, std::string_view v) {
  put<uint32_t>(s, static_cast<uint32_t>(v.size()));
  s.append(v);
}
void put_loc(std::string& s, const ir::Loc& l) {
  put_str(s, l.file ? std::string_view(*l.file) : std::string_view());
  put<uint32_t>(s, l.line);
  put<uint32_t>(s, l.col);
  put_str(s, l.scope ? std::string_view(*l.scope) : std::string_view());
}
void put_dims(std::string& s, const kernels::Dims& d) {
  put<uint8_t>(s, static_cast<uint8_t>(d.size()));
  for (int64_t x : d) put<int64_t>(s, x);
}

void put_attr(std::string& s, const kernels::AttrValue& v) {
  if (auto b = std::get_if<bool>(&v))
    put<uint8_t>(s, uint8_t(AttrTag::Bool)), put<uint8_t>(s, *b);
  else if (auto i = std::get_if<int64_t>(&v))
    put<uint8_t>(s, uint8_t(AttrTag::Int)), put<int64_t>(s, *i);
  else if (auto f = std::get_if<double>(&v))
    put<uint8_t>(s, uint8_t(AttrTag::Float)), put<double>(s, *f);
  else if (auto is = std::get_if<std::vector<int64_t>>(&v)) {
    put<uint8_t>(s, uint8_t(AttrTag::Ints));
    put<uint32_t>(s, static_cast<uint32_t>(is->size()));
    for (int64_t x : *is) put<int64_t>(s, x);
  } else if (auto str = std::get_if<std::string>(&v))
    put<uint8_t>(s, uint8_t(AttrTag::Str)), put_str(s, *str);
  else
    put<uint8_t>(s, uint8_t(AttrTag::DType)), put<uint8_t>(s, static_cast<uint8_t>(std::get<kernels::DType>(v)));
}

bool put_const(std::string& s, const ConstValue& v, std::string* why) {
  if (std::holds_alternative<ir::NoneValue>(v))
    put<uint8_t>(s, uint8_t(Tag::None));
  else if (auto b = std::get_if<bool>(&v))
    put<uint8_t>(s, uint8_t(Tag::Bool)), put<uint8_t>(s, *b);
  else if (auto i = std::get_if<int64_t>(&v))
    put<uint8_t>(s, uint8_t(Tag::Int)), put<int64_t>(s, *i);
  else if (auto f = std::get_if<double>(&v))
    put<uint8_t>(s, uint8_t(Tag::Float)), put<double>(s, *f);
  else if (auto str = std::get_if<std::string>(&v))
    put<uint8_t>(s, uint8_t(Tag::Str)), put_str(s, *str);
  else if (auto t = std::get_if<kernels::Tensor>(&v)) {
    if (t->device() && t->device() != kernels::cpu_device()) {
      if (why) *why = "a tensor constant not on the CPU";
      return false;
    }
    kernels::Tensor c = t->contiguous();
    put<uint8_t>(s, uint8_t(Tag::Tensor));
    put<uint8_t>(s, static_cast<uint8_t>(c.dtype()));
    put_dims(s, c.shape());
    put<uint64_t>(s, c.nbytes());
    if (c.nbytes() > 0) s.append(static_cast<const char*>(c.raw()), c.nbytes());
  } else if (auto p = std::get_if<ir::PrimRef>(&v)) {
    put<uint8_t>(s, uint8_t(Tag::Prim));
    put_str(s, kernels::prim_name(p->prim));
    put<uint32_t>(s, static_cast<uint32_t>(p->attrs.items().size()));
    for (const auto& [name, value] : p->attrs.items()) {
      put_str(s, name);
      put_attr(s, value);
    }
  } else if (auto op = std::get_if<ir::IrOp>(&v)) {
    put<uint8_t>(s, uint8_t(Tag::IrOp));
    put_str(s, ir::ir_op_name(*op));
  } else if (auto h = std::get_if<ir::HostRef>(&v)) {
    auto fused = dynamic_cast<const FusedElementwise*>(h->get());
    if (!fused) {
      if (why) *why = "it calls the host object $" + (*h)->name();
      return false;
    }
    // The program's text is the loop's compile cache key, so it names
    // every field code generation reads: a program that does not read back
    // to the same text (a field this writer does not know) is not stored.
    std::string program;
    write_ew_program(program, fused->program());
    size_t at = 0;
    codegen::EwProgram back;
    if (!parse_ew_program(program, at, back) || back.text() != fused->program().text()) {
      if (why) *why = "a fused loop's program does not round-trip through its bytes";
      return false;
    }
    put<uint8_t>(s, uint8_t(Tag::Fused));
    s += program;
    put_dims(s, fused->shape());
    put<uint32_t>(s, static_cast<uint32_t>(fused->sum_shapes().size()));
    for (const kernels::Dims& d : fused->sum_shapes()) put_dims(s, d);
    put<uint64_t>(s, fused->ops());
  } else {
    if (why) *why = "it refers to the graph @" + std::get<FuncGraph*>(v)->name();
    return false;
  }
  return true;
}

// ------------------------------------------------------------------ reading

// A cursor over untrusted bytes: every read checks what is left and
// remembers where the first failure was.
struct Reader {
  explicit Reader(std::string_view bytes, size_t at = 0) : b(bytes), pos(at) {}
  std::string_view b;
  size_t pos = 0;
  std::string error;
  size_t error_at = 0;

  bool fail(const std::string& what) {
    if (error.empty()) error = what, error_at = pos;
    return false;
  }
  size_t left() const { return b.size() - pos; }
  template <class T>
  bool get(T& v) {
    if (left() < sizeof(T)) return fail("truncated");
    std::memcpy(&v, b.data() + pos, sizeof(T));
    pos += sizeof(T);
    return true;
  }
  bool get_str(std::string& s) {
    uint32_t n = 0;
    if (!get(n)) return false;
    if (left() < n) return fail("string of " + std::to_string(n) + " bytes past the end");
    s.assign(b.data() + pos, n);
    pos += n;
    return true;
  }
  bool get_dims(kernels::Dims& d) {
    uint8_t rank = 0;
    if (!get(rank)) return false;
    if (rank > kernels::kMaxDims) return fail("rank " + std::to_string(rank) + " above the maximum");
    d = kernels::Dims();
    for (uint8_t i = 0; i < rank; ++i) {
      int64_t x = 0;
      if (!get(x)) return false;
      if (x < 0) return fail("negative dimension");
      d.push_back(x);
    }
    return true;
  }
};

bool get_loc(Reader& r, ir::IrModule& m, ir::Loc& loc) {
  std::string file, scope;
  uint32_t line = 0, col = 0;
  if (!r.get_str(file) || !r.get(line) || !r.get(col) || !r.get_str(scope)) return false;
  loc = m.with_scope(file.empty() ? ir::Loc{} : m.loc(file, line, col), scope);
  return true;
}

// A bool, integer, float or string read into variant `v` (an attribute
// or a constant).
template <class T, class V>
bool get_as(Reader& r, V& v) {
  T x{};
  if constexpr (std::is_same_v<T, bool>) {
    uint8_t b = 0;
    if (!r.get(b) || b > 1) return r.fail("bad bool");
    x = b != 0;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!r.get_str(x)) return false;
  } else {
    if (!r.get(x)) return false;
  }
  v = std::move(x);
  return true;
}

bool get_attr(Reader& r, kernels::AttrValue& v) {
  uint8_t tag = 0;
  if (!r.get(tag)) return false;
  switch (static_cast<AttrTag>(tag)) {
    case AttrTag::Bool: return get_as<bool>(r, v);
    case AttrTag::Int: return get_as<int64_t>(r, v);
    case AttrTag::Float: return get_as<double>(r, v);
    case AttrTag::Ints: {
      uint32_t n = 0;
      if (!r.get(n)) return false;
      if (r.left() / sizeof(int64_t) < n) return r.fail("attribute list past the end");
      std::vector<int64_t> xs(n);
      for (int64_t& x : xs) r.get(x);
      v = std::move(xs);
      return true;
    }
    case AttrTag::Str: return get_as<std::string>(r, v);
    case AttrTag::DType: {
      uint8_t d = 0;
      if (!r.get(d) || d >= kernels::kNumDTypes) return r.fail("bad dtype");
      v = static_cast<kernels::DType>(d);
      return true;
    }
  }
  return r.fail("unknown attribute kind " + std::to_string(tag));
}

bool get_tensor(Reader& r, kernels::Tensor& out) {
  uint8_t d = 0;
  kernels::Dims shape;
  uint64_t nbytes = 0;
  if (!r.get(d) || d >= kernels::kNumDTypes) return r.fail("bad dtype");
  if (!r.get_dims(shape) || !r.get(nbytes)) return false;
  auto dtype = static_cast<kernels::DType>(d);
  // The dimensions other than 0 may not multiply past a tensor's 2^40
  // elements: an empty tensor has no bytes to bound them, and its strides
  // are their product ([0, 2^41, 2^41] would overflow them; [2^41, 0] the
  // tensor refuses).
  uint64_t nonzero = 1;
  for (int64_t x : shape)
    if (x != 0 && (__builtin_mul_overflow(nonzero, static_cast<uint64_t>(x), &nonzero) || nonzero > (uint64_t{1} << 40)))
      return r.fail("tensor shape " + shape.str() + " is too large");
  // The element count, without overflowing on absurd dimensions.
  uint64_t numel = 1;
  for (int64_t x : shape) {
    if (x != 0 && numel > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(x))
      return r.fail("tensor too large");
    numel *= static_cast<uint64_t>(x);
  }
  if (numel > std::numeric_limits<uint64_t>::max() / kernels::dtype_size(dtype) ||
      numel * kernels::dtype_size(dtype) != nbytes)
    return r.fail("tensor byte count does not match its shape");
  if (r.left() < nbytes) return r.fail("tensor data past the end");
  out = kernels::Tensor(dtype, shape);
  if (nbytes > 0) std::memcpy(out.raw(), r.b.data() + r.pos, nbytes);
  r.pos += nbytes;
  return true;
}

bool get_const(Reader& r, ConstValue& v) {
  uint8_t tag = 0;
  if (!r.get(tag)) return false;
  switch (static_cast<Tag>(tag)) {
    case Tag::None: v = ir::NoneValue{}; return true;
    case Tag::Bool: return get_as<bool>(r, v);
    case Tag::Int: return get_as<int64_t>(r, v);
    case Tag::Float: return get_as<double>(r, v);
    case Tag::Str: return get_as<std::string>(r, v);
    case Tag::Tensor: {
      kernels::Tensor t;
      if (!get_tensor(r, t)) return false;
      v = std::move(t);
      return true;
    }
    case Tag::Prim: {
      std::string name;
      ir::PrimRef p{};
      uint32_t n = 0;
      if (!r.get_str(name)) return false;
      if (!kernels::find_prim(name, p.prim)) return r.fail("unknown primitive '" + name + "'");
      if (!r.get(n)) return false;
      for (uint32_t i = 0; i < n; ++i) {
        std::string an;
        kernels::AttrValue av;
        if (!r.get_str(an) || !get_attr(r, av)) return false;
        p.attrs.set(an, std::move(av));
      }
      v = std::move(p);
      return true;
    }
    case Tag::IrOp: {
      std::string name;
      ir::IrOp op{};
      if (!r.get_str(name)) return false;
      if (!ir::find_ir_op(name, op)) return r.fail("unknown IR operator '" + name + "'");
      v = op;
      return true;
    }
    case Tag::Fused: {
      codegen::EwProgram program;
      kernels::Dims shape;
      uint32_t nsums = 0;
      uint64_t ops = 0;
      if (!parse_ew_program(r.b, r.pos, program)) return r.fail("malformed fused program");
      if (!r.get_dims(shape) || !r.get(nsums)) return false;
      if (nsums != program.reductions.size()) return r.fail("sum shapes do not match the program's sums");
      std::vector<kernels::Dims> sum_shapes(nsums);
      for (kernels::Dims& d : sum_shapes)
        if (!r.get_dims(d)) return false;
      if (!r.get(ops)) return false;
      v = ir::HostRef(std::make_shared<const FusedElementwise>(std::move(program), shape, ops, std::move(sum_shapes)));
      return true;
    }
  }
  return r.fail("unknown constant kind " + std::to_string(tag));
}

}  // namespace

// ----------------------------------------------------------- EwProgram I/O

void write_ew_program(std::string& out, const codegen::EwProgram& p) {
  put<int32_t>(out, p.num_inputs);
  put<uint32_t>(out, static_cast<uint32_t>(p.indexing.size()));
  for (const codegen::EwIndexing& ix : p.indexing)
    put<int64_t>(out, ix.inner), put<int64_t>(out, ix.count), put<int64_t>(out, ix.lane);
  put<uint32_t>(out, static_cast<uint32_t>(p.values.size()));
  for (const codegen::EwValue& v : p.values) {
    put<uint8_t>(out, static_cast<uint8_t>(v.op));
    put<int32_t>(out, v.a);
    put<int32_t>(out, v.b);
    put<int32_t>(out, v.input);
    put<float>(out, v.constant);
  }
  put<uint32_t>(out, static_cast<uint32_t>(p.outputs.size()));
  for (int o : p.outputs) put<int32_t>(out, o);
  put<uint32_t>(out, static_cast<uint32_t>(p.reductions.size()));
  for (const codegen::EwReduction& r : p.reductions)
    put<int32_t>(out, r.value), put<int64_t>(out, r.how.inner), put<int64_t>(out, r.how.count),
        put<int64_t>(out, r.how.lane);
}

bool parse_ew_program(std::string_view bytes, size_t& pos, codegen::EwProgram& out) {
  using codegen::EwOp;
  Reader r(bytes, pos);
  codegen::EwProgram p;
  uint32_t n = 0;
  // Counts are checked against the bytes left before anything is sized by
  // them; what the fields mean is validate_program's to check.
  if (!r.get(p.num_inputs) || p.num_inputs < 0 || !r.get(n)) return false;
  if (r.left() / 24 < n) return false;
  p.indexing.resize(n);
  for (codegen::EwIndexing& ix : p.indexing) r.get(ix.inner), r.get(ix.count), r.get(ix.lane);
  if (!r.get(n) || r.left() / 17 < n) return false;
  p.values.resize(n);
  for (codegen::EwValue& v : p.values) {
    uint8_t op = 0;
    r.get(op), r.get(v.a), r.get(v.b), r.get(v.input), r.get(v.constant);
    if (op >= codegen::kNumEwOps) return false;
    v.op = static_cast<EwOp>(op);
  }
  if (!r.get(n) || r.left() / 4 < n) return false;
  p.outputs.resize(n);
  for (int& o : p.outputs) r.get(o);
  if (!r.get(n) || r.left() / 28 < n) return false;
  p.reductions.resize(n);
  for (codegen::EwReduction& red : p.reductions)
    r.get(red.value), r.get(red.how.inner), r.get(red.how.count), r.get(red.how.lane);
  // The fusion pass gives every input a value that reads it, so a program
  // has no more inputs than values. A larger count (up to 2^31) costs
  // nothing in bytes but a loop over it in validation and in the program's
  // text: a damaged entry held the graph cache for minutes.
  if (static_cast<size_t>(p.num_inputs) > p.values.size()) return false;
  try {
    codegen::validate_program(p);
  } catch (const std::invalid_argument&) {
    return false;
  }
  pos = r.pos;
  out = std::move(p);
  return true;
}

void write_index_list(std::string& out, const std::vector<uint32_t>& v) {
  put<uint32_t>(out, static_cast<uint32_t>(v.size()));
  for (uint32_t x : v) put<uint32_t>(out, x);
}

bool parse_index_list(std::string_view bytes, size_t& pos, std::vector<uint32_t>& out) {
  Reader r(bytes, pos);
  uint32_t n = 0;
  if (!r.get(n) || r.left() / sizeof(uint32_t) < n) return false;
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) r.get(x);
  pos = r.pos;
  out = std::move(v);
  return true;
}

// ------------------------------------------------------------------- graphs

std::optional<std::string> serialize_graph(const FuncGraph& g, std::string* why) {
  if (!g.output()) {
    if (why) *why = "the graph has no output";
    return std::nullopt;
  }
  std::string s(kMagic, sizeof kMagic);
  put<uint32_t>(s, kGraphFormatVersion);
  put_str(s, g.name());
  put<uint32_t>(s, static_cast<uint32_t>(g.params().size()));
  std::unordered_map<const Node*, uint32_t> index;
  for (Node* p : g.params()) {
    index.emplace(p, static_cast<uint32_t>(index.size()));
    put_str(s, p->name());
    put_loc(s, p->loc());
  }
  // Nodes after their inputs: g's own in topological order; constants no
  // graph owns where first used; anything of another graph is a free
  // variable.
  std::string body;
  uint32_t count = 0;
  auto emit = [&](const Node* n) -> bool {
    if (n->is_constant()) {
      put<uint8_t>(body, uint8_t(NodeTag::Constant));
      if (!put_const(body, n->value(), why)) return false;
    } else {
      put<uint8_t>(body, uint8_t(NodeTag::Apply));
      put_str(body, n->name());
      put_loc(body, n->loc());
      put<uint32_t>(body, static_cast<uint32_t>(n->inputs().size()));
      for (const Node* in : n->inputs()) put<uint32_t>(body, index.at(in));
    }
    index.emplace(n, static_cast<uint32_t>(index.size()));
    ++count;
    return true;
  };
  for (const Node* n : ir::topo_order(g)) {
    if (index.count(n)) continue;  // a parameter
    for (const Node* in : n->inputs()) {
      if (index.count(in)) continue;
      if (!in->is_constant() || in->graph()) {
        if (why) *why = "it uses a node of another graph (a free variable)";
        return std::nullopt;
      }
      if (!emit(in)) return std::nullopt;
    }
    if (!emit(n)) return std::nullopt;
  }
  if (!index.count(g.output())) {  // a constant output no graph owns
    if (!g.output()->is_constant() || g.output()->graph()) {
      if (why) *why = "its output is a node of another graph";
      return std::nullopt;
    }
    if (!emit(g.output())) return std::nullopt;
  }
  put<uint32_t>(s, count);
  s += body;
  put<uint32_t>(s, index.at(g.output()));
  return s;
}

FuncGraph* deserialize_graph(ir::IrModule& m, std::string_view bytes, std::string* error) {
  Reader r(bytes);
  FuncGraph* g = nullptr;
  auto failed = [&]() -> FuncGraph* {
    if (g) m.remove_graph(g);  // half built: out of the module's list
    if (error) *error = (r.error.empty() ? "malformed" : r.error) + " at byte " + std::to_string(r.error_at);
    return nullptr;
  };
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    r.fail("not a serialized graph (bad magic)");
    return failed();
  }
  r.pos = sizeof kMagic;
  uint32_t version = 0, nparams = 0, nnodes = 0, output = 0;
  std::string name;
  if (!r.get(version)) return failed();
  if (version != kGraphFormatVersion) {
    r.fail("format version " + std::to_string(version) + ", expected " + std::to_string(kGraphFormatVersion));
    return failed();
  }
  if (!r.get_str(name) || !r.get(nparams)) return failed();
  // Every parameter and node takes at least 9 bytes: counts past that are lies.
  if (r.left() / 9 < nparams) return r.fail("parameter count past the end"), failed();
  g = m.new_graph(name.empty() ? "graph" : name);
  std::vector<Node*> nodes;
  for (uint32_t i = 0; i < nparams; ++i) {
    std::string pn;
    ir::Loc loc;
    if (!r.get_str(pn) || !get_loc(r, m, loc)) return failed();
    nodes.push_back(g->add_param(pn, loc));
  }
  if (!r.get(nnodes)) return failed();
  if (r.left() / 2 < nnodes) return r.fail("node count past the end"), failed();
  for (uint32_t k = 0; k < nnodes; ++k) {
    uint8_t tag = 0;
    if (!r.get(tag)) return failed();
    if (tag == uint8_t(NodeTag::Constant)) {
      ConstValue v;
      if (!get_const(r, v)) return failed();
      nodes.push_back(g->constant(std::move(v)));
    } else if (tag == uint8_t(NodeTag::Apply)) {
      std::string an;
      ir::Loc loc;
      uint32_t n = 0;
      if (!r.get_str(an) || !get_loc(r, m, loc) || !r.get(n)) return failed();
      if (n == 0) return r.fail("an application without a callee"), failed();
      if (r.left() / 4 < n) return r.fail("input count past the end"), failed();
      std::vector<Node*> inputs;
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t x = 0;
        r.get(x);
        if (x >= nodes.size()) return r.fail("input " + std::to_string(x) + " is not an earlier node"), failed();
        inputs.push_back(nodes[x]);
      }
      nodes.push_back(g->apply(std::move(inputs), an, loc));
    } else {
      return r.fail("unknown node kind " + std::to_string(tag)), failed();
    }
  }
  if (!r.get(output)) return failed();
  if (output >= nodes.size()) return r.fail("output is not a node"), failed();
  if (r.left() != 0) return r.fail("trailing bytes"), failed();
  g->set_output(nodes[output]);
  std::vector<std::string> problems = ir::verify_graph(*g);
  if (!problems.empty()) return r.fail("invalid graph: " + problems.front()), failed();
  return g;
}

ir::FuncGraph* parse_cache_payload(ir::IrModule& m, std::string_view payload, std::vector<uint32_t>& weights,
                                   std::string* error) {
  size_t pos = 0;
  if (!parse_index_list(payload, pos, weights)) {
    if (error) *error = "weight list past the end at byte 0";
    return nullptr;
  }
  std::string why;
  FuncGraph* g = deserialize_graph(m, payload.substr(pos), &why);
  if (!g && error) *error = "graph bytes (after " + std::to_string(pos) + "): " + why;
  return g;
}

}  // namespace msl::jit
