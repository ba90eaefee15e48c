#!/usr/bin/env bash
# The on-disk compile cache of graph mode's fused loops, through the `msl`
# command line: a script with two fused clusters run twice with one
# XDG_CACHE_HOME compiles its loops the first time and loads every one from
# the cache the second (msl --profile's "jit:" line counts them), with the
# same results, which match float64 references computed op by op in the
# script; an unusable cache directory only means compiling again.
set -u
msl="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL $1"; shift; printf '%s\n' "$@" | sed 's/^/  | /'; fails=$((fails+1)); }

cat > "$tmp/fused.msl" <<'EOF'
import msl
from msl import ops


@msl.jit
def chain(x, a):
    return ops.relu(x * a + 1.0) * ops.sigmoid(x) - ops.tanh(x) / 2.0


@msl.jit
def expm1_half(x):
    return ops.exp(x * 0.5) - 1.0


def max_rel_err(y, want):
    return (ops.reduce_max(ops.abs(y.astype(msl.float64) - want)) / (ops.reduce_max(ops.abs(want)) + 1e-30)).item()


x = msl.Tensor([-3.0, -1.5, -0.25, 0.0, 0.5, 1.0, 2.5, 4.0] * 9, msl.float32)
a = msl.Tensor([0.5, -2.0, 1.0, 3.0, -0.75, 2.0, 1.5, -1.0] * 9, msl.float32)
x64, a64 = x.astype(msl.float64), a.astype(msl.float64)
want = ops.relu(x64 * a64 + 1.0) * ops.sigmoid(x64) - ops.tanh(x64) / 2.0
print(max_rel_err(chain(x, a), want) < 2e-6, max_rel_err(expm1_half(x), ops.exp(x64 * 0.5) - 1.0) < 2e-6)
EOF

# run NAME XDG_CACHE_HOME: sets $out (stdout) and $jit (the "jit:" line).
run() {
  local name="$1" cache="$2" err status
  out="$(XDG_CACHE_HOME="$cache" HOME="$cache" "$msl" --mode graph --profile run "$tmp/fused.msl" 2> "$tmp/err")"
  status=$?
  err="$(cat "$tmp/err")"
  jit="$(grep '^jit: ' "$tmp/err")"
  if [ "$status" != 0 ] || [ "$out" != "True True" ] || [ -z "$jit" ]; then
    fail "$name: exit status $status, output '$out'" "$err"
    return 1
  fi
}

# "jit: N compiled, M from disk cache, K from memory" -> the numbers.
counts() { sed -E 's/^jit: ([0-9]+) compiled, ([0-9]+) from disk cache, ([0-9]+) from memory$/\1 \2 \3/' <<< "$jit"; }

if run first-run "$tmp/cache"; then
  read -r compiled disk _ <<< "$(counts)"
  objects=$(ls "$tmp/cache/msl/kernels" 2>/dev/null | grep -c '\.o$')
  if [ "$compiled" -lt 2 ] || [ "$disk" != 0 ] || [ "$objects" != "$compiled" ]; then
    fail "first-run: expected >= 2 loops compiled and stored, got '$jit' and $objects objects"
  else
    echo "ok   first-run ($jit)"
  fi
  if run second-run "$tmp/cache"; then
    read -r compiled2 disk2 _ <<< "$(counts)"
    if [ "$compiled2" != 0 ] || [ "$disk2" != "$compiled" ]; then
      fail "second-run: expected 0 compiled, $compiled from disk cache, got '$jit'"
    else
      echo "ok   second-run ($jit)"
    fi
  fi
fi

# A regular file where the cache directory should be: compiled, no error.
echo "not a directory" > "$tmp/file"
if run unusable-cache "$tmp/file"; then
  read -r compiled3 disk3 _ <<< "$(counts)"
  if [ "$compiled3" -lt 2 ] || [ "$disk3" != 0 ]; then
    fail "unusable-cache: expected the loops compiled, got '$jit'"
  else
    echo "ok   unusable-cache ($jit)"
  fi
fi

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
