#!/usr/bin/env bash
# Ensures an OpenCL platform is available: installs PoCL (a CPU OpenCL device) and
# the ICD loader with apt-get when no platform is found. Idempotent and quick when
# everything is already present.
set -euo pipefail

have_loader() {
    ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so' || ls /usr/lib/*/libOpenCL.so* >/dev/null 2>&1
}
have_platform() {
    # An ICD file registers a platform with the loader.
    ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1
}

if have_loader && have_platform; then
    exit 0
fi

PKGS="pocl-opencl-icd ocl-icd-opencl-dev clinfo"
if [ "$(id -u)" -ne 0 ]; then
    echo "lazycl: no OpenCL platform found. Install PoCL and the ICD loader as root:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y $PKGS" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "lazycl: no OpenCL platform found and apt-get is unavailable." >&2
    echo "    Install an OpenCL ICD loader (libOpenCL.so.1) and a platform such as PoCL." >&2
    exit 1
fi
echo "lazycl: no OpenCL platform found; installing $PKGS" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $PKGS >/dev/null
echo "lazycl: installed; platforms now:" >&2
clinfo -l >&2 || true
