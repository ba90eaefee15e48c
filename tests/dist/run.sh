#!/usr/bin/env bash
# Data-parallel tests: 2 processes under `msl launch` on this machine.
#   run.sh MSL script FILE   FILE prints "ok ... rank R of 2" on each rank
#   run.sh MSL kill          a rank killed mid-job ends the job fast, named
#   run.sh MSL timeout       a rank that never joins a collective ends the
#                            job after the collective timeout, named
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
  *) echo "usage: run.sh MSL script FILE | kill | timeout"; exit 2 ;;
esac
