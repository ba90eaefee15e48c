#!/usr/bin/env bash
# The `msl` command line: exit statuses (0 ok, 1 MSL error, 2 usage), the
# `--emit` stages (tokens, ast, anf-opt, grad, llvm, subgraphs), --print-after, --mode, --layout,
# --save-graphs, --dump, argv passing, and errors for missing or unreadable
# files.
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
# The kernels' thread count defaults to the CPUs the process may run on.
threads='import msl; print("threads", msl._core.get_num_threads())'
check threads-affinity 0 "threads 1" -- env -u OMP_NUM_THREADS taskset -c 0 "$msl" -c "$threads"
check threads-option 0 "threads 3" -- taskset -c 0 "$msl" --threads 3 -c "$threads"
check bad-mode 2 "--mode must be 'graph' or 'pynative'" -- "$msl" --mode fast -c 'pass'
check run-without-file 2 "run needs a FILE" -- "$msl" run
check bad-seed 2 "expects an integer" -- "$msl" --seed x -c 'pass'
check emit-tokens 0 "1:1 NAME 'x'" -- "$msl" --emit=tokens "$tmp/ok.msl"
check emit-ast 0 "Assign 1:1" -- "$msl" --emit ast "$tmp/ok.msl"
check emit-unknown 2 "unknown --emit stage" -- "$msl" --emit=bytecode "$tmp/ok.msl"
printf 'def f(x, y):\n    return x * y\n' > "$tmp/g.msl"
check emit-anf-opt 0 "= mul(%para1_x, %para2_y)" -- "$msl" --emit=anf-opt "$tmp/g.msl"
check emit-grad 0 '$bprop_mul(%para1_x, %para2_y, %0, %1)' -- "$msl" --emit=grad "$tmp/g.msl"
check print-after 0 "# IR after cse" -- "$msl" --emit=anf-opt --print-after=cse "$tmp/g.msl"
check print-after-unknown 2 "unknown pass 'frob' for --print-after" -- "$msl" --print-after=frob -c 'pass'
check bad-layout 2 "--layout must be 'auto' or 'nchw'" -- "$msl" --layout nhwc -c 'pass'
# --layout: graph mode's convolutions and batch norms take oneDNN's blocked
# layout unless --layout nchw; the choice is part of the graph cache's key
# (an NCHW run after a blocked one compiles its own graph, and the blocked
# one is still found afterwards).
cat > "$tmp/conv.msl" <<'EOF2'
import msl
from msl import nn, ops, Tensor, context
context.set_context(mode=context.GRAPH_MODE)
msl.set_seed(1)
net = nn.SequentialCell([nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.ReLU(), nn.Flatten(), nn.Dense(16 * 6 * 6, 2)])
step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")),
                           nn.SGD(net.trainable_params(), 0.01))
step.set_train()
x = ops.randn(2, 3, 6, 6)
print(round(step(x, Tensor([0, 1], msl.int32)).item(), 3), round(step(x, Tensor([0, 1], msl.int32)).item(), 3))
EOF2
layout_lines() { "$msl" "$@" --print-after=layout_choice run "$tmp/conv.msl" 2>&1 | grep -c 'layout="nChw' || true; }
check layout-auto 0 "" -- test "$(layout_lines)" -gt 0
check layout-nchw 0 "" -- test "$(layout_lines --layout nchw)" = 0
# "LOSS1 LOSS2 | graphs: C compiled, D from disk cache" of a run.
graphs_line() {
  local out
  out="$(XDG_CACHE_HOME="$tmp/lcache" "$msl" --profile "$@" run "$tmp/conv.msl" 2>&1)"
  echo "$(echo "$out" | grep -E '^[0-9.]+ [0-9.]+$') | $(echo "$out" | grep '^graphs:')"
}
auto_first="$(graphs_line)"
losses="${auto_first%% |*}"
check layout-first-run 0 "| graphs: 1 compiled, 0 from disk cache" -- echo "$auto_first"
check layout-losses 0 "" -- test -n "$losses"
check layout-cache-miss 0 "" -- test "$(graphs_line --layout nchw)" = "$losses | graphs: 1 compiled, 0 from disk cache"
check layout-cache-hit 0 "" -- test "$(graphs_line)" = "$losses | graphs: 0 compiled, 1 from disk cache"
check mode-pynative 0 "1" -- "$msl" --mode pynative -c 'import msl.context as c; print(c.get_context("mode"))'
printf 'import msl\nfrom msl import Tensor\nprint(msl.grad(lambda x: x * x)(Tensor(3.0)))\n' > "$tmp/sg.msl"
check save-graphs 0 "value= 6" -- "$msl" --save-graphs "$tmp/graphs" run "$tmp/sg.msl"
check save-graphs-files 0 "grad_opt.ir" -- ls "$tmp/graphs"

