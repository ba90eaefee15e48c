#!/usr/bin/env bash
# Ctrl-C (SIGINT) raises KeyboardInterrupt in a program blocked in a system
# call — input(), sys.stdin, open() of a FIFO without a writer, a read from
# a quiet pipe, time.sleep — within a second: the uncaught KeyboardInterrupt
# prints its traceback and exits with 130, as Python's does. A caught one
# leaves the program running, and the next Ctrl-C interrupts the next wait.
# A data set file that is a FIFO is refused at once ("not a regular file").
set -u
set -m  # background jobs get SIGINT (without job control they ignore it)
msl="$1"
tmp="$(mktemp -d)"
holders=()
cleanup() {
  for p in "${holders[@]}"; do kill "$p" 2> /dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
total=0
fail() {
  echo "FAIL $1: $2"
  sed 's/^/  | /' "$tmp/$1.err"
  fails=$((fails+1))
}

# A FIFO whose writing end stays open (held by a sleeping process), so a
# reader blocks instead of seeing the end of the file.
quiet_pipe() {
  mkfifo "$1"
  sleep 600 > "$1" &
  holders+=($!)
  disown
}

# wait_for FILE TEXT: up to 20 s (a loaded machine starts slowly).
wait_for() {
  for _ in $(seq 1 400); do
    grep -q "$2" "$1" 2> /dev/null && return 0
    sleep 0.05
  done
  return 1
}

# ends_within PID SECONDS: true once PID has exited.
ends_within() {
  local tenths=$(($2 * 10))
  for _ in $(seq 1 "$tenths"); do
    kill -0 "$1" 2> /dev/null || return 0
    sleep 0.1
  done
  return 1
}

# interrupted NAME STDIN CODE: runs CODE, which writes "waiting" to stderr
# before it blocks; 0.3 s after that, one SIGINT must end it within 2 s,
# with status 130 and "KeyboardInterrupt" as the last line of stderr.
interrupted() {
  local name="$1" input="$2" code="$3" err="$tmp/$1.err"
  total=$((total+1))
  "$msl" -c "$code" < "$input" > "$tmp/$name.out" 2> "$err" &
  local pid=$!
  if ! wait_for "$err" waiting; then
    kill -9 "$pid"; wait "$pid" 2> /dev/null; fail "$name" "never started waiting"; return
  fi
  sleep 0.3
  kill -INT "$pid"
  if ! ends_within "$pid" 2; then
    kill -9 "$pid"; wait "$pid" 2> /dev/null; fail "$name" "still running 2 s after SIGINT"; return
  fi
  wait "$pid"
  local status=$?
  if [ "$status" != 130 ]; then fail "$name" "exit status $status, expected 130"; return; fi
  if [ "$(tail -n 1 "$err")" != "KeyboardInterrupt" ]; then fail "$name" "the last line is not KeyboardInterrupt"; return; fi
  echo "ok   $name"
}

quiet_pipe "$tmp/stdin"
mkfifo "$tmp/no_writer"
quiet_pipe "$tmp/quiet"
wait_msg='import sys
sys.stderr.write("waiting\n")
'
interrupted input "$tmp/stdin" "${wait_msg}input()"
interrupted input-prompt "$tmp/stdin" "${wait_msg}input('name? ')"
interrupted stdin-readline "$tmp/stdin" "${wait_msg}sys.stdin.readline()"
interrupted stdin-read "$tmp/stdin" "${wait_msg}sys.stdin.read()"
interrupted open-fifo-without-writer /dev/null "${wait_msg}open('$tmp/no_writer')"
interrupted read-quiet-pipe /dev/null "${wait_msg}f = open('$tmp/quiet')
f.readline()"
interrupted sleep /dev/null "${wait_msg}import time
time.sleep(60)"
interrupted busy-loop /dev/null "${wait_msg}while True:
    pass"

# A caught KeyboardInterrupt: the program goes on, and a second Ctrl-C
# interrupts its next wait (it is neither lost nor ignored).
total=$((total+1))
err="$tmp/twice.err"
"$msl" -c "${wait_msg}try:
    input()
except KeyboardInterrupt:
    sys.stderr.write('caught\n')
    input()" < "$tmp/stdin" 2> "$err" &
pid=$!
if ! wait_for "$err" waiting; then
  kill -9 "$pid"; fail twice "never started waiting"
else
  sleep 0.3
  kill -INT "$pid"
  if ! wait_for "$err" caught; then
    kill -9 "$pid"; fail twice "the first SIGINT was not caught"
  else
    sleep 0.3
    kill -INT "$pid"
    if ! ends_within "$pid" 2; then
      kill -9 "$pid"; fail twice "still running 2 s after the second SIGINT"
    else
      wait "$pid"; status=$?
      if [ "$status" != 130 ]; then fail twice "exit status $status, expected 130"; else echo "ok   twice"; fi
    fi
  fi
fi
wait "$pid" 2> /dev/null

# Data set sources refuse a FIFO instead of waiting for a writer.
check_refused() {  # NAME EXPECTED CODE
  total=$((total+1))
  local out
  out="$(timeout 20 "$msl" -c "$3" 2> "$tmp/$1.err")"
  if [ "$out" != "$2" ]; then echo "FAIL $1: printed '$out', expected '$2'"; sed 's/^/  | /' "$tmp/$1.err"; fails=$((fails+1)); return; fi
  echo "ok   $1"
}
mkdir "$tmp/mnist" "$tmp/cifar"
mkfifo "$tmp/mnist/train-images-idx3-ubyte" "$tmp/mnist/train-labels-idx1-ubyte" "$tmp/cifar/data_batch_1.bin"
check_refused mnist-fifo "'$tmp/mnist/train-images-idx3-ubyte': not a regular file (a FIFO); a data set file must be a regular file" "import msl.dataset as ds
try:
    ds.MnistDataset('$tmp/mnist').get_dataset_size()
except RuntimeError as e:
    print(e)"
check_refused cifar-fifo "'$tmp/cifar/data_batch_1.bin': not a regular file (a FIFO); a data set file must be a regular file" "import msl.dataset as ds
try:
    ds.Cifar10Dataset('$tmp/cifar').get_dataset_size()
except RuntimeError as e:
    print(e)"

if [ "$fails" -ne 0 ]; then echo "$fails of $total failed"; exit 1; fi
echo "all $total passed"
