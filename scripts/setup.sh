#!/usr/bin/env bash
# The main command: installs what is missing, builds, and runs the main example.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
"${MSL_BUILD_DIR:-$root/build}/interp/msl" run "$root/examples/tour.msl"
"${MSL_BUILD_DIR:-$root/build}/interp/msl" run "$root/examples/tensors.msl"
"${MSL_BUILD_DIR:-$root/build}/interp/msl" run "$root/examples/grad.msl"
