#!/usr/bin/env bash
# Ensures Open MPI (`mpirun`, `mpicc`, the headers) and libclang are available: the
# `mpi` feature builds the `mpi` crate (rsmpi), which generates its bindings from the MPI
# headers with bindgen (libclang) and asks `mpicc` how to link; `make test` runs the
# distributed checks under `mpirun -np 2`. Installs them with apt-get when missing, like
# PoCL (scripts/setup-opencl.sh). Idempotent and quick when they are present.
set -euo pipefail

missing=()
command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
command -v mpicc >/dev/null 2>&1 || missing+=(libopenmpi-dev)
# Open MPI's launcher looks for an rsh/ssh agent at start-up, even for local ranks.
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
# bindgen loads libclang itself (libclang.so or libclang-N.so, not PoCL's libclang-cpp)
# and needs clang's own headers (libclang-common-N-dev, which libclang-dev brings).
if ! compgen -G "/usr/lib/llvm-*/lib/libclang.so*" >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/include/stddef.h" >/dev/null; then
    missing+=(libclang-dev)
fi
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
bash "$(dirname "$0")/apt-install.sh" "Open MPI / libclang" --no-recommends "${missing[@]}"
echo "lazycl: installed $(mpirun --version 2>&1 | head -1)" >&2
