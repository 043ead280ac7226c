#!/usr/bin/env bash
# Runs the prebuilt release binaries in devbin/ on an NVIDIA GPU machine without a Rust
# toolchain: enables NVIDIA's OpenCL platform, then writes everything under $OUT.
# Build first, here: scripts/h200-build.sh (for `it`: cargo test --release --no-run --test it,
# then copy target/release/deps/it-* to devbin/it)
set -uo pipefail
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
# Few files: the machine's facts share info.txt, the JSON steps' logs err.txt.
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; date -u; ./devbin/devices; } > "$OUT/info.txt" 2>&1
export LAZYCL_DEVICE="${LAZYCL_DEVICE:-nvidia}"
for step in "$@"; do
    case "$step" in
        report) timeout 400 ./devbin/report > "$OUT/report.md" 2> "$OUT/report.err"; echo "report rc=$?" ;;
        pocl) LAZYCL_DEVICE=pocl timeout 300 ./devbin/report --quick > "$OUT/report-pocl.md" 2> "$OUT/report-pocl.err"; echo "pocl rc=$?" ;;
        # host1, host2, ...: the host rows as JSON lines (scripts/report-runs.py reads them)
        host*) timeout 150 ./devbin/report --host --json > "$OUT/$step.json" 2>> "$OUT/err.txt"; echo "$step rc=$?" ;;
        nodes) timeout 150 ./devbin/report --nodes --json > "$OUT/nodes.json" 2>> "$OUT/err.txt"; echo "nodes rc=$?" ;;
        # the integration tests (copy target/release/deps/it-* to devbin/it), UI tests apart
        it) timeout 240 ./devbin/it --skip ui_ > "$OUT/it.txt" 2>&1; echo "it rc=$?"; tail -3 "$OUT/it.txt" ;;
        *) timeout 300 ./devbin/"$step" > "$OUT/$step.txt" 2>&1; echo "$step rc=$?" ;;
    esac
done
cat "$OUT/info.txt"; tail -20 "$OUT/err.txt" 2>/dev/null
cat "$OUT/report.md" 2>/dev/null | head -40
tail -5 "$OUT/report.err" 2>/dev/null
