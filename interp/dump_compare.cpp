// `msl compare DIR_A DIR_B`: the accuracy comparison of two `msl --dump`
// folders (the seed book's dump-and-compare workflow): PyNative against
// graph mode, one build or device against another, a model before and
// after a change.
//
// Matching: two runs number their ops differently (graph mode expands and
// orders differently, one run may have ops the other lacks), so ops are
// matched by what they are, not by number. Each index line gives the op's
// primitive (and output number), dtype, shape and source position; walking
// A in order, each op takes the next op of B with the same primitive,
// dtype, shape and source line within a window ahead of the last match,
// else the next with the same primitive, dtype and shape (positions differ
// when one run could not tell them). Unmatched ops are listed, not
// guessed.
//
// Per pair: cosine similarity, max absolute error, max relative error
// (|a - b| / |b| over the elements where |b| > 1e-12) and a verdict: an op
// diverges when max |a - b| > atol + rtol * max |b|. The report names the
// first diverging op in A's order and its source line: where to look.
// Exit status 0 when nothing diverges, 1 when something does, 2 on bad
// input (as `cmp`).
#include "interp/dump_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "interp/checkpoint/checkpoint.h"
#include "kernels/dtype.h"
#include "kernels/json_text.h"

namespace msl {

namespace {

using kernels::json_quote;

struct DumpEntry {
  std::string file;   // 000012_mul.npy
  std::string op;     // mul (with _K for an output of a multi-output primitive)
  std::string dtype;  // float32
  std::string shape;  // (2, 3)
  std::string site;   // /path/model.msl:17, or "-"
};

// Reads DIR/index.txt; throws std::runtime_error naming the file and line.
std::vector<DumpEntry> read_index(const std::string& dir) {
  std::string path = (std::filesystem::path(dir) / "index.txt").string();
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read the dump index (is '{}' a --dump folder?)", path, dir));
  std::vector<DumpEntry> out;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.empty()) continue;
    DumpEntry e;
    size_t at = text.rfind(" @ ");
    std::string head = at == std::string::npos ? text : text.substr(0, at);
    e.site = at == std::string::npos ? "-" : text.substr(at + 3);
    size_t s1 = head.find(' '), s2 = s1 == std::string::npos ? s1 : head.find(' ', s1 + 1);
    if (s2 == std::string::npos) throw std::runtime_error(fmt::format("{}:{}: not 'NAME DTYPE SHAPE'", path, number));
    e.file = head.substr(0, s1);
    e.dtype = head.substr(s1 + 1, s2 - s1 - 1);
    e.shape = head.substr(s2 + 1);
    if (e.file.size() < 12 || e.file.compare(e.file.size() - 4, 4, ".npy") != 0 || e.file[6] != '_')
      throw std::runtime_error(fmt::format("{}:{}: '{}' is not a dump file name", path, number, e.file));
    e.op = e.file.substr(7, e.file.size() - 11);
    out.push_back(std::move(e));
  }
  return out;
}

struct Metrics {
  double cosine = 1, max_abs = 0, max_rel = 0, max_b = 0;
  bool nan_mismatch = false;
};

std::vector<double> values_of(const kernels::Tensor& t) {
  kernels::Tensor c = t.contiguous();
  std::vector<double> v(static_cast<size_t>(c.numel()));
  for (int64_t i = 0; i < c.numel(); ++i) v[static_cast<size_t>(i)] = kernels::load_as_double(c.raw(), c.dtype(), i);
  return v;
}

Metrics compare_values(const std::vector<double>& a, const std::vector<double>& b) {
  Metrics m;
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double x = a[i], y = b[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) m.nan_mismatch = true;
      continue;
    }
    double d = x == y ? 0.0 : std::fabs(x - y);  // equal infinities differ by 0
    m.max_abs = std::max(m.max_abs, d);
    if (std::fabs(y) > 1e-12) m.max_rel = std::max(m.max_rel, d / std::fabs(y));
    if (std::isfinite(y)) m.max_b = std::max(m.max_b, std::fabs(y));
    if (std::isfinite(x) && std::isfinite(y)) {
      dot += x * y;
      na += x * x;
      nb += y * y;
    }
  }
  if (na > 0 && nb > 0) m.cosine = dot / (std::sqrt(na) * std::sqrt(nb));
  else m.cosine = (na == 0 && nb == 0) ? 1.0 : 0.0;
  return m;
}

