#include "interp/dump_config.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "interp/checkpoint/checkpoint.h"

namespace msl {

namespace {

using checkpoint::Json;

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}", path, what));
}

const Json* member(const Json& o, const std::string& key) {
  for (const auto& m : o.members)
    if (m.first == key) return &m.second;
  return nullptr;
}

// Checks that `o` is an object whose keys are all in `known`.
void check_object(const std::string& path, const Json& o, const std::string& name,
                  std::initializer_list<const char*> known) {
  if (o.type != Json::Type::Object) bad(path, fmt::format("\"{}\" must be an object", name));
  for (const auto& m : o.members) {
    bool ok = false;
    for (const char* k : known) ok = ok || m.first == k;
    if (!ok) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      bad(path, fmt::format("unknown setting \"{}\" in \"{}\" (settings: {})", m.first, name, list));
    }
  }
}

int64_t integer(const std::string& path, const Json& v, const std::string& name) {
  if (v.type != Json::Type::Number || !v.is_int) bad(path, fmt::format("\"{}\" must be an integer", name));
  return v.integer;
}

const std::string& string(const std::string& path, const Json& v, const std::string& name) {
  if (v.type != Json::Type::String) bad(path, fmt::format("\"{}\" must be a string", name));
  return v.str;
}

// "all", or ranges "0|5-8|100-120" of iterations.
std::vector<std::pair<int64_t, int64_t>> iterations(const std::string& path, const std::string& text) {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (text == "all") return out;
  auto number = [&](const std::string& s) -> int64_t {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 12)
      bad(path, fmt::format("\"iteration\": '{}' is not \"all\" or numbers and ranges such as \"0|5-8\"", text));
    return std::stoll(s);
  };
  std::stringstream parts(text);
  for (std::string part; std::getline(parts, part, '|');) {
    size_t dash = part.find('-');
    int64_t lo = number(part.substr(0, dash));
    int64_t hi = dash == std::string::npos ? lo : number(part.substr(dash + 1));
    if (hi < lo) bad(path, fmt::format("\"iteration\": the range '{}' ends before it starts", part));
    out.emplace_back(lo, hi);
  }
  if (out.empty()) bad(path, "\"iteration\" is empty (\"all\" dumps every iteration)");
  return out;
}

}  // namespace

std::optional<kernels::DumpConfig> read_dump_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "cannot read the dump configuration");
  std::stringstream ss;
  ss << in.rdbuf();
  Json root;
  try {
    root = checkpoint::parse_json(ss.str());
  } catch (const checkpoint::JsonError& e) {
    bad(path, fmt::format("offset {}: {}", e.offset, e.what()));
  }
  check_object(path, root, "the file", {"common_dump_settings", "e2e_dump_settings", "async_dump_settings"});
  if (member(root, "async_dump_settings"))
    bad(path, "\"async_dump_settings\" is Ascend's asynchronous dump, which MSL does not have: use e2e_dump_settings");
  const Json* common = member(root, "common_dump_settings");
  if (!common) bad(path, "\"common_dump_settings\" is missing");
  check_object(path, *common, "common_dump_settings",
               {"dump_mode", "path", "net_name", "iteration", "input_output", "kernels", "support_device",
                "saved_data", "file_format", "op_debug_mode"});
  if (const Json* e2e = member(root, "e2e_dump_settings")) {
    check_object(path, *e2e, "e2e_dump_settings", {"enable", "trans_flag", "save_kernel_args"});
    const Json* enable = member(*e2e, "enable");
    if (enable && enable->type != Json::Type::Bool) bad(path, "\"enable\" must be true or false");
    if (enable && !enable->boolean) return std::nullopt;
  }

  kernels::DumpConfig c;
  const Json* dir = member(*common, "path");
  if (!dir) bad(path, "\"path\" (the folder the dump goes to) is missing");
  c.dir = string(path, *dir, "path");
  if (c.dir.empty()) bad(path, "\"path\" is empty");
  int64_t mode = 0;
  if (const Json* m = member(*common, "dump_mode")) mode = integer(path, *m, "dump_mode");
  if (mode != 0 && mode != 1)
    bad(path, fmt::format("\"dump_mode\": {} is not 0 (every kernel) or 1 (the kernels listed)", mode));
  if (const Json* k = member(*common, "kernels")) {
    if (k->type != Json::Type::Array) bad(path, "\"kernels\" must be a list of strings");
    for (const Json& item : k->items) c.kernels.push_back(string(path, item, "kernels"));
  }
  if (mode == 1 && c.kernels.empty()) bad(path, "\"dump_mode\": 1 dumps the kernels listed, but \"kernels\" is empty");
  if (mode == 0) c.kernels.clear();
  if (const Json* it = member(*common, "iteration")) c.iterations = iterations(path, string(path, *it, "iteration"));
  if (const Json* io = member(*common, "input_output")) {
    int64_t v = integer(path, *io, "input_output");
    if (v < 0 || v > 2) bad(path, fmt::format("\"input_output\": {} is not 0 (both), 1 (inputs) or 2 (outputs)", v));
    c.inputs = v != 2;
    c.outputs = v != 1;
  }
  if (const Json* s = member(*common, "saved_data"); s && string(path, *s, "saved_data") != "tensor")
    bad(path, fmt::format("\"saved_data\": \"{}\" is not supported: MSL saves tensors (\"tensor\")", s->str));
  if (const Json* f = member(*common, "file_format"); f && string(path, *f, "file_format") != "npy")
    bad(path, fmt::format("\"file_format\": \"{}\" is not supported: MSL writes .npy files (\"npy\")", f->str));
  if (const Json* d = member(*common, "op_debug_mode"); d && integer(path, *d, "op_debug_mode") != 0)
    bad(path, "\"op_debug_mode\": only 0 is supported (overflow detection is Ascend's)");
  return c;
}

}  // namespace msl
