// ir_check_runner: golden tests of the IR stages, in the manner of LLVM's
// FileCheck. A test is an MSL file with annotations:
//
//   # EMIT: STAGE            the stage to print (msl --emit=STAGE run FILE):
//                            anf, anf-opt or grad
//   # CHECK: TEXT            TEXT occurs in the output after the previous match
//   # CHECK-NEXT: TEXT       TEXT occurs on the line right after the previous
//                            match (source-location lines "# In file" skipped)
//   # CHECK-NOT: TEXT        TEXT does not occur between the previous match
//                            and the next one (or the end)
//
// Usage: ir_check_runner <msl> <test.msl>. Prints what failed and exits 1;
// exits 0 silently on success.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Check {
  enum Kind { Plain, Next, Not } kind;
  std::string text;
  int line;
};

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  size_t b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: ir_check_runner <msl> <test.msl>\n";
    return 2;
  }
  std::ifstream in(argv[2]);
  if (!in) {
    std::cerr << "cannot open " << argv[2] << "\n";
    return 2;
  }
  std::string stage, line;
  std::vector<Check> checks;
  for (int n = 1; std::getline(in, line); ++n) {
    auto take = [&](const char* tag, Check::Kind k) {
      size_t p = line.find(tag);
      if (p == std::string::npos) return false;
      checks.push_back({k, trim(line.substr(p + std::string(tag).size())), n});
      return true;
    };
    if (size_t p = line.find("# EMIT:"); p != std::string::npos) stage = trim(line.substr(p + 7));
    else if (!take("# CHECK-NEXT:", Check::Next) && !take("# CHECK-NOT:", Check::Not)) take("# CHECK:", Check::Plain);
  }
  if (stage.empty() || checks.empty()) {
    std::cerr << argv[2] << ": needs an '# EMIT:' line and at least one CHECK\n";
    return 2;
  }
  std::string cmd = std::string("'") + argv[1] + "' --emit=" + stage + " run '" + argv[2] + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return 2;
  std::string out;
  std::array<char, 4096> buf;
  for (size_t k; (k = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), k);
  int status = pclose(p);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "msl --emit=" << stage << " failed:\n" << out;
    return 1;
  }
  std::vector<std::string> lines;
  std::istringstream os(out);
  while (std::getline(os, line))
    if (trim(line).rfind("# In file", 0) != 0) lines.push_back(line);

  size_t pos = 0;  // the next line to search from
  bool matched_any = false;
  std::vector<const Check*> nots;
  auto fail = [&](const Check& c, const std::string& why) {
    std::cerr << argv[2] << ":" << c.line << ": " << why << ": " << c.text << "\n--- output ---\n" << out;
    return 1;
  };
  for (const Check& c : checks) {
    if (c.kind == Check::Not) {
      nots.push_back(&c);
      continue;
    }
    size_t found = lines.size();
    if (c.kind == Check::Next) {
      if (!matched_any || pos >= lines.size() || lines[pos].find(c.text) == std::string::npos)
        return fail(c, "CHECK-NEXT not on the next line");
      found = pos;
    } else {
      for (size_t i = pos; i < lines.size(); ++i)
        if (lines[i].find(c.text) != std::string::npos) {
          found = i;
          break;
        }
      if (found == lines.size()) return fail(c, "CHECK not found");
    }
    for (const Check* n : nots)
      for (size_t i = pos; i < found; ++i)
        if (lines[i].find(n->text) != std::string::npos) return fail(*n, "CHECK-NOT found");
    nots.clear();
    pos = found + 1;
    matched_any = true;
  }
  for (const Check* n : nots)
    for (size_t i = pos; i < lines.size(); ++i)
      if (lines[i].find(n->text) != std::string::npos) return fail(*n, "CHECK-NOT found");
  return 0;
}
