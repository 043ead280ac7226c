#!/usr/bin/env bash
# The distributed part of `make test` (feature `mpi`): installs Open MPI when missing
# (scripts/setup-mpi.sh), lints and documents the feature's code, and runs the checks
# under `mpirun -np 2 --oversubscribe` on this machine's device: sums, extrema, column
# sums, Xᵀr, a halo stencil and a gather against one process (examples/dist_check.rs),
# the distributed logistic regression against the one-process fit, and a setup where one
# rank has no device, which must be an error on every rank within the timeout.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-mpi.sh
cargo clippy --workspace --all-targets --features mpi -- -D warnings
RUSTDOCFLAGS="-D missing-docs -D rustdoc::broken-intra-doc-links" cargo doc --workspace --no-deps --features mpi
# The test profile, like the rest of `make test` (scripts/run-examples.sh): the
# dependencies are built already.
cargo build --profile test --features mpi --example dist_check --example dist_logistic_regression

if [ "$(id -u)" -eq 0 ]; then
    # Open MPI refuses to start as root unless told that it is meant.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
bin="${CARGO_TARGET_DIR:-target}/debug/examples"
echo "== mpirun -np 2 dist_check =="
timeout 300 mpirun -np 2 --oversubscribe "$bin/dist_check"
echo "== mpirun -np 2 dist_logistic_regression (small) =="
LAZYCL_EXAMPLE_SMALL=1 timeout 300 mpirun -np 2 --oversubscribe -x LAZYCL_EXAMPLE_SMALL \
    "$bin/dist_logistic_regression"
echo "== mpirun: rank 1 without a device =="
timeout 120 mpirun --oversubscribe -np 1 "$bin/dist_check" --expect-init-error \
    : -np 1 -x LAZYCL_DEVICE=no-such-device "$bin/dist_check" --expect-init-error
echo "distributed checks: all passed"
