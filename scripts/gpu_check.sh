#!/usr/bin/env bash
# The GPU check: MSL's GPU tests and benchmarks on a machine with an NVIDIA
# GPU that cannot build MSL (it lacks LLVM, oneDNN, the ANTLR runtime...).
#
#   scripts/gpu_check.sh pack [BUILD]   here: packs the built binaries, the
#                                       shared libraries they need beyond the
#                                       C/C++ runtime, into BUILD/gpu-bundle.tar.xz
#                                       (BUILD defaults to build/)
#   scripts/gpu_check.sh run [BUNDLE] [REPORT_DIR]
#                                       on the GPU machine, from the repository
#                                       root: unpacks the bundle, runs the GPU
#                                       tests (also under compute-sanitizer),
#                                       the kernel-text tests, the GPU script
#                                       tests and the benchmarks against
#                                       PyTorch on the same GPU, and writes
#                                       REPORT_DIR/gpu_report.md (default $OUT
#                                       or the current directory)
#
# The bundle is what travels: the standard library comes from the
# repository's stdlib/ (MSL_STDLIB), the CUDA libraries from the GPU
# machine's /usr/local/cuda.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cmd="${1:-}"

pack() {
  local build="${1:-$root/build}"
  local stage
  stage="$(mktemp -d)"
  mkdir -p "$stage/bin" "$stage/lib"
  local bins=("$build/interp/msl" "$build/tests/msl_gpu_tests" "$build/tests/msl_cuda_text_tests"
              "$build/tests/msl_script_runner")
  for b in "${bins[@]}"; do
    [ -x "$b" ] || { echo "gpu_check: $b is not built (build with the CUDA toolkit first)" >&2; exit 1; }
    cp "$b" "$stage/bin/"
  done
  # The shared libraries the binaries load, except the C/C++ runtime and the
  # CUDA libraries, which the GPU machine has in newer versions.
  ldd "${bins[@]}" | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++.so*|libgcc_s.so*|libcuda*|libnvrtc*|libcublas*|libcudnn*) ;;
      *) cp -L "$lib" "$stage/lib/" ;;
    esac
  done
  # Debug information is most of the binaries and none of what the check needs.
  strip --strip-debug "$stage"/bin/* "$stage"/lib/* 2>/dev/null
  local out="$build/gpu-bundle.tar.xz"
  tar -C "$stage" -cf - bin lib | xz -T2 -6 > "$out.tmp" && mv "$out.tmp" "$out"
  rm -rf "$stage"
  echo "gpu_check: packed $(du -h "$out" | cut -f1) into $out"
}

# Every ops script through the script runner with the GPU as the starting
# device in MODE (graph or pynative), 8 at a time: a count, then the
# failures' names and their first lines.
ops_on_gpu() {
  local runner="$1" msl="$2" mode="$3"
  local log
  log="$(mktemp -d)"
  find "$root/tests/ops" -mindepth 2 -maxdepth 2 -name '*.msl' | sort |
    MSL_TEST_DEVICE=gpu MSL_TEST_MODE="$mode" xargs -P 8 -I{} sh -c \
      'name=$(echo "{}" | sed "s|.*/ops/||; s|/|_|g"); timeout 120 "$0" "$1" "{}" > "$2/$name.log" 2>&1 || echo "{}" >> "$2/failed.$$"' \
      "$runner" "$msl" "$log"
  local total failed
  total=$(find "$root/tests/ops" -mindepth 2 -maxdepth 2 -name '*.msl' | wc -l)
  failed=$(cat "$log"/failed.* 2>/dev/null | sort)
  echo "$mode: $((total - $(printf '%s' "$failed" | grep -c .))) of $total ops scripts pass on the GPU"
  for f in $failed; do
    local name
    name=$(echo "$f" | sed "s|.*/ops/||; s|/|_|g")
    # The script's own error when it raised one, else how its output differed.
    echo "  FAILED ${f#"$root"/}: $( (grep -m 2 -E 'Error|error' "$log/$name.log" || grep -v '^$' "$log/$name.log" | head -n 3) | tr '\n' ' ' | cut -c1-300)"
  done
  rm -rf "$log"
}

