#!/usr/bin/env bash
# Runs the benchmarks and prints each figure next to the ceiling or target it is compared to.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_packages build-essential pkg-config
cargo build --release --locked -p assent -p assent-bench
exec ./target/release/assent-bench "$@"
