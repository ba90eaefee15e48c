#!/usr/bin/env bash
# Installs what the benchmarks compare against (never needed to build or
# test): Debian's PyTorch (importable from /usr/bin/python3 only), NumPy, and
# OpenBLAS, which Debian's PyTorch uses for matmul through libblas.so.3 (with
# only the reference BLAS installed, PyTorch's matmul runs ~35x slower and
# the comparison would be meaningless).
set -euo pipefail

exec "$(dirname "$0")/install_deps.sh" python3-torch python3-numpy libopenblas0-pthread
