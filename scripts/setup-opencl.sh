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

# (An OpenCL platform: PoCL, a CPU device, and the ICD loader.)
bash "$(dirname "$0")/apt-install.sh" "an OpenCL platform" pocl-opencl-icd ocl-icd-opencl-dev clinfo
echo "lazycl: installed; platforms now:" >&2
clinfo -l >&2 || true
