#!/usr/bin/env bash
# Builds the release binaries the H200 run needs and copies them to devbin/ (git-ignored),
# which the device tool carries.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --examples "$@"
mkdir -p devbin
for f in target/release/examples/*; do
    if [ -f "$f" ] && [ -x "$f" ] && [[ "$(basename "$f")" != *-* ]] && [[ "$(basename "$f")" != *.d ]]; then
        cp "$f" devbin/
    fi
done
ls -la devbin
