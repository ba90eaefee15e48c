// A flat graph of primitives as bytes and back: what the on-disk cache of
// compiled graphs (interp/graph/graph_disk_cache.h) stores, so that a second run
// of a script loads its compiled training step instead of lowering,
// differentiating, optimizing, expanding and fusing it again.
//
// "Flat" is what graph mode's compilation ends with for straight-line code
// (a forward pass, a gradient, a training step): ONE FuncGraph whose nodes
// are its parameters, constants and applications, with no nested graphs and
// no host objects but fused loops. The constants it may hold:
//   None, bool, int, float, str, tensor (dtype, shape, the elements),
//   a primitive with attributes (by the primitive's name: the byte layout
//   does not depend on the order of MSL_PRIMITIVES), an IR operator (by
//   name), and a jit::FusedElementwise (its EwProgram and shape).
// Anything else (a graph constant, a host object standing for a live MSL
// value, a free variable) makes serialize_graph fail with the reason: such
// a graph is not cached.
//
// Layout (integers little-endian as the host writes them; the cache key
// names the target, so files never move between byte orders):
//   8 bytes magic "MSLGRPH\0", u32 format version
//   str graph name; u32 P, then P parameters (str name, loc)
//   u32 N, then N nodes in an order where inputs come first, each
//     u8 kind: 1 constant (a tagged value), 2 apply (str name, loc,
//     u32 input count, u32 node index per input); parameters are indices
//     0..P-1, node k is index P + k
//   u32 index of the output node
// where str is u32 length + bytes and loc is str file ("" = none) + u32
// line + u32 column.
//
// Parsing never trusts the bytes: every length, index, enum and count is
// bounds-checked and a failure names the byte offset; the result is also
// run through the IR verifier (operator arities, primitive input counts),
// so a damaged file is an error message, never a crash or a wrong graph
// built silently. (Bytes that are well-formed yet not what was written are
// the container's concern: the cache checksums its payloads.)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jit/codegen/elementwise_jit.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// 2: a fused loop's input and sum patterns carry their lane (EwIndexing).
// 3: a location carries its Cell scope (ir::Loc::scope).
inline constexpr uint32_t kGraphFormatVersion = 3;

// The bytes of flat graph `g`, or nullopt with `why` set when `g` is not a
// flat graph of primitives (see above).
std::optional<std::string> serialize_graph(const ir::FuncGraph& g, std::string* why = nullptr);

// A new graph in `m` read from `bytes`, or null with `error` set to the
// reason and the byte offset where reading stopped. Never throws for bad
// bytes.
ir::FuncGraph* deserialize_graph(ir::IrModule& m, std::string_view bytes, std::string* error = nullptr);

// An EwProgram's fields as bytes and back (part of a graph's bytes; exposed
// for tests). parse_ew_program reads at `pos` and advances it; false on
// malformed bytes (out-of-range operands, unknown ops, counts past the end).
void write_ew_program(std::string& out, const codegen::EwProgram& p);
bool parse_ew_program(std::string_view bytes, size_t& pos, codegen::EwProgram& out);

// A list of indices (u32 count, then the u32s) as bytes and back, for what
// a cache entry stores beside a graph (its weights' positions).
// parse_index_list reads at `pos` and advances it; false when the list runs
// past the end.
void write_index_list(std::string& out, const std::vector<uint32_t>& v);
bool parse_index_list(std::string_view bytes, size_t& pos, std::vector<uint32_t>& out);

// The payload of an entry of the on-disk graph cache
// (interp/graph/graph_disk_cache.h): the weight positions (an index list),
// then the graph's bytes. Reads it into `weights` and a new graph in `m`;
// null with `error` set (what was wrong and where) on malformed bytes.
// Never throws for bad bytes.
ir::FuncGraph* parse_cache_payload(ir::IrModule& m, std::string_view payload, std::vector<uint32_t>& weights,
                                   std::string* error);

}  // namespace msl::jit
