#!/usr/bin/env bash
# Builds the release examples and copies them to devbin/ (git-ignored), for a GPU machine
# without a Rust toolchain: copy devbin/ there and run scripts/h200-run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --examples "$@"
mkdir -p devbin
for f in "${CARGO_TARGET_DIR:-target}"/release/examples/*; do
    if [ -f "$f" ] && [ -x "$f" ] && [[ "$(basename "$f")" != *-* ]] && [[ "$(basename "$f")" != *.d ]]; then
        cp "$f" devbin/
    fi
done
ls -la devbin
