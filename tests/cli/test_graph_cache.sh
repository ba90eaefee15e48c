#!/usr/bin/env bash
# The on-disk cache of whole compiled graphs (interp/graph/graph_disk_cache.h),
# through the `msl` command line: a graph-mode training script run twice
# with one XDG_CACHE_HOME compiles its training step the first time and
# loads it from the cache the second (msl --profile's "graphs:" line counts
# them), with the same loss values, which match a hand-computed first loss
# and first update; another learning rate (a Parameter, as in MindSpore,
# passed to the graph when it runs) loads the same graph and gives other
# losses; changing an attribute of a Cell misses the cache (and gives other
# losses); a damaged entry is a miss,
# not an error; --log-level info reports the hit. A gradient function called
# from PyNative code (msl.value_and_grad(f, None, weights)(x)) is cached
# the same way, and a change to a global its code reads misses, as does a
# change to a module attribute it reads (sys.argv).
set -u
msl="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL $1"; shift; printf '%s\n' "$@" | sed 's/^/  | /'; fails=$((fails+1)); }

cat > "$tmp/train.msl" <<'EOF'
import sys
import msl
from msl import ops, Tensor, Parameter, nn, context

context.set_context(mode=context.GRAPH_MODE)
lr = float(sys.argv[1])
scale = float(sys.argv[2])


class Linear(nn.Cell):
    def __init__(self):
        super().__init__()
        self.weight = Parameter(Tensor([[0.0], [0.0]], msl.float32), name="weight")
        self.bias = Parameter(Tensor([0.0], msl.float32), name="bias")

    def construct(self, x):
        return ops.matmul(x, self.weight) + self.bias


class ScaledMSE(nn.Cell):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def construct(self, out, label):
        d = out - label
        return ops.reduce_mean(d * d) * self.scale


X = [[1.0, 2.0], [2.0, 0.5], [-1.0, 1.0], [0.5, -1.5]]
Y = [[3.0 * a - 2.0 * b + 0.5] for a, b in X]
net = Linear()
step = nn.TrainOneStepCell(nn.WithLossCell(net, ScaledMSE(scale)), nn.SGD(net.trainable_params(), lr))
step.set_train()
x = Tensor(X, msl.float32)
y = Tensor(Y, msl.float32)
losses = [step(x, y).item()]
# By hand at w = 0, b = 0: loss = scale * mean(y^2); dL/dw_j = scale * 2/n
# * sum(-y_i x_ij), dL/db = scale * 2/n * sum(-y_i); SGD: w = -lr * grad.
n = len(X)
want_loss = scale * sum([Y[i][0] * Y[i][0] for i in range(n)]) / n
want_w = [-lr * scale * 2.0 / n * sum([-Y[i][0] * X[i][j] for i in range(n)]) for j in range(2)]
want_b = -lr * scale * 2.0 / n * sum([-Y[i][0] for i in range(n)])
w = net.weight.reshape(-1)
ok = abs(losses[0] - want_loss) < 1e-5 * want_loss and abs(w[0].item() - want_w[0]) < 1e-5 and \
    abs(w[1].item() - want_w[1]) < 1e-5 and abs(net.bias[0].item() - want_b) < 1e-5
for i in range(4):
    losses.append(step(x, y).item())
print(ok, " ".join([repr(l) for l in losses]))
EOF

# run NAME XDG_CACHE_HOME LR SCALE: sets $out (stdout) and $graphs (the
# "graphs:" line as "compiled disk_hits").
run() {
  local name="$1" cache="$2" status err
  out="$(XDG_CACHE_HOME="$cache" HOME="$cache" "$msl" --profile run "$tmp/train.msl" "$3" "$4" 2> "$tmp/err")"
  status=$?
  err="$(cat "$tmp/err")"
  graphs="$(sed -nE 's/^graphs: ([0-9]+) compiled, ([0-9]+) from disk cache$/\1 \2/p' "$tmp/err")"
  if [ "$status" != 0 ] || [ "${out%% *}" != "True" ] || [ -z "$graphs" ]; then
    fail "$name: exit status $status, output '$out', graphs '$graphs'" "$err"
    return 1
  fi
}

entries() { ls "$1/msl/graphs" 2>/dev/null | grep -c '\.o$'; }

