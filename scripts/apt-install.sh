#!/usr/bin/env bash
# Installs the Debian packages of a missing prerequisite with apt-get, or says how to when
# it cannot (not root, no apt-get). Used by the setup-*.sh scripts.
#   apt-install.sh WHAT [--no-recommends] PKG...    (WHAT names the missing thing)
set -euo pipefail

what=$1
shift
opts=()
if [ "${1:-}" = "--no-recommends" ]; then
    opts+=(--no-install-recommends)
    shift
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "lazycl: $what not found. Install it as root:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y $*" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "lazycl: $what not found and apt-get is unavailable; install the equivalent of: $*" >&2
    exit 1
fi
echo "lazycl: $what not found; installing $*" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${opts[@]}" "$@" >/dev/null
