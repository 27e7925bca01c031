#!/usr/bin/env bash
# Builds and starts the Assent desktop app (the inbox, with the engine and the loopback API
# inside it). On a machine with no display, use `assent serve` instead: `./scripts/serve.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
require_build_tools
ensure_packages "${ENGINE_PACKAGES[@]}" "${DESKTOP_PACKAGES[@]}"
build_ui
cargo build --release --locked -p assent -p assent-boundary -p assent-desktop
exec ./target/release/assent-desktop "$@"
