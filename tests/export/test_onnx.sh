#!/usr/bin/env bash
# msl.export to ONNX: LeNet-5, ResNet-18 and an attention block exported by MSL
# (export_models.msl), then checked by Debian's onnx package and an
# independent NumPy evaluation (check_onnx.py, under /usr/bin/python3);
# the error cases' messages.
#   test_onnx.sh MSL
set -uo pipefail
msl=$1
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
/usr/bin/python3 -c 'import onnx' 2>/dev/null || fail "python3-onnx is not installed (scripts/install_deps.sh installs it)"
"$msl" run "$dir/export_models.msl" "$tmp" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "export_models.msl failed"; }
cat "$tmp/out"
grep -qx "lenet exported: True" "$tmp/out" || fail "LeNet was not exported"
grep -qx "resnet18 exported: True" "$tmp/out" || fail "ResNet-18 was not exported"
grep -qx "attention exported: True" "$tmp/out" || fail "the attention block was not exported"
grep -qx "MINDIR: True" "$tmp/out" || fail "MINDIR is not a clear error"
grep -qx "export to ONNX: sort: has no ONNX form in MSL's exporter (opset 13)" "$tmp/out" \
  || fail "an unsupported primitive is not named"
grep -qx "no partial file: True" "$tmp/out" || fail "a failed export left a file"
for m in lenet resnet18 attention; do
  /usr/bin/python3 "$dir/check_onnx.py" "$tmp/$m.onnx" "$tmp/${m}_in.npy" "$tmp/${m}_out.npy" || fail "$m"
done
echo "ok"
