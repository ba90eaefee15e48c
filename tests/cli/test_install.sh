#!/usr/bin/env bash
# The installed tree, moved: `cmake --install BUILD --prefix P`, then P is
# moved to another folder (nothing in it may remember P). From there
#   * a host CMake project finds the package with find_package(msl) and
#     builds examples/embed/main.cpp and a probe against msl::msl; both run
#     on the moved libmsl.so, and the probe's VM imports msl.nn from the
#     moved share/msl/stdlib (its sys.path says so);
#   * the moved bin/msl imports msl.nn from the moved standard library.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR CMAKE CXX_COMPILER
set -u
build="$1" src="$2" cmake="$3" cxx="$4"
tmp="$(cd "$(mktemp -d)" && pwd -P)"
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL $1"; shift; printf '%s\n' "$@" | sed 's/^/  | /'; fails=$((fails+1)); }

# 1. Install, then move the prefix.
if ! out=$("$cmake" --install "$build" --prefix "$tmp/first" 2>&1); then
  fail "cmake --install" "$out"; exit 1
fi
mkdir -p "$tmp/elsewhere"
mv "$tmp/first" "$tmp/elsewhere/msl"
prefix="$tmp/elsewhere/msl"
for f in bin/msl include/msl/msl.h share/msl/stdlib/msl/__init__.msl share/msl/stdlib/msl/nn/__init__.msl; do
  [ -e "$prefix/$f" ] || fail "installed $f" "$(cd "$prefix" && find . -maxdepth 3 | sort)"
done
ls "$prefix"/lib*/libmsl.so >/dev/null 2>&1 || fail "installed lib/libmsl.so" "$(cd "$prefix" && find . -maxdepth 2 | sort)"
ls "$prefix"/lib*/cmake/msl/mslConfig.cmake >/dev/null 2>&1 || fail "installed mslConfig.cmake" "$(cd "$prefix" && find . | sort)"
if remembered=$(grep -rl -- "$tmp/first" "$prefix"); then
  fail "no installed file names the first prefix" "$remembered"
fi

# 2. A host project built against the moved prefix with find_package(msl).
mkdir -p "$tmp/host"
cp "$src/examples/embed/main.cpp" "$tmp/host/main.cpp"
cat > "$tmp/host/probe.cpp" <<'CPP'
// Prints where the VM's standard library is and that msl.nn imports.
#include <msl/msl.h>

#include <cstdio>
#include <iostream>

int main() {
  msl::embed::Config config;
  config.output = [](std::string_view s) { std::cout << s; };
  config.on_error = [](const msl::embed::ErrorInfo& e) { std::cerr << e.text; };
  msl::embed::VM vm(config);
  msl::embed::Result r = vm.run("import sys\nimport msl.nn as nn\nprint('stdlib', sys.path[-1])\nprint('nn', nn.Dense(2, 3).weight.shape)\n");
  return r.ok() ? 0 : 1;
}
CPP
cat > "$tmp/host/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(msl_host CXX)
find_package(msl 0.1 REQUIRED)
add_executable(embed_example main.cpp)
target_link_libraries(embed_example PRIVATE msl::msl)
add_executable(probe probe.cpp)
target_link_libraries(probe PRIVATE msl::msl)
CMAKE
if ! out=$("$cmake" -S "$tmp/host" -B "$tmp/host/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
             -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" 2>&1); then
  fail "configure the host with find_package(msl)" "$out"; exit 1
fi
if ! out=$("$cmake" --build "$tmp/host/build" 2>&1); then
  fail "build the host against msl::msl" "$out"; exit 1
fi
lib=$(ldd "$tmp/host/build/embed_example" | grep 'libmsl\.so')
case "$lib" in
  *"=> $prefix/"*) ;;
  *) fail "the host loads the moved libmsl.so" "$lib" ;;
esac
out=$("$tmp/host/build/embed_example" 2>&1)
case "$out" in
  *"all checks passed"*) ;;
  *) fail "examples/embed against the installed library" "$out" ;;
esac
out=$("$tmp/host/build/probe" 2>&1)
[ "$out" = "stdlib $prefix/share/msl/stdlib
nn (3, 2)" ] || fail "the library finds the moved standard library" "$out"

# 3. The moved command line.
out=$("$prefix/bin/msl" -c 'import msl.nn; print(1)' 2>&1)
[ "$out" = "1" ] || fail "bin/msl -c 'import msl.nn; print(1)'" "$out"
# The modules beside the msl package are installed too.
out=$("$prefix/bin/msl" -c 'import numpy, cv2, io; print(numpy.arange(3).sum(), io.StringIO("ab").read())' 2>&1)
[ "$out" = "3 ab" ] || fail "bin/msl -c 'import numpy, cv2, io'" "$out"
out=$("$prefix/bin/msl" -c 'import sys; print(sys.path[-1])' 2>&1)
[ "$out" = "$prefix/share/msl/stdlib" ] || fail "bin/msl finds the moved standard library" "$out"

if [ "$fails" -ne 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "install checks passed"
