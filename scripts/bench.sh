#!/usr/bin/env bash
# Runs the benchmarks and prints each figure next to the ceiling or target it is compared to.
# With no display, the desktop-app benchmark runs under Xvfb with its own D-Bus session.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
require_build_tools
ensure_packages "${ENGINE_PACKAGES[@]}" "${TEAM_PACKAGES[@]}" "${DESKTOP_PACKAGES[@]}" git
build_ui
cargo build --release --locked -p assent -p assent-boundary -p assent-bench -p assent-desktop
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
  exec xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- ./target/release/assent-bench "$@"
fi
exec ./target/release/assent-bench "$@"
