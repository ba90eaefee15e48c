#!/usr/bin/env bash
# `msl summary DIR`: the scalars of the event files under DIR as a table,
# sorted by tag then step, and one PNG line plot per tag (into DIR, or
# --out); a corrupt event file is exit status 1 naming the CRC error,
# usage errors exit 2. With PROTO (summary.proto) given, every record of
# the file is also cut out by offset and length here and parsed by
# protobuf's own parser (protoc --decode), independently of MSL's reader.
set -u
msl="$1"
proto="${2:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $1"; fails=$((fails+1)); }

cat > "$tmp/write.msl" <<'MSL'
import sys
from msl.train.summary import SummaryRecord
rec = SummaryRecord(sys.argv[1] + "/run")
for step in [1, 2, 3]:
    rec.add_value("scalar", "loss", 1.0 / step)
    rec.add_value("scalar", "train/acc", 0.25 * step)
    rec.record(step)
rec.close()
MSL
"$msl" run "$tmp/write.msl" "$tmp" || fail "writing the events"

out="$("$msl" summary "$tmp" 2>"$tmp/err")"; status=$?
expected="tag           step  value
loss             1  1
loss             2  0.5
loss             3  0.333333
train/acc        1  0.25
train/acc        2  0.5
train/acc        3  0.75"
[ "$status" = 0 ] || fail "summary exit status $status: $(cat "$tmp/err")"
[ "$out" = "$expected" ] || { fail "summary table"; echo "$out" | sed 's/^/  | /'; }
for f in loss.png train_acc.png; do
  [ "$(head -c 4 "$tmp/$f" | tail -c 3)" = "PNG" ] || fail "plot $f is not a PNG"
done
grep -q "wrote $tmp/loss.png" "$tmp/err" || fail "summary does not say where it wrote"

if [ -n "$proto" ] && command -v protoc >/dev/null; then
  f="$(ls "$tmp"/run/*tfevents*)"
  size=$(stat -c %s "$f"); off=0; decoded=""
  while [ "$off" -lt "$size" ]; do
    len=$(od -An -t u8 -j "$off" -N 8 "$f" | tr -d ' ')
    decoded+="$(dd if="$f" bs=1 skip=$((off + 12)) count="$len" status=none |
                protoc --decode=msl.summary.proto.Event -I "$(dirname "$proto")" "$proto")"$'\n'
    off=$((off + 16 + len))
  done
  [ "$off" = "$size" ] || fail "records do not end at the file's end ($off of $size)"
  [[ "$decoded" == *'file_version: "brain.Event:2"'* ]] || fail "protoc: no file_version"
  [[ "$decoded" == *'tag: "train/acc"'*'simple_value: 0.75'* ]] || fail "protoc: no train/acc 0.75"
  [ "$(grep -c '^step: ' <<<"$decoded")" = 3 ] || { fail "protoc: not 3 steps"; echo "$decoded" | sed 's/^/  | /'; }
fi

mkdir "$tmp/plots"
"$msl" summary "$tmp" --out "$tmp/plots" >/dev/null 2>&1 || fail "--out exit status"
[ -s "$tmp/plots/loss.png" ] || fail "--out: no loss.png"

# One flipped byte in the last record: exit 1, the CRC error on stderr.
f="$(ls "$tmp"/run/*tfevents*)"
size=$(stat -c %s "$f")
printf '\xff' | dd of="$f" bs=1 seek=$((size - 6)) conv=notrunc status=none
err="$("$msl" summary "$tmp" 2>&1 >/dev/null)"; status=$?
[ "$status" = 1 ] || fail "corrupt file: exit status $status"
[[ "$err" == *"CRC-32C does not match"* ]] || fail "corrupt file: '$err'"

"$msl" summary >/dev/null 2>&1; [ $? = 2 ] || fail "missing DIR is not a usage error"
"$msl" summary "$tmp" --frob >/dev/null 2>&1; [ $? = 2 ] || fail "unknown option is not a usage error"
mkdir "$tmp/empty"
err="$("$msl" summary "$tmp/empty" 2>&1)"; status=$?
[ "$status" = 1 ] && [[ "$err" == *"no event files"* ]] || fail "empty folder: $status '$err'"
"$msl" --help | grep -q "msl summary DIR" || fail "--help lacks summary"

if [ "$fails" != 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all summary cli checks passed"
