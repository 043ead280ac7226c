#!/usr/bin/env bash
# Builds every example and runs each at a small size (LAZYCL_EXAMPLE_SMALL=1), as
# `make test` does. Fails on the first example that fails.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --examples
export LAZYCL_EXAMPLE_SMALL=1
for src in examples/*.rs examples/*/main.rs; do
    case "$src" in
        */main.rs) name="$(basename "$(dirname "$src")")" ;;
        *) name="$(basename "$src" .rs)" ;;
    esac
    echo "== example $name =="
    cargo run -q --example "$name" >/tmp/lazycl-example-"$name".log 2>&1 || {
        cat /tmp/lazycl-example-"$name".log
        echo "example $name failed" >&2
        exit 1
    }
    tail -n 3 /tmp/lazycl-example-"$name".log
done
# The logistic regression's other formulation (the residual stored, two reads of X).
echo "== example logistic_regression --residual stored =="
cargo run -q --example logistic_regression -- --residual stored --shape 3000x36 --dtype f64 --iters 20 \
    >/tmp/lazycl-example-logreg-stored.log 2>&1 || {
    cat /tmp/lazycl-example-logreg-stored.log
    echo "example logistic_regression --residual stored failed" >&2
    exit 1
}
tail -n 3 /tmp/lazycl-example-logreg-stored.log
echo "examples: all passed"
