#!/usr/bin/env bash
# Runs the prebuilt release binaries in devbin/ on the lent H200 machine (no Rust there):
# enables NVIDIA's OpenCL platform, then writes everything under $OUT.
# Build first, here: scripts/h200-build.sh
set -uo pipefail
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
date -u > "$OUT/date.txt"
./devbin/devices > "$OUT/devices.txt" 2>&1
export LAZYCL_DEVICE="${LAZYCL_DEVICE:-nvidia}"
for step in "$@"; do
    case "$step" in
        report) timeout 400 ./devbin/report > "$OUT/report.md" 2> "$OUT/report.err"; echo "report rc=$?" ;;
        pocl) LAZYCL_DEVICE=pocl timeout 300 ./devbin/report --quick > "$OUT/report-pocl.md" 2> "$OUT/report-pocl.err"; echo "pocl rc=$?" ;;
        *) timeout 300 ./devbin/"$step" > "$OUT/$step.txt" 2>&1; echo "$step rc=$?" ;;
    esac
done
cat "$OUT/gpu.txt" "$OUT/devices.txt"
cat "$OUT/report.md" 2>/dev/null | head -40
tail -5 "$OUT/report.err" 2>/dev/null