// A's ops in order, each matched to B's next op of the same kind (see the
// file comment); `window` bounds how far ahead of the last match to look.
std::vector<std::optional<size_t>> match(const std::vector<DumpEntry>& A, const std::vector<DumpEntry>& B,
                                         size_t window) {
  std::vector<std::optional<size_t>> out(A.size());
  std::vector<bool> used(B.size(), false);
  size_t next = 0;
  for (size_t i = 0; i < A.size(); ++i) {
    const DumpEntry& x = A[i];
    auto same = [&](const DumpEntry& y, bool with_line) {
      return y.op == x.op && y.dtype == x.dtype && y.shape == x.shape && (!with_line || y.site == x.site);
    };
    std::optional<size_t> found;
    for (int with_line = 1; with_line >= 0 && !found; --with_line) {
      size_t end = std::min(B.size(), next + window);
      for (size_t j = next; j < end; ++j)
        if (!used[j] && same(B[j], with_line != 0)) {
          found = j;
          break;
        }
    }
    if (found) {
      used[*found] = true;
      out[i] = found;
      next = *found + 1;
    }
  }
  return out;
}

std::string short_site(const std::string& site) {
  if (site == "-") return site;
  return std::filesystem::path(site).filename().string();
}

[[noreturn]] void usage(const std::string& why) {
  throw std::invalid_argument(why + "\nusage: msl compare DIR_A DIR_B [--rtol R] [--atol A] [--format table|csv|json]");
}

}  // namespace

