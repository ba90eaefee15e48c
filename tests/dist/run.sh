#!/usr/bin/env bash
# Data-parallel tests: 2 processes under `msl launch` on this machine.
#   run.sh MSL script FILE   FILE prints "ok ... rank R of 2" on each rank
#   run.sh MSL world1 FILE   FILE run alone prints "ok ... rank 0 of 1"
#   run.sh MSL kill          a rank killed mid-job ends the job fast, named
#   run.sh MSL timeout       a rank that never joins a collective ends the
#                            job after the collective timeout, named
#   run.sh MSL launcher      msl launch's usage errors and its mpirun line
set -uo pipefail
msl=$1
what=$2
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$tmp/out"; exit 1; }

case $what in
  script)
    file=$3
    "$msl" launch -n 2 --timeout 120 "$file" >"$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || fail "msl launch exited with $rc"
    for r in 0 1; do
      grep -q "^ok .* rank $r of 2$" "$tmp/out" || fail "rank $r did not report ok"
    done
    cat "$tmp/out"
    ;;
  world1)
    "$msl" run "$3" >"$tmp/out" 2>&1 || fail "msl run exited with $?"
    grep -q "^ok .* rank 0 of 1$" "$tmp/out" || fail "no ok line"
    cat "$tmp/out"
    ;;
  kill)
    export MSL_TEST_PID_FILE=$tmp/pid
    start=$(date +%s)
    "$msl" launch -n 2 --timeout 100 "$dir/rank_stops.msl" >"$tmp/out" 2>&1 &
    launcher=$!
    for _ in $(seq 1 300); do [ -s "$tmp/pid" ] && break; sleep 0.1; done
    [ -s "$tmp/pid" ] || fail "rank 1 never started"
    kill -9 "$(cat "$tmp/pid")"
    wait $launcher
    rc=$?
    took=$(( $(date +%s) - start ))
    [ $rc -ne 0 ] || fail "the job exited 0 after a rank was killed"
    [ $took -lt 60 ] || fail "the job took ${took} s to end after a rank was killed"
    grep -q "rank 1 .*signal 9" "$tmp/out" || fail "the output does not name the killed rank"
    grep -q "msl launch: the job of 2 processes failed" "$tmp/out" || fail "no launcher summary"
    echo "killed rank 1: the job ended in ${took} s with status $rc"
    ;;
  timeout)
    export MSL_TEST_PID_FILE=$tmp/pid
    start=$(date +%s)
    "$msl" launch -n 2 --timeout 3 "$dir/rank_stops.msl" >"$tmp/out" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    [ $rc -ne 0 ] || fail "the job exited 0 although a collective timed out"
    [ $took -lt 40 ] || fail "the job took ${took} s to end after a 3 s collective timeout"
    grep -q "msl: rank 0 of 2: all_reduce (sum, 4 float32 elements) did not complete in 3 s" "$tmp/out" \
      || fail "the timeout message does not name the rank and the collective"
    echo "rank 1 absent: rank 0's all_reduce timed out, the job ended in ${took} s with status $rc"
    ;;
  launcher)
    "$msl" launch script.msl >"$tmp/out" 2>&1
    [ $? -eq 2 ] || fail "msl launch without -n did not exit 2"
    grep -q "msl launch: -n N (the number of processes) is required" "$tmp/out" || fail "no message for a missing -n"
    "$msl" launch -n 0 script.msl >"$tmp/out" 2>&1
    grep -q "msl launch: -n must be 1..65536, got '0'" "$tmp/out" || fail "no message for -n 0"
    "$msl" launch -n 2 --frobnicate script.msl >"$tmp/out" 2>&1
    grep -q "msl launch: unknown option '--frobnicate'" "$tmp/out" || fail "no message for an unknown option"
    "$msl" launch -n 2 >"$tmp/out" 2>&1
    grep -q "msl launch: no script to run" "$tmp/out" || fail "no message for a missing script"
    # Two ranks share this machine's cores: cores/2 threads each (the cores
    # msl counts: affinity and cgroup quota), at least 1.
    "$msl" launch -n 2 --dry-run --timeout 7 train.msl --epochs 3 >"$tmp/out" 2>&1 || fail "--dry-run failed"
    root=""
    [ "$(id -u)" -eq 0 ] && root=" --allow-run-as-root"
    line="^mpirun -n 2$root( --oversubscribe --bind-to none)? -x MSL_COMM_TIMEOUT=7 $(readlink -f "$msl") --threads ([0-9]+) run train.msl --epochs 3\$"
    grep -qE -- "$line" "$tmp/out" || fail "dry run printed '$(cat "$tmp/out")', not matching '$line'"
    threads=$(sed -E 's/.* --threads ([0-9]+) .*/\1/' "$tmp/out")
    [ "$threads" -ge 1 ] && [ $(( threads * 2 )) -le "$(nproc)" -o "$threads" -eq 1 ] || fail "$threads threads per rank on $(nproc) cores"
    want=$(cat "$tmp/out")
    "$msl" launch -n 64 --dry-run x.msl >"$tmp/out" 2>&1
    grep -q -- "--oversubscribe --bind-to none" "$tmp/out" || fail "64 ranks on $(nproc) cores without --oversubscribe"
    echo "msl launch: usage errors named; mpirun line: $want"
    ;;
  *) echo "usage: run.sh MSL script FILE | world1 FILE | kill | timeout | launcher"; exit 2 ;;
esac
