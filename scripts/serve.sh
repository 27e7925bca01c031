#!/usr/bin/env bash
# Builds Assent and runs it headless. Extra arguments go to `assent serve` (e.g. --port 0).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
require_build_tools rust
ensure_packages "${ENGINE_PACKAGES[@]}"
cargo build --release --locked -p assent -p assent-boundary
exec ./target/release/assent serve "$@"
