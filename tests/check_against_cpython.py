#!/usr/bin/env python3
"""Checks the script tests' expectations against CPython (a dev tool, not run in CI).

MSL follows Python's semantics, so for every test in tests/lang/ that is also a
valid Python program, what CPython 3.11 prints is the reference:

    python3 tests/check_against_cpython.py            # all tests
    python3 tests/check_against_cpython.py tests/lang/fstrings/*.msl
    python3 tests/check_against_cpython.py -v ...     # also list the skipped ones

Each test's folder is copied to a temporary directory with every `.msl` file
renamed to `.py` (so imports of helper modules and packages work), then run
with `python3 CASE.py ARGS` there. Checked: the `# expect:` lines against
stdout, `# expect stderr:` lines, the exit status, the last stderr line of a
`# expect runtime error:` test, and `# expect traceback line N` against the
line numbers of Python's traceback frames (in order).

Skipped: tests marked `# msl-only` anywhere (64-bit overflow, MSL wording) and
syntax-error tests (`# expect error line`), whose messages are MSL's own.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LANG = os.path.join(HERE, "lang")


def annotations(path):
    spec = {"out": [], "err": [], "runtime": None, "tb": [], "exit": None, "args": [], "env": {},
            "skip": None}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if "# msl-only" in line:
            spec["skip"] = "msl-only"
        if "# expect error line " in line:
            spec["skip"] = "syntax error test"
        m = re.search(r"# expect runtime error: (.*)$", line)
        if m:
            spec["runtime"] = (n, m.group(1).strip())
            continue
        m = re.search(r"# expect traceback line (\d+)", line)
        if m:
            spec["tb"].append((n, int(m.group(1))))
            continue
        m = re.search(r"# expect exit: (-?\d+)", line)
        if m:
            spec["exit"] = int(m.group(1))
            continue
        m = re.search(r"# expect stderr:(.*)$", line)
        if m:
            text = m.group(1)
            spec["err"].append((n, text[1:] if text.startswith(" ") else text))
            continue
        m = re.search(r"# expect:(.*)$", line)
        if m:
            text = m.group(1)
            spec["out"].append((n, text[1:] if text.startswith(" ") else text))
            continue
        m = re.search(r"# args:(.*)$", line)
        if m:
            spec["args"] += m.group(1).split()
            continue
        m = re.search(r"# env: (\S+?)=(.*)$", line)
        if m:
            spec["env"][m.group(1)] = m.group(2).strip()
    return spec


def copy_as_python(src_dir, dst_dir):
    for root, _dirs, files in os.walk(src_dir):
        rel = os.path.relpath(root, src_dir)
        os.makedirs(os.path.join(dst_dir, rel), exist_ok=True)
        for name in files:
            if name.endswith(".msl"):
                shutil.copy(os.path.join(root, name), os.path.join(dst_dir, rel, name[:-4] + ".py"))
            elif not name.startswith("_tmp"):
                shutil.copy(os.path.join(root, name), os.path.join(dst_dir, rel, name))


def compare_lines(what, expected, actual):
    problems = []
    for i in range(max(len(expected), len(actual))):
        e = expected[i] if i < len(expected) else None
        a = actual[i] if i < len(actual) else None
        if e is None or a is None or e[1] != a:
            where = f"test line {e[0]}" if e else "extra"
            problems.append(f"{what} line {i + 1} ({where}): expected {e[1] if e else None!r}, "
                            f"CPython printed {a!r}")
            if len(problems) >= 5:
                break
    return problems


def check(path):
    spec = annotations(path)
    if spec["skip"]:
        return "skip", [spec["skip"]]
    case = os.path.splitext(os.path.basename(path))[0]
    with tempfile.TemporaryDirectory(prefix="msl_cpython_") as tmp:
        copy_as_python(os.path.dirname(path), tmp)
        env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
        env.update(spec["env"])
        try:
            p = subprocess.run([sys.executable, case + ".py"] + spec["args"], cwd=tmp, env=env,
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            return "fail", ["timed out under CPython"]
    out = p.stdout.decode("utf-8", "replace").splitlines()
    err = p.stderr.decode("utf-8", "replace").splitlines()
    problems = compare_lines("stdout", spec["out"], out)
    want_exit = spec["exit"] if spec["exit"] is not None else (1 if spec["runtime"] else 0)
    if p.returncode != want_exit:
        problems.append(f"exit status: expected {want_exit}, CPython gave {p.returncode}")
    if spec["err"]:
        problems += compare_lines("stderr", spec["err"], err)
    if spec["runtime"]:
        last = next((l.strip() for l in reversed(err) if l.strip()), "")
        if last != spec["runtime"][1]:
            problems.append(f"runtime error: expected {spec['runtime'][1]!r}, CPython ended with {last!r}")
        frames = [int(m.group(1)) for l in err for m in [re.match(r'\s*File ".*", line (\d+), in ', l)] if m]
        k = 0
        for n, want in spec["tb"]:
            while k < len(frames) and frames[k] != want:
                k += 1
            if k == len(frames):
                problems.append(f"traceback (test line {n}): no frame at line {want}; CPython's: {frames}")
                break
            k += 1
    elif not spec["err"] and spec["exit"] is None and err:
        problems.append("CPython wrote to stderr: " + " | ".join(err[-3:]))
    return ("fail" if problems else "ok"), problems


def main(argv):
    verbose = "-v" in argv
    paths = [a for a in argv if a != "-v"]
    if not paths:
        paths = sorted(os.path.join(LANG, d, f) for d in os.listdir(LANG)
                       if os.path.isdir(os.path.join(LANG, d))
                       for f in os.listdir(os.path.join(LANG, d)) if f.endswith(".msl"))
    counts = {"ok": 0, "skip": 0, "fail": 0}
    for path in paths:
        status, problems = check(os.path.abspath(path))
        counts[status] += 1
        name = os.path.relpath(os.path.abspath(path), LANG)
        if status == "fail":
            print(f"FAIL {name}")
            for p in problems:
                print(f"    {p}")
        elif status == "skip" and verbose:
            print(f"skip {name} ({problems[0]})")
    print(f"{counts['ok']} agree with CPython, {counts['fail']} disagree, {counts['skip']} skipped")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
