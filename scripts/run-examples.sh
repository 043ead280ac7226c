#!/usr/bin/env bash
# Builds every example and runs each at a small size (LAZYCL_EXAMPLE_SMALL=1), as
# `make test` does. Fails on the first example that fails.
#
# In the test profile (`cargo build --profile test`, into target/debug like the default):
# `cargo test` built the examples and their dependencies so already, and a build in the
# default profile would compile every dependency once more.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --profile test --examples
export LAZYCL_EXAMPLE_SMALL=1
# No GEMM tile searches here: each compiles several large kernels, which PoCL takes
# seconds apiece for; tests/it/matmul.rs covers the search.
export LAZYCL_TUNE=off
for src in examples/*.rs examples/*/main.rs; do
    case "$src" in
        */main.rs) name="$(basename "$(dirname "$src")")" ;;
        *) name="$(basename "$src" .rs)" ;;
    esac
    # The distributed examples need the `mpi` feature and `mpirun` (scripts/check-dist.sh).
    case "$name" in dist_*) continue ;; esac
    echo "== example $name =="
    cargo run -q --profile test --example "$name" >/tmp/lazycl-example-"$name".log 2>&1 || {
        cat /tmp/lazycl-example-"$name".log
        echo "example $name failed" >&2
        exit 1
    }
    tail -n 3 /tmp/lazycl-example-"$name".log
done
# The logistic regression's other formulation (the default on this CPU device is stored).
echo "== example logistic_regression --residual fused =="
cargo run -q --profile test --example logistic_regression -- --residual fused --shape 3000x20 --dtype f64 --iters 20 \
    >/tmp/lazycl-example-logreg-fused.log 2>&1 || {
    cat /tmp/lazycl-example-logreg-fused.log
    echo "example logistic_regression --residual fused failed" >&2
    exit 1
}
tail -n 3 /tmp/lazycl-example-logreg-fused.log
# k-means with its centroids updated by one-hot reductions (the GPU default; this CPU
# device takes scatter_add + bincount), checked against the host.
echo "== example kmeans --update onehot =="
cargo run -q --profile test --example kmeans -- --update onehot >/tmp/lazycl-example-kmeans-onehot.log 2>&1 || {
    cat /tmp/lazycl-example-kmeans-onehot.log
    echo "example kmeans --update onehot failed" >&2
    exit 1
}
tail -n 3 /tmp/lazycl-example-kmeans-onehot.log
# The report's chart: its quickest mode with --json and --svg, the SVG parsed and checked
# against the JSON rows (scripts/check-report-svg.py).
echo "== example report --rows --json --svg =="
svg_dir="$(mktemp -d)"
trap 'rm -rf "$svg_dir"' EXIT
cargo run -q --profile test --example report -- --rows --quick --json --svg "$svg_dir/rows.svg" \
    >"$svg_dir/rows.jsonl" 2>/tmp/lazycl-example-report-svg.log || {
    cat /tmp/lazycl-example-report-svg.log
    echo "example report --svg failed" >&2
    exit 1
}
python3 scripts/check-report-svg.py "$svg_dir/rows.svg" "$svg_dir/rows.jsonl"
# The operations scripts/footprint.sh counts (each checks its result), without the simulator.
for side in background after-pause inline captured raw; do
    echo "== example report --footprint $side =="
    cargo run -q --profile test --example report -- --footprint "$side" >/tmp/lazycl-example-footprint.log 2>&1 || {
        cat /tmp/lazycl-example-footprint.log
        echo "example report --footprint $side failed" >&2
        exit 1
    }
done
echo "examples: all passed"
