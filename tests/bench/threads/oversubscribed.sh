#!/usr/bin/env bash
# LeNet-5 forward and training-step latency on an idle machine and with a
# CPU-bound busy loop on every core (the machine shared with another job),
# in graph mode and PyNative mode. Idle and loaded runs alternate ROUNDS
# times (so a change in what else runs on the machine hits both); prints
# the median of each and loaded / idle.
#   tests/bench/threads/oversubscribed.sh [MSL [BATCH [CALLS [ROUNDS]]]]
# Not a test: the ratios depend on the machine and on what else runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
msl="${1:-$root/build/interp/msl}"
batch="${2:-64}"
calls="${3:-50}"
rounds="${4:-3}"
prog="$root/tests/bench/threads/lenet_calls.msl"

busy=()
start_busy() {
  for _ in $(seq "$(nproc)"); do
    bash -c 'while :; do :; done' &
    busy+=($!)
  done
  sleep 0.5
}
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
  echo "$2: $line" >&2
  sed -n 's/.*forward \([0-9.]*\) ms, training step \([0-9.]*\) ms/\1 \2/p' <<<"$line"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A fwd step
for mode in graph pynative; do
  for _ in $(seq "$rounds"); do
    read -r f s <<<"$(measure "$mode" idle)"
    fwd[$mode,idle]+="$f "; step[$mode,idle]+="$s "
    start_busy
    read -r f s <<<"$(measure "$mode" loaded)"
    stop_busy
    fwd[$mode,loaded]+="$f "; step[$mode,loaded]+="$s "
  done
done

echo "medians of $rounds runs, $calls calls each; loaded: $(nproc) busy loops"
echo "mode      call           idle ms   loaded ms   loaded/idle"
for mode in graph pynative; do
  for call in forward "train step"; do
    if [ "$call" = forward ]; then i="${fwd[$mode,idle]}" l="${fwd[$mode,loaded]}"; else i="${step[$mode,idle]}" l="${step[$mode,loaded]}"; fi
    mi="$(tr ' ' '\n' <<<"$i" | grep . | median)"
    ml="$(tr ' ' '\n' <<<"$l" | grep . | median)"
    awk -v m="$mode" -v c="$call" -v i="$mi" -v l="$ml" 'BEGIN { printf "%-9s %-12s %9.3f %11.3f %12.1fx\n", m, c, i, l, l / i }'
  done
done
