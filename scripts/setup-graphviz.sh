#!/usr/bin/env bash
# Ensures Graphviz's `dot` is available: the tests render the DOT pictures of
# `explain_dot` with `dot -Tsvg`. Installs it with apt-get when missing, like PoCL
# (scripts/setup-opencl.sh). Idempotent and quick when it is already present.
set -euo pipefail

if command -v dot >/dev/null 2>&1; then
    exit 0
fi

bash "$(dirname "$0")/apt-install.sh" "Graphviz (dot)" --no-recommends graphviz
echo "lazycl: installed $(dot -V 2>&1)" >&2
