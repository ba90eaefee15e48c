#!/usr/bin/env bash
# Interpreter benchmarks: runs each program with MSL and with CPython
# (python3) in the same run and prints the time ratio MSL/CPython (< 1 means
# MSL is faster). Not a CTest test: run it by hand and record the numbers in
# docs/performance.md.
#   tests/bench/interp/run_bench.sh [path/to/msl] [repeats]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
msl="${1:-$here/../../../build/interp/msl}"
reps="${2:-3}"
py="${PYTHON:-python3}"

best() {  # best wall time of $reps runs of the command, in seconds
  local b=""
  for _ in $(seq "$reps"); do
    local s e
    s=$(date +%s.%N); "$@" >/tmp/msl_bench_out.$$ 2>&1; e=$(date +%s.%N)
    b=$(echo "$s $e $b" | awk '{t=$2-$1; if ($3=="" || t<$3) print t; else print $3}')
  done
  echo "$b"
}

printf "%-12s %10s %10s %8s  %s\n" benchmark "msl (s)" "cpython (s)" ratio output-match
for prog in fib loop wordcount methods; do
  f="$here/$prog.msl"
  out_msl=$("$msl" run "$f"); out_py=$("$py" "$f")
  match=$([ "$out_msl" = "$out_py" ] && echo yes || echo "NO: $out_msl vs $out_py")
  tm=$(best "$msl" run "$f")
  tp=$(best "$py" "$f")
  printf "%-12s %10.3f %10.3f %8.2f  %s\n" "$prog" "$tm" "$tp" "$(echo "$tm $tp" | awk '{print $1/$2}')" "$match"
done
echo "CPython: $("$py" --version 2>&1)"
