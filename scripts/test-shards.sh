#!/usr/bin/env bash
# Usage: scripts/test-shards.sh TARGET [LIBTEST ARGUMENTS]
#
# Runs the tests of the integration test binary TARGET (`cargo test --test TARGET`) in
# several processes at once, each with a share of them; the other arguments are libtest's
# (`--skip ui_`), for every share. `make test` runs the tests of `it` so.
#
# Why: PoCL compiles one program at a time per process (its LLVM layer holds a lock of
# the process), and a first run of the tests is mostly program builds: a second run, which
# loads the programs from the caches on disk, takes a tenth of the time. One process keeps
# one core busy however many tests it runs at once; two keep two.
#
# LAZYCL_TEST_SHARDS (default 2) processes, each with the tests at positions k, k + n, ...
# of the sorted list (so every module is spread over all of them), each printing its
# lines with its number in front. Fails if a share fails or if a listed test did not run.
set -euo pipefail
cd "$(dirname "$0")/.."

target="$1"
shift
shards="${LAZYCL_TEST_SHARDS:-2}"
cargo test --test "$target" --no-run

mapfile -t names < <(cargo test -q --test "$target" -- --list --format terse "$@" | sed -n 's/: test$//p')
if [ "${#names[@]}" -eq 0 ]; then
    echo "test-shards: no test of $target matches $*" >&2
    exit 1
fi
[ "$shards" -le "${#names[@]}" ] || shards="${#names[@]}"

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for ((k = 0; k < shards; k++)); do
    share=()
    for ((i = k; i < ${#names[@]}; i += shards)); do
        share+=("${names[i]}")
    done
    {
        set +e
        cargo test --test "$target" -- --exact "${share[@]}" "$@" 2>&1
        echo $? >"$dir/status.$k"
    } | tee "$dir/out.$k" | sed -u "s/^/[$target $((k + 1))\/$shards] /" &
done
wait

failed=0
ran=0
for ((k = 0; k < shards; k++)); do
    [ "$(cat "$dir/status.$k" 2>/dev/null)" = 0 ] || failed=1
    counts="$(sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/\1 \2 \3/p' "$dir/out.$k")"
    for c in $counts; do
        ran=$((ran + c))
    done
done
if [ "$ran" -ne "${#names[@]}" ]; then
    echo "test-shards: ${#names[@]} tests of $target listed, $ran run" >&2
    failed=1
fi
[ "$failed" -eq 0 ] && echo "test-shards: the ${#names[@]} tests of $target in $shards processes: ok"
exit "$failed"
