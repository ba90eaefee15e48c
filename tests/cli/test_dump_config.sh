#!/usr/bin/env bash
# MindSpore's dump configuration (interp/dump_config.h): MINDSPORE_DUMP_CONFIG
# names a JSON file that picks kernels, inputs and/or outputs and the
# iterations (Model.train's steps) to dump; set_context(enable_dump=True,
# save_dump_path=DIR) dumps from inside a program. Checked on the files:
# every dumped matmul's output equals the product of its dumped inputs
# (NumPy, in float64, with whichever transposes the kernel took), the
# second and third steps dump the same number of kernels, a source-site
# filter keeps only that line's kernels, and bad files are errors naming
# the file and the setting.
set -u
msl="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }

cat > "$tmp/train.msl" <<'MSL'
import numpy as np
import msl
import msl.dataset as ds
from msl import nn, Model

msl.set_seed(5)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        y = x * 3.0
        return self.fc(y)


x = np.random.RandomState(0).randn(12, 4).astype(np.float32)
y = np.array([0, 1, 2] * 4, np.int32)
data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(4)
net = Net()
model = Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1))
model.train(1, data, dataset_sink_mode=False)
print("trained")
MSL
site_line=$(grep -n "y = x \* 3.0" "$tmp/train.msl" | cut -d: -f1)

# config NAME MODE KERNELS ITERATION INPUT_OUTPUT → $tmp/NAME.json dumping to $tmp/NAME
config() {
  cat > "$tmp/$1.json" <<JSON
{"common_dump_settings": {"dump_mode": $2, "path": "$tmp/$1", "net_name": "Net",
  "iteration": "$4", "input_output": $5, "kernels": $3, "support_device": [0],
  "saved_data": "tensor", "file_format": "npy", "op_debug_mode": 0},
 "e2e_dump_settings": {"enable": true, "trans_flag": true}}
JSON
}

run_with() {
  (cd "$tmp" && MINDSPORE_DUMP_CONFIG="$tmp/$1.json" "$msl" run train.msl > "$tmp/$1.out" 2> "$tmp/$1.err")
  local rc=$?
  (( rc == 0 )) || { fail "$1: exit $rc"; head -5 "$tmp/$1.err"; }
}

count() { grep -c "$2" "$tmp/$1/index.txt" 2>/dev/null || true; }

config all 1 '["MatMul"]' all 0
config it1 1 '["MatMul"]' 1 2
config it2 1 '["MatMul"]' 2 2
config site 1 "[\"train.msl:$site_line\"]" all 2
for c in all it1 it2 site; do run_with "$c"; done

n_all=$(count all '_matmul.npy')
n1=$(count it1 '_matmul.npy')
n2=$(count it2 '_matmul.npy')
echo "matmuls: all iterations $n_all, iteration 1: $n1, iteration 2: $n2"
(( n1 > 0 && n1 == n2 )) || fail "iterations 1 and 2 dumped $n1 and $n2 matmuls"
(( n_all >= 3 * n1 )) || fail "all iterations dumped $n_all matmuls, fewer than 3 x $n1"
[[ $(count it1 '_input_') == 0 ]] || fail "input_output 2 dumped inputs"
[[ $(count all '_input_0.npy') == "$n_all" && $(count all '_input_1.npy') == "$n_all" ]] \
  || fail "input_output 0: not two inputs per matmul"
others=$(grep -v "matmul" "$tmp/all/index.txt" | wc -l)
(( others == 0 )) || fail "dump_mode 1 with kernels [MatMul] dumped $others other files"
n_site=$(wc -l < "$tmp/site/index.txt")
off_site=$(grep -vc " @ .*train.msl:$site_line\$" "$tmp/site/index.txt" || true)
echo "site filter: $n_site files, $off_site from other lines"
(( n_site > 0 && off_site == 0 )) || fail "the site filter kept $off_site files of other lines ($n_site in all)"

# Every matmul's output is the product of its inputs.
cat > "$tmp/check.msl" <<'MSL'
import os
import sys
import numpy as np

folder = sys.argv[1]
names = [line.split()[0] for line in open(os.path.join(folder, "index.txt")).read().splitlines()]
checked = 0
for name in names:
    if not name.endswith("_matmul.npy"):
        continue
    stem = name[:-4]
    a = np.load(os.path.join(folder, stem + "_input_0.npy")).astype(np.float64)
    b = np.load(os.path.join(folder, stem + "_input_1.npy")).astype(np.float64)
    out = np.load(os.path.join(folder, name)).astype(np.float64)
    ok = False
    for ta in (False, True):
        for tb in (False, True):
            pa = a.T if ta else a
            pb = b.T if tb else b
            if pa.shape[-1] == pb.shape[0] and (pa @ pb).shape == out.shape:
                ok = ok or np.abs(pa @ pb - out).max() < 1e-4
    if not ok:
        print("not a product:", name)
    checked += 1
print("checked", checked)
MSL
checked=$("$msl" run "$tmp/check.msl" "$tmp/all" 2>&1)
echo "$checked"
[[ "$checked" == "checked $n_all" ]] || fail "matmul products: $checked"

# set_context(enable_dump=True, save_dump_path=...) inside a program.
cat > "$tmp/inline.msl" <<MSL
import numpy as np
from msl import context, Tensor
context.set_context(enable_dump=True, save_dump_path="$tmp/inline")
a = Tensor(np.ones((2, 2), np.float32)) + 1
context.set_context(enable_dump=False)
b = a * 5
print(context.get_context("save_dump_path") == "$tmp/inline")
MSL
out=$("$msl" run "$tmp/inline.msl" 2>&1)
[[ "$out" == "True" ]] || fail "enable_dump program: $out"
lines=$(wc -l < "$tmp/inline/index.txt")
grep -q "_add.npy" "$tmp/inline/index.txt" && ! grep -q "_mul" "$tmp/inline/index.txt" \
  || fail "enable_dump: index has $(cat "$tmp/inline/index.txt")"
echo "enable_dump: $lines file(s) while on"

# Bad files: errors naming the file and what is wrong, exit status 2.
bad() {
  printf '%s' "$2" > "$tmp/bad.json"
  local err rc
  err=$(cd "$tmp" && MINDSPORE_DUMP_CONFIG="$tmp/bad.json" "$msl" run train.msl 2>&1 >/dev/null)
  rc=$?
  if (( rc != 2 )) || [[ "$err" != *"bad.json"*"$3"* ]]; then fail "bad config ($1): exit $rc: $err"; fi
  echo "bad config ($1): $err"
}
bad "unknown key" '{"common_dump_settings": {"path": "d", "dump_mod": 1}}' 'unknown setting "dump_mod"'
bad "syntax" '{"common_dump_settings": {"path": "d",}' 'offset'
bad "iteration" '{"common_dump_settings": {"path": "d", "iteration": "3-1"}}' "ends before it starts"
bad "statistics" '{"common_dump_settings": {"path": "d", "saved_data": "statistic"}}' 'saved_data'
bad "no kernels" '{"common_dump_settings": {"path": "d", "dump_mode": 1}}' '"kernels" is empty'

if (( fails > 0 )); then
  echo "$fails failure(s)"
  exit 1
fi
echo "all passed"
