#!/usr/bin/env bash
# Configures (once) and builds MSL into build/ with Ninja and ccache.
# Incremental: a second run rebuilds only what changed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MSL_BUILD_DIR:-$root/build}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/msl-ccache}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$build" -j"$(nproc)"
