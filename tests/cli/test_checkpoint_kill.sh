#!/usr/bin/env bash
# Checkpoints survive kill -9 (docs/reliability.md): a real training loop
# (Model.train with ModelCheckpoint(keep_checkpoint_max=1,
# save_checkpoint_steps=1), each save about 1 MB) is killed with SIGKILL at
# a random moment after its first save, 10 times; every time at least one
# checkpoint of that run must exist, and every one that exists must load
# with finite values. Then a clean run in the same folder must remove the
# temporary files that killed saves left (and one planted there), and keep
# the one a live writer holds (a lock this script takes) and files of other
# prefixes.
set -u
msl="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails+1)); }

cat > "$tmp/train.msl" <<'EOF'
import sys
import msl
from msl import nn, ops, Tensor, Parameter
from msl.train import Model
from msl.train.callback import ModelCheckpoint, CheckpointConfig


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 1)
        # Frozen ballast: each checkpoint is about 1 MB, so saving takes
        # most of a step and a kill often lands inside a save.
        self.table = Parameter(ops.ones((512, 512), msl.float32), name="table", requires_grad=False)

    def construct(self, x):
        return self.fc(x)


x = Tensor([[1.0, 0.0, 0.5, 2.0], [0.0, 1.0, -1.0, 0.5]], msl.float32)
y = Tensor([[1.0], [2.0]], msl.float32)
net = Net()
ck = ModelCheckpoint(prefix="net", directory=sys.argv[1],
                     config=CheckpointConfig(save_checkpoint_steps=1, keep_checkpoint_max=1))
print("prefix", ck.prefix, flush=True)
Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.01)).train(int(sys.argv[2]), [(x, y)] * 50,
                                                                    callbacks=[ck])
print("done")
EOF
cat > "$tmp/check.msl" <<'EOF'
# check.msl DIR PREFIX: how many checkpoints of PREFIX there are, and how
# many load with finite values (a damaged one raises).
import os
import sys
import msl
from msl import ops
from msl.train.serialization import load_checkpoint

directory, prefix = sys.argv[1], sys.argv[2]
names = [n for n in os.listdir(directory) if n.startswith(prefix + "-") and n.endswith(".ckpt")]
good = 0
for n in names:
    params = load_checkpoint(os.path.join(directory, n))
    if len(params) > 0 and all([ops.reduce_min(ops.isfinite(p).astype(msl.float32)).item() == 1.0
                                for p in params.values()]):
        good += 1
print(len(names), good)
EOF

d="$tmp/ckpt"
mkdir "$d"
for i in $(seq 1 10); do
  "$msl" run "$tmp/train.msl" "$d" 1000 > "$tmp/log$i" 2>&1 &
  pid=$!
  prefix=""
  for _ in $(seq 1 6000); do  # up to 60 s for the first save (a loaded CI machine)
    prefix="$(sed -n 's/^prefix //p' "$tmp/log$i")"
    [ -n "$prefix" ] && compgen -G "$d/$prefix-*.ckpt" > /dev/null && break
    sleep 0.01
  done
  sleep "0.$(printf '%03d' $((RANDOM % 400)))"
  kill -9 "$pid"
  wait "$pid" 2> /dev/null
  if [ -z "$prefix" ]; then
    fail "run $i: no prefix line in its log (print(flush=True) to a file)"; cat "$tmp/log$i"; continue
  fi
  out="$("$msl" run "$tmp/check.msl" "$d" "$prefix" 2>&1)"
  read -r count good <<< "$out"
  if [ "${count:-0}" -lt 1 ] || [ "$count" != "$good" ]; then
    fail "run $i ($prefix): $out"; ls -la "$d"
  else
    echo "ok   kill $i: $prefix has $count checkpoint(s), all load"
  fi
done

# Temporary files: one a killed writer left (unlocked), one a live writer
# holds (this shell keeps it locked), and two of other prefixes.
: > "$d/.net_3-1_7.ckpt.tmp-AbC123"
: > "$d/.net-1_8.ckpt.tmp-LiVe12"
exec {lock}< "$d/.net-1_8.ckpt.tmp-LiVe12"
flock -x "$lock"
: > "$d/.other-1_1.ckpt.tmp-XyZ789"
: > "$d/.netx-1_1.ckpt.tmp-QwE456"
out="$("$msl" run "$tmp/train.msl" "$d" 1 2>&1)"
[[ "$out" == *done* ]] || fail "clean run: $out"
left="$(cd "$d" && ls -A | grep '\.tmp-' | sort | tr '\n' ' ')"
want=".net-1_8.ckpt.tmp-LiVe12 .netx-1_1.ckpt.tmp-QwE456 .other-1_1.ckpt.tmp-XyZ789 "
if [ "$left" != "$want" ]; then fail "temporary files after a clean run: '$left', expected '$want'"
else echo "ok   clean run removed the stale temporary files"; fi
exec {lock}<&-

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all passed"
