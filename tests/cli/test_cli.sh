#!/usr/bin/env bash
# The `msl` command line: exit statuses (0 ok, 1 MSL error, 2 usage), the
# `--emit` stages, argv passing, and errors for missing or unreadable files.
set -u
msl="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
total=0
check() {  # check NAME EXPECTED_STATUS EXPECTED_SUBSTRING -- command...
  local name="$1" want="$2" text="$3"; shift 4
  total=$((total+1))
  local out status
  out="$("$@" 2>&1)"; status=$?
  if [ "$status" != "$want" ]; then
    echo "FAIL $name: exit status $status, expected $want"; echo "$out" | sed 's/^/  | /'; fails=$((fails+1)); return
  fi
  if [[ "$out" != *"$text"* ]]; then
    echo "FAIL $name: output lacks '$text'"; echo "$out" | sed 's/^/  | /'; fails=$((fails+1)); return
  fi
  echo "ok   $name"
}
printf 'import sys\nprint(sys.argv[1:])\n' > "$tmp/args.msl"
printf 'x = (1 +\n' > "$tmp/bad.msl"
printf 'def f():\n    return 1 / 0\nf()\n' > "$tmp/err.msl"
printf 'import sys\nsys.exit(3)\n' > "$tmp/exit.msl"
printf 'x = 1\n' > "$tmp/ok.msl"

check snippet 0 "4" -- "$msl" -c 'print(2 + 2)'
check run-args 0 "['a', 'b c']" -- "$msl" run "$tmp/args.msl" a "b c"
check options-after-run 0 "['z']" -- "$msl" run --mode pynative "$tmp/args.msl" z
check runtime-error 1 "ZeroDivisionError: division by zero" -- "$msl" run "$tmp/err.msl"
check traceback-frame 1 "err.msl:2:12 in f" -- "$msl" run "$tmp/err.msl"
check syntax-error 1 "bad.msl:1:5: error: '(' was never closed." -- "$msl" run "$tmp/bad.msl"
check sys-exit 3 "" -- "$msl" run "$tmp/exit.msl"
check missing-file 2 "cannot open file" -- "$msl" run "$tmp/nope.msl"
check directory-as-file 2 "cannot open file" -- "$msl" run "$tmp"
check unknown-option 2 "unknown option '--frobnicate'" -- "$msl" --frobnicate
check bad-mode 2 "--mode must be 'graph' or 'pynative'" -- "$msl" --mode fast -c 'pass'
check run-without-file 2 "run needs a FILE" -- "$msl" run
check bad-seed 2 "expects an integer" -- "$msl" --seed x -c 'pass'
check emit-tokens 0 "1:1 NAME 'x'" -- "$msl" --emit=tokens "$tmp/ok.msl"
check emit-ast 0 "Assign 1:1" -- "$msl" --emit ast "$tmp/ok.msl"
check emit-unknown 2 "unknown --emit stage" -- "$msl" --emit=llvm "$tmp/ok.msl"
check help 0 "usage: msl" -- "$msl" --help
echo "$((total - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