int dump_compare_main(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  try {
    std::vector<std::string> dirs;
    double rtol = 1e-5, atol = 1e-6;
    std::string format = "table";
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto value = [&]() -> const std::string& {
        if (i + 1 >= args.size()) usage(a + " needs a value");
        return args[++i];
      };
      auto number = [&](const std::string& v) {
        char* end = nullptr;
        double d = std::strtod(v.c_str(), &end);
        if (end == v.c_str() || *end || !(d >= 0)) usage(a + " must be a non-negative number, not '" + v + "'");
        return d;
      };
      if (a == "--rtol") rtol = number(value());
      else if (a == "--atol") atol = number(value());
      else if (a == "--format") {
        format = value();
        if (format != "table" && format != "csv" && format != "json") usage("--format must be table, csv or json");
      } else if (!a.empty() && a[0] == '-') usage("unknown option '" + a + "'");
      else dirs.push_back(a);
    }
    if (dirs.size() != 2) usage("compare needs two dump folders");
    std::vector<DumpEntry> A = read_index(dirs[0]), B = read_index(dirs[1]);
    std::vector<std::optional<size_t>> pairs = match(A, B, 512);

    struct Row {
      size_t a;
      std::optional<size_t> b;
      Metrics m;
      bool diverges = false;
      std::string note;
    };
    std::vector<Row> rows;
    std::optional<size_t> first;
    size_t matched = 0;
    for (size_t i = 0; i < A.size(); ++i) {
      Row r{i, pairs[i], {}, false, ""};
      if (r.b) {
        ++matched;
        auto read = [](const std::string& dir, const std::string& file) {
          std::string p = (std::filesystem::path(dir) / file).string();
          return checkpoint::parse_npy(checkpoint::read_whole_file(p), p);
        };
        kernels::Tensor ta = read(dirs[0], A[i].file), tb = read(dirs[1], B[*r.b].file);
        if (ta.numel() != tb.numel()) {
          r.diverges = true;
          r.note = "element counts differ";
        } else {
          r.m = compare_values(values_of(ta), values_of(tb));
          r.diverges = r.m.nan_mismatch || r.m.max_abs > atol + rtol * r.m.max_b;
          if (r.m.nan_mismatch) r.note = "NaN in one run only";
        }
        if (r.diverges && !first) first = rows.size();
      }
      rows.push_back(std::move(r));
    }
    size_t only_b = B.size() - matched;

    if (format == "json") {
      std::string s = "{\"ops\": [";
      for (size_t k = 0; k < rows.size(); ++k) {
        const Row& r = rows[k];
        const DumpEntry& e = A[r.a];
        s += fmt::format("{}\n  {{\"a\": {}, \"b\": {}, \"op\": {}, \"site\": {}, \"dtype\": {}, \"shape\": {}", k ? "," : "",
                         json_quote(e.file), r.b ? json_quote(B[*r.b].file) : "null", json_quote(e.op),
                         json_quote(e.site), json_quote(e.dtype), json_quote(e.shape));
        if (r.b)
          s += fmt::format(", \"cosine\": {:.9g}, \"max_abs\": {:.9g}, \"max_rel\": {:.9g}, \"diverges\": {}",
                           r.m.cosine, r.m.max_abs, r.m.max_rel, r.diverges ? "true" : "false");
        s += "}";
      }
      s += fmt::format("\n], \"matched\": {}, \"only_in_a\": {}, \"only_in_b\": {}, \"first_divergence\": {}}}\n", matched,
                       A.size() - matched, only_b, first ? json_quote(A[rows[*first].a].file) : "null");
      std::fputs(s.c_str(), out);
    } else if (format == "csv") {
      std::fputs("a,b,op,site,dtype,shape,cosine,max_abs,max_rel,diverges\n", out);
      for (const Row& r : rows) {
        const DumpEntry& e = A[r.a];
        std::string line = fmt::format("{},{},{},\"{}\",{},\"{}\"", e.file, r.b ? B[*r.b].file : "", e.op, e.site, e.dtype,
                                       e.shape);
        if (r.b)
          line += fmt::format(",{:.9g},{:.9g},{:.9g},{}", r.m.cosine, r.m.max_abs, r.m.max_rel, r.diverges ? 1 : 0);
        else
          line += ",,,,";
        std::fputs((line + "\n").c_str(), out);
      }
    } else {
      std::fputs(fmt::format("{:<28} {:<22} {:<16} {:>10} {:>10} {:>10}\n", "op (A)", "source", "shape", "cosine",
                             "max abs", "max rel")
                     .c_str(),
                 out);
      for (const Row& r : rows) {
        const DumpEntry& e = A[r.a];
        std::string left = fmt::format("{:<28} {:<22} {:<16}", e.file, short_site(e.site), e.shape);
        std::string right = r.b ? fmt::format(" {:>10.6f} {:>10.3e} {:>10.3e}{}", r.m.cosine, r.m.max_abs, r.m.max_rel,
                                              r.diverges ? "  <- differs" : "")
                                : "  (not in B)";
        std::fputs((left + right + (r.note.empty() ? "" : "  " + r.note) + "\n").c_str(), out);
      }
      std::fputs(fmt::format("matched {} of {} ops in A ({} in B); {} only in A, {} only in B\n", matched, A.size(),
                             B.size(), A.size() - matched, only_b)
                     .c_str(),
                 out);
      if (first) {
        const Row& r = rows[*first];
        const DumpEntry& e = A[r.a];
        std::fputs(fmt::format("first divergence: {} ({} at {}): max abs error {:.3e} > {:.1e} + {:.1e} * {:.3e}\n", e.file,
                               e.op, e.site, r.m.max_abs, atol, rtol, r.m.max_b)
                       .c_str(),
                   out);
      } else {
        std::fputs(fmt::format("no divergence (rtol {:.1e}, atol {:.1e})\n", rtol, atol).c_str(), out);
      }
    }
    return first ? 1 : 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(err, "msl compare: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(err, "msl compare: %s\n", e.what());
    return 2;
  }
}

}  // namespace msl
