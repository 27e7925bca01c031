#!/usr/bin/env bash
# Builds Assent and runs it. Extra arguments go to `assent serve` (e.g. --port 0, --home DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_packages build-essential pkg-config
cargo build --release --locked -p assent
exec ./target/release/assent serve "$@"