run() {
  local bundle="${1:-$root/build/gpu-bundle.tar.xz}"
  local report_dir="${2:-${OUT:-$PWD}}"
  local dir
  dir="$(mktemp -d)"
  xz -dc "$bundle" | tar -C "$dir" -xf - || { echo "gpu_check: cannot unpack $bundle" >&2; exit 1; }
  export LD_LIBRARY_PATH="$dir/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export MSL_STDLIB="$root/stdlib"
  local msl="$dir/bin/msl"
  local report="$report_dir/gpu_report.md"
  mkdir -p "$report_dir"
  {
    echo "# GPU check $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo
    echo '```'
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
    python3 -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda)' 2>&1
    echo '```'
    echo
    echo "## Tests"
    echo '```'
    "$dir/bin/msl_gpu_tests" 2>&1 | tail -n 30
    echo "msl_gpu_tests exit: ${PIPESTATUS[0]}"
    "$dir/bin/msl_cuda_text_tests" 2>&1 | tail -n 5
    echo "msl_cuda_text_tests exit: ${PIPESTATUS[0]}"
    if command -v compute-sanitizer >/dev/null; then
      compute-sanitizer --tool memcheck --error-exitcode 9 "$dir/bin/msl_gpu_tests" 2>&1 | tail -n 12
      echo "compute-sanitizer memcheck exit: ${PIPESTATUS[0]}"
    fi
    # The collectives through NCCL on a world of one GPU (no MPI there;
    # NCCL from the toolkit or PyTorch's wheel).
    nccl_dir=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true)
    for s in "$root"/tests/ops/context/device_target_gpu.msl "$root"/tests/dist/collectives.msl "$root"/tests/dist/collective_grads.msl; do
      LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}${nccl_dir:+:$nccl_dir}" "$msl" --device gpu run "$s" 2>&1 | tail -n 5
      echo "$(basename "$s") exit: ${PIPESTATUS[0]}"
    done
    echo '```'
    echo
    echo "## The ops scripts on the GPU (msl --device gpu), graph mode and PyNative"
    echo
    echo '```'
    ops_on_gpu "$dir/bin/msl_script_runner" "$msl" graph
    ops_on_gpu "$dir/bin/msl_script_runner" "$msl" pynative
    echo '```'
    echo
    echo "## Benchmarks (same GPU, same run)"
    echo
    echo "| workload | MSL | PyTorch | MSL / PyTorch |"
    echo "|---|---|---|---|"
    local m t
    m=$("$msl" run "$root/tests/bench/gpu/dispatch.msl" 2>&1 | tail -n 1)
    t=$(python3 "$root/tests/bench/gpu/torch_gpu.py" dispatch 2>&1 | tail -n 1)
    echo "| tiny-op dispatch, us/op | $m | $t | $(python3 -c "print(f'{float(\"$m\")/float(\"$t\"):.2f}')" 2>/dev/null || echo '?') |"
    m=$("$msl" run "$root/tests/bench/gpu/bandwidth.msl" 2>&1 | tail -n 1)
    t=$(python3 "$root/tests/bench/gpu/torch_gpu.py" bandwidth 2>&1 | tail -n 1)
    echo "| x * y + x over 2^26 floats, GB/s | $m | $t | $(python3 -c "print(f'{float(\"$t\")/float(\"$m\"):.2f}')" 2>/dev/null || echo '?') (time ratio) |"
    m=$("$msl" run "$root/tests/bench/gpu/fused.msl" 2>&1 | tail -n 1)
    t=$(python3 "$root/tests/bench/gpu/torch_gpu.py" fused 2>&1 | tail -n 1)
    local c
    c=$(python3 "$root/tests/bench/gpu/torch_gpu.py" copy 2>&1 | tail -n 1)
    echo "| relu(x*a+b)*sigmoid(x)-tanh(x)/2, 16M floats, ms (graph mode) | $m | $t eager; copy $c | $(python3 -c "print(f'{float(\"$m\")/float(\"$c\"):.2f}')" 2>/dev/null || echo '?') x the copy |"
  } > "$report" 2>&1
  cat "$report"
  rm -rf "$dir"
}

case "$cmd" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: scripts/gpu_check.sh pack [BUILD] | run [BUNDLE] [REPORT_DIR]" >&2; exit 2 ;;
esac
