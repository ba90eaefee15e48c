# Runs a Python-compatible test script statement by statement under CPython
# + NumPy and writes it back with "# expect:" lines after each top-level
# statement that printed.
import ast, io, sys, contextlib
src_path, out_path, header = sys.argv[1], sys.argv[2], sys.argv[3]
src = open(src_path).read()
tree = ast.parse(src)
lines = src.splitlines()
g = {"__name__": "__main__"}
out = [l for l in open(header).read().splitlines()]
prev_end = 0
for node in tree.body:
    start = node.lineno - 1
    # keep comments/blank lines before the statement
    for l in lines[prev_end:start]:
        out.append(l)
    seg = lines[start:node.end_lineno]
    out.extend(seg)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(ast.Module([node], []), src_path, "exec"), g)
    for l in buf.getvalue().splitlines():
        out.append("# expect: " + l)
    prev_end = node.end_lineno
open(out_path, "w").write("\n".join(out) + "\n")
