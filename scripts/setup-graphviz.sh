#!/usr/bin/env bash
# Ensures Graphviz's `dot` is available: the tests render the DOT pictures of
# `explain_dot` with `dot -Tsvg`. Installs it with apt-get when missing, like PoCL
# (scripts/setup-opencl.sh). Idempotent and quick when it is already present.
set -euo pipefail

if command -v dot >/dev/null 2>&1; then
    exit 0
fi

PKGS="graphviz"
if [ "$(id -u)" -ne 0 ]; then
    echo "lazycl: Graphviz (dot) not found. Install it as root:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y $PKGS" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "lazycl: Graphviz (dot) not found and apt-get is unavailable; install Graphviz." >&2
    exit 1
fi
echo "lazycl: Graphviz (dot) not found; installing $PKGS" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
echo "lazycl: installed $(dot -V 2>&1)" >&2