# --dump DIR: each kernel's output as a .npy file, in order, with an index;
# the same program gives the same files in both modes. The values are read
# back with od here, independently of the writer: relu([1, -2, 3]) * 2.
printf 'import msl\nfrom msl import ops\nx = msl.Tensor([1.0, -2.0, 3.0], msl.float32)\nprint(ops.relu(x) * 2.0)\n' > "$tmp/dump.msl"
check dump-run 0 "[2. 0. 6.]" -- "$msl" --dump "$tmp/dump_g" run "$tmp/dump.msl"
check dump-index 0 "000001_mul.npy float32 (3,)" -- cat "$tmp/dump_g/index.txt"
check dump-npy-header 0 "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" -- head -c 128 "$tmp/dump_g/000001_mul.npy"
check dump-npy-values 0 "2 0 6" -- sh -c "tail -c 12 '$tmp/dump_g/000001_mul.npy' | od -An -t f4 | tr -s ' ' | sed 's/^ //'"
"$msl" --mode pynative --dump "$tmp/dump_p" run "$tmp/dump.msl" >/dev/null 2>&1
check dump-modes-agree 0 "" -- diff -r "$tmp/dump_g" "$tmp/dump_p"
# In a compiled graph too: graph mode runs unfused under --dump, so both
# modes write the same op sequence (each op's output, not one fused loop's).
printf 'import msl\nfrom msl import ops\n@msl.jit\ndef f(x):\n    return ops.exp(x) * 2.0 + 1.0\nprint(f(msl.Tensor([0.0, 1.0], msl.float32)))\n' > "$tmp/dump_jit.msl"
check dump-jit-ops 0 "000001_mul.npy float32 (2,)" -- sh -c "'$msl' --dump '$tmp/dj_g' run '$tmp/dump_jit.msl' >/dev/null && cat '$tmp/dj_g/index.txt'"
"$msl" --mode pynative --dump "$tmp/dj_p" run "$tmp/dump_jit.msl" >/dev/null 2>&1
check dump-jit-modes-agree 0 "" -- diff -r "$tmp/dj_g" "$tmp/dj_p"
# msl compare: two dumps matched op by op. Graph mode against PyNative of
# the same jit function: no divergence (exit 0). A planted difference (the
# second run scales one intermediate by 1.001) is named: the first op that
# differs is the one using it, with its source line, and the exit status is 1.
check compare-modes 0 "no divergence" -- "$msl" compare "$tmp/dj_g" "$tmp/dj_p"
check dump-site 0 "000001_mul.npy float32 (2,) @ $tmp/dump_jit.msl:5" -- cat "$tmp/dj_g/index.txt"
printf 'import sys\nimport msl\nfrom msl import ops\n@msl.jit\ndef f(x):\n    h = ops.exp(x)\n    if len(sys.argv) > 1:\n        h = h * 1.001\n    return ops.sqrt(h) + 1.0\nprint(f(msl.Tensor([0.0, 1.0], msl.float32)).shape)\n' > "$tmp/planted.msl"
XDG_CACHE_HOME=off HOME=off "$msl" --dump "$tmp/pl_a" run "$tmp/planted.msl" >/dev/null 2>&1
XDG_CACHE_HOME=off HOME=off "$msl" --dump "$tmp/pl_b" run "$tmp/planted.msl" perturb >/dev/null 2>&1
check compare-planted 1 "first divergence: 000001_sqrt.npy (sqrt at $tmp/planted.msl:9)" -- "$msl" compare "$tmp/pl_a" "$tmp/pl_b"
check compare-planted-extra 1 "matched 3 of 3 ops in A (4 in B); 0 only in A, 1 only in B" -- "$msl" compare "$tmp/pl_a" "$tmp/pl_b"
check compare-csv 1 "000001_sqrt.npy,000002_sqrt.npy,sqrt," -- "$msl" compare --format csv "$tmp/pl_a" "$tmp/pl_b"
check compare-json 1 '"first_divergence": "000001_sqrt.npy"' -- "$msl" compare --format json "$tmp/pl_a" "$tmp/pl_b"
check compare-bad-dir 2 "cannot read the dump index" -- "$msl" compare "$tmp/pl_a" "$tmp/nowhere"
check compare-usage 2 "compare needs two dump folders" -- "$msl" compare "$tmp/pl_a"
# --profile=trace DIR: the timeline (Chrome trace JSON) and the per-op table.
check profile-trace 0 '"name": "fused_elementwise_3ops", "cat": "kernel", "ph": "X"' -- sh -c "'$msl' --profile=trace '$tmp/tr' run '$tmp/dump_jit.msl' >/dev/null && cat '$tmp/tr/trace.json'"
check profile-trace-graph 0 '"cat": "graph"' -- cat "$tmp/tr/trace.json"
check profile-trace-table 0 "fused_elementwise_3ops" -- cat "$tmp/tr/op_statistic.txt"
check profile-trace-usage 2 "--profile=trace needs a folder" -- "$msl" --profile=trace
# --emit=llvm: the program runs and each fused loop's LLVM IR is printed,
# vectorized for the host (a <N x float> type in the loop).
printf 'import msl\nfrom msl import ops\n@msl.jit\ndef f(x, a):\n    return ops.sigmoid(x * a + 1.0) - x\nprint(f(ops.ones((40,)), ops.ones((40,))).shape)\n' > "$tmp/llvm.msl"
check emit-llvm-program 0 "; %5 = sigmoid %4" -- "$msl" --emit=llvm run "$tmp/llvm.msl"
check emit-llvm-ir 0 "define void @msl_fused(" -- "$msl" --emit=llvm run "$tmp/llvm.msl"
check emit-llvm-vector 0 "x float>" -- "$msl" --emit=llvm run "$tmp/llvm.msl"
check emit-llvm-runs 0 "(40,)" -- "$msl" --emit=llvm run "$tmp/llvm.msl"

