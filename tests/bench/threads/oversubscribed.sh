#!/usr/bin/env bash
# LeNet-5 forward and training-step latency on an idle machine and with a
# CPU-bound busy loop on every core (the machine shared with another job),
# in graph mode and PyNative mode. Prints each time and loaded / idle.
#   tests/bench/threads/oversubscribed.sh [MSL [BATCH [CALLS]]]
# Not a test: the ratios depend on the machine and on what else runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
msl="${1:-$root/build/interp/msl}"
batch="${2:-64}"
calls="${3:-50}"
prog="$root/tests/bench/threads/lenet_calls.msl"

busy=()
stop_busy() {
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${busy[@]}"; do wait "$pid" 2>/dev/null || true; done
  busy=()
}
trap stop_busy EXIT

# "lenet graph batch 64 threads 2: forward 0.528 ms, training step 10.164 ms" -> "0.528 10.164"
measure() {
  local line
  line="$("$msl" run "$prog" "$1" "$batch" "$calls")"
  echo "$line" >&2
  sed -n 's/.*forward \([0-9.]*\) ms, training step \([0-9.]*\) ms/\1 \2/p' <<<"$line"
}

declare -A idle loaded
for mode in graph pynative; do
  idle[$mode]="$(measure "$mode")"
done
for _ in $(seq "$(nproc)"); do
  bash -c 'while :; do :; done' &
  busy+=($!)
done
sleep 0.5
for mode in graph pynative; do
  loaded[$mode]="$(measure "$mode")"
done
stop_busy

echo "mode      call           idle ms   loaded ms   loaded/idle  ($(nproc) busy loops)"
for mode in graph pynative; do
  read -r fi ti <<<"${idle[$mode]}"
  read -r fl tl <<<"${loaded[$mode]}"
  awk -v m="$mode" -v fi="$fi" -v fl="$fl" -v ti="$ti" -v tl="$tl" 'BEGIN {
    printf "%-9s forward     %9.3f %11.3f %12.1fx\n", m, fi, fl, fl / fi
    printf "%-9s train step  %9.3f %11.3f %12.1fx\n", m, ti, tl, tl / ti }'
done
