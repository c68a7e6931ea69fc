#!/usr/bin/env bash
# Runs the demo on the latest Node 22 (the oldest line Vigil supports), beside the suite on the pinned Node 24:
# `npx --package=node@22` puts that Node first on PATH for this one command. Run by `npm test`.
set -euo pipefail
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
npx --yes --package=node@22 -- sh -c 'echo "demo on Node $(node --version)"; node bin/vigil.mjs demo --data-dir "$0/demo" > "$0/out.txt"' "$dir"
grep -v "^Next:" "$dir/out.txt" | tail -n 12
