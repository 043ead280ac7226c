#!/usr/bin/env bash
# What one host operation touches when the host's caches are cold: runs
# `report --footprint SIDE` (examples/report/footprint.rs) under callgrind's cache
# simulator for each side and prints, per operation, the instructions it ran and the
# cache lines of code and of data it missed in a last-level cache emptied before it.
# The first-level caches are made tiny (1 KiB), so every line the operation touches goes
# to the last level: its misses there are the distinct lines the operation touched cold.
# A deterministic stand-in for the first operation after a long kernel on a GPU, whose
# cost follows these lines (RESULTS.md#rule-first-op-footprint).
#   scripts/footprint.sh [SIDE...]     (sides: background after-pause inline captured raw; all by default)
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null 2>&1 || bash scripts/apt-install.sh valgrind valgrind
cargo build -q --release --example report
sides=("$@")
[ ${#sides[@]} -gt 0 ] || sides=(background after-pause inline captured raw)
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
printf '%-9s %12s %11s %11s\n' side instructions "code lines" "data lines"
for side in "${sides[@]}"; do
    valgrind --tool=callgrind --cache-sim=yes --I1=1024,1,64 --D1=1024,1,64 --LL=16777216,16,64 \
        --toggle-collect='*footprint::counted' --callgrind-out-file="$dir/$side.out" \
        target/release/examples/report --footprint "$side" >"$dir/$side.log" 2>&1 || {
        cat "$dir/$side.log"
        exit 1
    }
    reps="$(sed -n 's/^footprint: \([0-9]*\) repetitions.*/\1/p' "$dir/$side.log")"
    callgrind_annotate --show=Ir,ILmr,DLmr,DLmw "$dir/$side.out" | grep 'PROGRAM TOTALS' |
        sed -E 's/,//g; s/\( *[0-9.]+%\)//g' |
        awk -v s="$side" -v r="$reps" '{ printf "%-9s %12.0f %11.0f %11.0f\n", s, $1 / r, $2 / r, ($3 + $4) / r }'
done
