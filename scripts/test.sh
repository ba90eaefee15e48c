#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test
# through CTest. The last line of output is CTest's summary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
cd "${MSL_BUILD_DIR:-$root/build}"
ctest -j"$(nproc)" --output-on-failure --timeout 300
