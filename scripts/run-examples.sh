#!/usr/bin/env bash
# Builds every example and runs each at a small size (LAZYCL_EXAMPLE_SMALL=1), as
# `make test` does, two at a time (LAZYCL_EXAMPLE_JOBS): a run is mostly program builds,
# which PoCL does one at a time per process. Prints the last lines of each run that
# passes and the whole output of each that fails; fails if any failed.
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

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
jobs_at="${LAZYCL_EXAMPLE_JOBS:-2}"
running=()
logs_of=()
titles=()
failed=0
count=0

# Waits for the oldest run in flight and reports it.
finish_oldest() {
    local pid="${running[0]}" title="${titles[0]}" log="$logs/${logs_of[0]}.log"
    running=("${running[@]:1}")
    titles=("${titles[@]:1}")
    logs_of=("${logs_of[@]:1}")
    if wait "$pid"; then
        echo "== example $title =="
        tail -n 3 "$log"
    else
        echo "== example $title: failed =="
        cat "$log"
        echo "example $title failed" >&2
        failed=1
    fi
}

# `example NAME [ARGS...]`: starts `cargo run --example NAME -- ARGS` once fewer than
# $jobs_at runs are in flight, with a log of its own.
example() {
    local name="$1"
    shift
    while [ "${#running[@]}" -ge "$jobs_at" ]; do
        finish_oldest
    done
    count=$((count + 1))
    cargo run -q --profile test --example "$name" -- "$@" >"$logs/$count.log" 2>&1 &
    running+=("$!")
    titles+=("$name${*:+ $*}")
    logs_of+=("$count")
}

for src in examples/*.rs examples/*/main.rs; do
    case "$src" in
        */main.rs) name="$(basename "$(dirname "$src")")" ;;
        *) name="$(basename "$src" .rs)" ;;
    esac
    # The distributed examples need the `mpi` feature and `mpirun` (scripts/check-dist.sh).
    case "$name" in dist_*) continue ;; esac
    example "$name"
done
# The logistic regression's other formulation (the default on this CPU device is stored).
example logistic_regression --residual fused --shape 3000x20 --dtype f64 --iters 20
# k-means with its centroids updated by one-hot reductions (the GPU default; this CPU
# device takes scatter_add + bincount), checked against the host.
example kmeans --update onehot
# The operations scripts/footprint.sh counts (each checks its result), without the simulator.
for side in background after-pause inline captured raw; do
    example report --footprint "$side"
done
while [ "${#running[@]}" -gt 0 ]; do
    finish_oldest
done

# The report's chart: its quickest mode with --json and --svg, the SVG parsed and checked
# against the JSON rows (scripts/check-report-svg.py).
echo "== example report --rows --json --svg =="
cargo run -q --profile test --example report -- --rows --quick --json --svg "$logs/rows.svg" \
    >"$logs/rows.jsonl" 2>"$logs/report-svg.log" || {
    cat "$logs/report-svg.log"
    echo "example report --svg failed" >&2
    failed=1
}
[ "$failed" -ne 0 ] || python3 scripts/check-report-svg.py "$logs/rows.svg" "$logs/rows.jsonl"

if [ "$failed" -ne 0 ]; then
    echo "examples: some failed (above)" >&2
    exit 1
fi
echo "examples: all $((count + 1)) runs passed"
