#!/usr/bin/env bash
# The parser's memory and time grow linearly with the source, by a bounded
# factor (docs/reliability.md, "Limits"). Generated scripts (`x = 1` lines;
# function and class definitions; one list literal of 1M small ints; the
# definitions inside one `if True:` block, a single top-level statement) print
# their own peak RSS (VmHWM) as their last statement, after the whole file
# was parsed, compiled and run. Their peak over an empty script's, per source
# byte, must stay under LIMIT (measured 37-45; docs/performance.md, "Parser
# memory and time"); the first parser took about 900 bytes per byte of
# `x = 1` lines, 330 per byte of definitions, 1200 per byte of the list and
# 340 per byte of the block. A file 10 times larger may take at most 20 times
# the CPU time (after an empty run's; CPU time, as wall time varies with the
# machine's load). Linear work measures 10-12 times when the machine is quiet;
# CPU time still swells by a fifth when other tests share the caches (a CI run
# measured 12.2), while a parser quadratic in anything would take ~100 times
# and one of n^1.5 ~32 times.
set -u
msl="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
LIMIT=50  # bytes of peak RSS per source byte
fails=0

peak_printer='
for _line in open("/proc/self/status").read().split("\n"):
    if _line.startswith("VmHWM:"):
        print("peak_kb", int(_line.split()[1]))
_stat = open("/proc/self/stat").read().split(")")[-1].split()
print("cpu_ticks", int(_stat[11]) + int(_stat[12]))
'

# make_script SHAPE BYTES FILE
make_script() {
  local shape="$1" bytes="$2" file="$3" unit
  case "$shape" in
    assign) unit='x = 1
' ;;
    list) unit='7,' ;;
    defs|block) unit='def f(a, b=2, *args, **kw):
    if a > b:
        return [a * 2 + b, {"k": a}, (1, 2.5)]
    for j in range(a):
        b += j
    return b

class C(object):
    def m(self, x):
        return self.y(1, z=2)[0]

' ;;
  esac
  local n=$(( bytes / ${#unit} + 1 ))
  # Doubling, so that generating 2 MB stays cheap in bash.
  local block="$unit" out=""
  while (( n > 0 )); do
    if (( n & 1 )); then out+="$block"; fi
    block+="$block"
    n=$(( n >> 1 ))
  done
  if [[ "$shape" == list ]]; then out="x = [$out]
"; fi
  if [[ "$shape" == block ]]; then
    { echo "if True:"; printf '%s' "$out" | sed 's/^/    /'; } > "$file"
  else
    printf '%s' "$out" > "$file"
  fi
  printf '%s' "$peak_printer" >> "$file"
}

ms_per_tick=$(( 1000 / $(getconf CLK_TCK) ))

# run FILE → "PEAK_KB CPU_MS"
run() {
  local out
  out=$("$msl" run "$1" 2> "$tmp/err")
  local rc=$?
  if (( rc != 0 )); then
    echo "FAIL: msl run $1 exited with $rc" >&2
    head -5 "$tmp/err" >&2
    echo "0 0"
    return
  fi
  local ticks
  ticks=$(echo "$out" | awk '/^cpu_ticks/ {print $2}')
  echo "$(echo "$out" | awk '/^peak_kb/ {print $2}') $(( ticks * ms_per_tick ))"
}

# run_best FILE → "PEAK_KB CPU_MS": the smaller CPU time of two runs, so
# that a run slowed by the machine's other work (other tests sharing the
# cores and caches) does not decide the time ratio below.
run_best() {
  local kb1 ms1 kb2 ms2
  read -r kb1 ms1 <<< "$(run "$1")"
  read -r kb2 ms2 <<< "$(run "$1")"
  echo "$kb1 $(( ms1 < ms2 ? ms1 : ms2 ))"
}

printf '%s' "$peak_printer" > "$tmp/empty.msl"
read -r base_kb base_ms <<< "$(run_best "$tmp/empty.msl")"
echo "empty script: ${base_kb} KB, ${base_ms} ms CPU"

for shape in assign defs list block; do
  make_script "$shape" 200000 "$tmp/small.msl"
  make_script "$shape" 2000000 "$tmp/big.msl"
  size=$(stat -c %s "$tmp/big.msl")
  read -r small_kb small_ms <<< "$(run_best "$tmp/small.msl")"
  read -r big_kb big_ms <<< "$(run_best "$tmp/big.msl")"
  per_byte=$(( (big_kb - base_kb) * 1024 / size ))
  echo "$shape: $size bytes: peak ${big_kb} KB (${per_byte} bytes per source byte), ${big_ms} ms CPU; 1/10 of it: ${small_ms} ms"
  if (( big_kb == 0 || per_byte > LIMIT )); then
    echo "FAIL $shape: ${per_byte} bytes of peak memory per source byte (limit ${LIMIT})"
    fails=$((fails+1))
  fi
  small=$(( small_ms - base_ms )); big=$(( big_ms - base_ms ))
  (( small < 200 )) && small=200  # below that, start-up noise dominates
  if (( big > 20 * small )); then
    echo "FAIL $shape: 10 times the source took $(( big / small )) times as long (${small} ms → ${big} ms)"
    fails=$((fails+1))
  fi
done

if (( fails > 0 )); then
  echo "$fails failure(s)"
  exit 1
fi
echo "all passed"
