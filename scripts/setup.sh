#!/usr/bin/env bash
# Everything `make run` and `make test` need beyond a Rust toolchain:
# rustfmt and clippy (when rustup can add them), an OpenCL platform, and Graphviz (the
# tests render `explain_dot`'s pictures with `dot`).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    if command -v rustup >/dev/null 2>&1; then
        rustup component add rustfmt clippy
    else
        echo "lazycl: cargo fmt / cargo clippy are missing and rustup is not available" >&2
        exit 1
    fi
fi

bash scripts/setup-opencl.sh
bash scripts/setup-graphviz.sh
