#!/usr/bin/env bash
# stdout redirected to a file is block-buffered, as in Python: print(...,
# flush=True) and sys.stdout.flush() must push the text to the file at once,
# so a job killed with SIGKILL keeps the log it flushed; unflushed text is
# written at a normal exit, and stderr output still comes after the stdout
# text printed before it.
set -u
msl="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
total=0

# killed NAME EXPECTED CODE: runs CODE with stdout to a file, waits (up to
# 10 s) until the file holds EXPECTED, kills the process with SIGKILL, and
# checks the file holds exactly EXPECTED.
killed() {
  local name="$1" want="$2" code="$3" out="$tmp/$1.out"
  total=$((total+1))
  "$msl" -c "$code" > "$out" 2> "$tmp/$name.err" &
  local pid=$!
  for _ in $(seq 1 1000); do
    [ "$(cat "$out" 2> /dev/null)" == "$want" ] && break
    sleep 0.01
  done
  kill -9 "$pid"
  wait "$pid" 2> /dev/null
  if [ "$(cat "$out")" != "$want" ]; then
    echo "FAIL $name: the file holds '$(cat "$out")', expected '$want'"; cat "$tmp/$name.err"; fails=$((fails+1))
  else
    echo "ok   $name"
  fi
}

killed print-flush "epoch 1 loss 0.5" 'import time
print("epoch 1 loss 0.5", flush=True)
print("never flushed")
time.sleep(60)'
killed stdout-flush "$(printf 'a\nb')" 'import sys, time
sys.stdout.write("a\n")
print("b")
sys.stdout.flush()
sys.stdout.write("never flushed\n")
time.sleep(60)'
killed print-file-flush "to stdout" 'import sys, time
print("to stdout", file=sys.stdout, flush=True)
print("never flushed")
time.sleep(60)'

check() {  # check NAME EXPECTED ACTUAL
  total=$((total+1))
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: got '$3', expected '$2'"; fails=$((fails+1)); fi
}
"$msl" -c 'print("at exit")' > "$tmp/exit.out"
check flushed-at-exit "at exit" "$(cat "$tmp/exit.out")"
"$msl" -c 'import sys
print("1")
sys.stderr.write("2\n")
print("3")
raise ValueError("4")' > "$tmp/order.out" 2>&1
check stderr-after-stdout "1 2 3 ValueError: 4" "$(grep -v '^ \|^Traceback' "$tmp/order.out" | tr '\n' ' ' | sed 's/ $//')"

if [ "$fails" -ne 0 ]; then echo "$fails of $total failed"; exit 1; fi
echo "all $total passed"