if run first-run "$tmp/cache" 0.1 1.0; then
  first="$out"
  if [ "$graphs" != "1 0" ] || [ "$(entries "$tmp/cache")" != 1 ]; then
    fail "first-run: expected '1 0' (compiled, from disk) and one entry, got '$graphs', $(entries "$tmp/cache") entries"
  else
    echo "ok   first-run ($graphs)"
  fi
  if run second-run "$tmp/cache" 0.1 1.0; then
    if [ "$graphs" != "0 1" ] || [ "$out" != "$first" ]; then
      fail "second-run: expected '0 1' and losses '$first', got '$graphs' and '$out'"
    else
      echo "ok   second-run ($graphs, same losses)"
    fi
  fi
  info="$(XDG_CACHE_HOME="$tmp/cache" "$msl" --log-level info run "$tmp/train.msl" 0.1 1.0 2>&1 >/dev/null)"
  if [[ "$info" != *"[INFO] graph cache: @"*" loaded from the disk cache: $tmp/cache/msl/graphs/"* ]]; then
    fail "log-info: expected the hit reported at --log-level info" "$info"
  else
    echo "ok   log-info"
  fi
  if run other-lr "$tmp/cache" 0.05 1.0; then
    if [ "$graphs" != "0 1" ] || [ "$out" = "$first" ]; then
      fail "other-lr: expected a hit ('0 1') and other losses, got '$graphs' and '$out'"
    else
      echo "ok   other-lr ($graphs)"
    fi
  fi
  if run other-cell-attribute "$tmp/cache" 0.1 2.0; then
    if [ "$graphs" != "1 0" ] || [ "$out" = "$first" ]; then
      fail "other-cell-attribute: expected a miss ('1 0') and other losses, got '$graphs' and '$out'"
    else
      echo "ok   other-cell-attribute ($graphs)"
    fi
  fi
  # Every entry damaged in its last byte (the graph's bytes, under the
  # checksum): compiled again, same losses, the entry rewritten.
  for f in "$tmp/cache/msl/graphs/"*.o; do printf 'x' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") - 1)) conv=notrunc 2>/dev/null; done
  if run damaged-entry "$tmp/cache" 0.1 1.0; then
    if [ "$graphs" != "1 0" ] || [ "$out" != "$first" ]; then
      fail "damaged-entry: expected a recompile ('1 0') and losses '$first', got '$graphs' and '$out'"
    else
      echo "ok   damaged-entry ($graphs)"
    fi
    if run after-damage "$tmp/cache" 0.1 1.0 && [ "$graphs" != "0 1" ]; then
      fail "after-damage: expected the rewritten entry to hit, got '$graphs'"
    fi
  fi
fi

cat > "$tmp/grad.msl" <<'EOF'
import sys
import msl
from msl import ops, Tensor, Parameter, context

context.set_context(mode=context.PYNATIVE_MODE)
w = Parameter(Tensor([1.0, -2.0, 0.5], msl.float32), name="w")
x = Tensor([2.0, 1.0, -4.0], msl.float32)
power = int(sys.argv[1])


def loss_fn(x):
    d = x * w
    return ops.reduce_sum(d * d) if power == 2 else ops.reduce_sum(d * d * d)


g = msl.value_and_grad(loss_fn, None, [w])
v, grads = g(x)
# By hand: d = x * w = [2, -2, -2]; power 2: loss 12, dL/dw = 2 d x = [8, -4, 16];
# power 3: loss -8, dL/dw = 3 d^2 x = [24, 12, -48].
want = (12.0, [8.0, -4.0, 16.0]) if power == 2 else (-8.0, [24.0, 12.0, -48.0])
got = grads[0]
print(abs(v.item() - want[0]) < 1e-5 and all([abs(got[i].item() - want[1][i]) < 1e-5 for i in range(3)]), v.item())
EOF

# grad_run NAME POWER: sets $out and $graphs like run.
grad_run() {
  local name="$1" status
  out="$(XDG_CACHE_HOME="$tmp/gcache" HOME="$tmp/gcache" "$msl" --profile run "$tmp/grad.msl" "$2" 2> "$tmp/err")"
  status=$?
  graphs="$(sed -nE 's/^graphs: ([0-9]+) compiled, ([0-9]+) from disk cache$/\1 \2/p' "$tmp/err")"
  if [ "$status" != 0 ] || [ "${out%% *}" != "True" ]; then
    fail "$name: exit status $status, output '$out'" "$(cat "$tmp/err")"
    return 1
  fi
}
for case in "grad-first 2 1 0" "grad-second 2 0 1" "grad-other-value 3 1 0"; do
  set -- $case
  if grad_run "$1" "$2"; then
    if [ "$graphs" != "$3 $4" ]; then
      fail "$1: expected '$3 $4' (compiled, from disk), got '$graphs'"
    else
      echo "ok   $1 ($graphs)"
    fi
  fi
done

# A construct that reads a module attribute (`sys.argv`) compiles that value
# into its graph (the branch is decided when compiled): a run with other
# arguments must miss, not load the graph that took the other branch.
cat > "$tmp/argv_branch.msl" <<'EOF'
import sys
import msl
from msl import nn, ops


class Net(nn.Cell):
    def construct(self, x):
        if len(sys.argv) > 1:
            return x * 2.0
        return x * 3.0


print(Net()(ops.ones((2,))).tolist())
EOF
for case in "argv-first:[3.0, 3.0]:" "argv-other:[2.0, 2.0]:more" "argv-again:[3.0, 3.0]:"; do
  IFS=: read -r name want arg <<< "$case"
  got="$(XDG_CACHE_HOME="$tmp/acache" HOME="$tmp/acache" "$msl" run "$tmp/argv_branch.msl" $arg 2>&1)"
  if [ "$got" != "$want" ]; then
    fail "$name: expected $want, got '$got'"
  else
    echo "ok   $name"
  fi
done

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