# --emit=subgraphs: the program runs and each compiled graph's identical
# sub-graphs are printed as JSON: two instances of one Cell class with the
# same shapes are a group of two, and their layers a group inside it.
cat > "$tmp/blocks.msl" <<'EOF'
import numpy as np
import msl
import msl.nn as nn
class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3)
        self.relu = nn.ReLU()
    def construct(self, x):
        return self.relu(self.conv(x)) + x
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = Block()
        self.b = Block()
    def construct(self, x):
        return self.b(self.a(x))
print(Net()(msl.Tensor(np.ones((1, 4, 6, 6), np.float32))).shape)
EOF
check emit-subgraphs 0 '{"cell": "Block", "nodes": 3, "count": 2' -- "$msl" --emit=subgraphs run "$tmp/blocks.msl"
check emit-subgraphs-members 0 '{"scope": "Default/b-Block", "node_ids"' -- "$msl" --emit=subgraphs run "$tmp/blocks.msl"
check emit-subgraphs-nested 0 '{"cell": "Conv2d", "nodes": 1, "count": 2, "signature": "' -- "$msl" --emit=subgraphs run "$tmp/blocks.msl"
check emit-subgraphs-runs 0 "(1, 4, 6, 6)" -- "$msl" --emit=subgraphs run "$tmp/blocks.msl"
# --save-graphs writes them too, with the graph drawn folded: one box per
# Block instance, labelled with the group's size.
check save-graphs-subgraphs 0 'Block x2 (3 nodes)' -- sh -c "'$msl' --save-graphs '$tmp/sg' run '$tmp/blocks.msl' >/dev/null && cat '$tmp'/sg/*_subgraphs.dot"
# Debug level (--log-level debug or MindSpore's GLOG_v=0): each compilation,
# the argument whose signature caused a recompilation, each graph's memory
# plan; nothing at the default level. --print-after names graph-mode passes too.
printf 'import msl\nfrom msl import ops\n@msl.jit\ndef f(x):\n    return ops.exp(x) * 2.0 + 1.0\nf(ops.ones((8,)))\nf(ops.ones((8,)))\nf(ops.ones((4,)))\n' > "$tmp/recompile.msl"
check log-compile 0 "[DEBUG] graph: compiling @f (GRAPH_MODE)" -- "$msl" --log-level debug run "$tmp/recompile.msl"
check log-recompile 0 "recompiling @f for a new input signature: argument 0 was Tensor[Float32](8), now Tensor[Float32](4)" -- "$msl" --log-level debug run "$tmp/recompile.msl"
check log-memory-plan 0 "memory plan: peak 32 B of intermediates (32 B without reuse), 1 buffer" -- "$msl" --log-level debug run "$tmp/recompile.msl"
check log-glog-v 0 "recompiling @f" -- env GLOG_v=0 "$msl" run "$tmp/recompile.msl"
check log-default-quiet 0 "debug lines: 0" -- sh -c "echo debug lines: \$('$msl' run '$tmp/recompile.msl' 2>&1 | grep -c DEBUG)"
check log-level-bad 2 "--log-level must be debug, info, warning or error" -- "$msl" --log-level loud -c 'pass'
check print-after-fusion 0 '= $fused_elementwise_3ops(%para1_x0) : (Tensor[Float32](8)) -> Tensor[Float32](8)' -- "$msl" --print-after=fuse_elementwise run "$tmp/recompile.msl"
check print-after-expand 0 "# IR after expand" -- "$msl" --print-after=expand run "$tmp/recompile.msl"
printf 'x' > "$tmp/afile"
check dump-bad-dir 2 "--dump: cannot create the folder" -- "$msl" --dump "$tmp/afile/sub" -c 'pass'
check help 0 "usage: msl" -- "$msl" --help
# Piped REPL input: every module-level expression statement shows its value.
check repl-piped-values 0 $'0\n1\n2\n5' -- bash -c "printf 'for i in range(3): i\n\nx = 5\nx\nNone\n' | '$msl'"

# Ctrl-C during `msl run` raises KeyboardInterrupt where the loop was; exit 130.
printf 'def spin():\n    while True:\n        pass\nspin()\n' > "$tmp/spin.msl"
total=$((total+1))
"$msl" run "$tmp/spin.msl" 2>"$tmp/spin.err" &
pid=$!
# Keep interrupting until it stops (the handler may not be installed yet on a
# slow machine); give up with SIGKILL after 10 s so the test cannot hang.
for _ in $(seq 20); do
  sleep 0.5
  kill -INT "$pid" 2>/dev/null || break
  kill -0 "$pid" 2>/dev/null || break
done
kill -9 "$pid" 2>/dev/null
wait "$pid"; status=$?
if [ "$status" = 130 ] && grep -q "spin.msl:2:5 in spin" "$tmp/spin.err" && [ "$(tail -1 "$tmp/spin.err")" = "KeyboardInterrupt" ]; then
  echo "ok   sigint"
else
  echo "FAIL sigint: status $status"; sed 's/^/  | /' "$tmp/spin.err"; fails=$((fails+1))
fi

echo "$((total - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
