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
if ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 && ! ls /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1; then
    missing+=(libclang-dev)
fi
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
bash "$(dirname "$0")/apt-install.sh" "Open MPI / libclang" --no-recommends "${missing[@]}" openssh-client
echo "lazycl: installed $(mpirun --version 2>&1 | head -1)" >&2
