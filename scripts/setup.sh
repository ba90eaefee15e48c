#!/usr/bin/env bash
# The main command: installs what is missing, builds, and runs the main example.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
"${MSL_BUILD_DIR:-$root/build}/interp/msl" run "$root/examples/tour.msl"
"${MSL_BUILD_DIR:-$root/build}/interp/msl" run "$root/examples/tensors.msl"
"${MSL_BUILD_DIR:-$root/build}/interp/msl" run "$root/examples/grad.msl"
# The main job: LeNet-5 trained on Fashion-MNIST for 5 epochs (about a
# minute on 2 cores, ~90% test accuracy); its checkpoints go to the build
# folder.
(cd "${MSL_BUILD_DIR:-$root/build}" && ./interp/msl run "$root/examples/lenet.msl")
