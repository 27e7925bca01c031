#!/usr/bin/env bash
# Sets up what the tests need and runs every test: formatting, lints, unit tests of every
# crate, and the black-box tests that drive the real `assent` binary over loopback HTTP, with
# a real Secret Service for the keychain tests.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
# Each part of the run says its name when it starts and its time when the next starts; the
# closing lines list them all (the 45-minute budget of docs/development.md is read off these).
phases=()
phase_name=""
phase_start=$SECONDS
phase() {
  local now=$SECONDS
  if [ -n "$phase_name" ]; then
    phases+=("$(printf '%-28s %3dm%02ds' "$phase_name" $(((now - phase_start) / 60)) $(((now - phase_start) % 60)))")
  fi
  phase_name=$1
  phase_start=$now
  [ -n "$1" ] && echo "== $1"
  return 0
}
phase_report() {
  phase ""
  echo
  echo "time by part:"
  printf '  %s\n' "${phases[@]}"
  printf '  %-28s %3dm%02ds\n' "whole run" $((SECONDS / 60)) $((SECONDS % 60))
}
require_build_tools
# What the run needs on disk, said at the start so that a full disk reads as a full disk and
# not as a compiler's error minutes in: a cold run with CARGO_INCREMENTAL=0 (as .ci/run sets)
# peaked at 2.7 GB of target/ (2026-11-26), before the Windows build (about 1.2 GB) and the
# two macOS checks (0.4 GB each, zig 0.4 GB more); incremental caches take several times that.
report_disk

phase "system packages"
ensure_packages "${ENGINE_PACKAGES[@]}" "${TEAM_PACKAGES[@]}" "${DESKTOP_PACKAGES[@]}" "${PACKAGE_PACKAGES[@]}" \
  "${WINDOWS_PACKAGES[@]}"
phase "front end"
build_ui
(cd ui && npm run check && npm test && npm run test:layout)
phase "tools"
rustup component list --installed 2>/dev/null | grep -q rustfmt || rustup component add rustfmt clippy

ensure_tauri_driver

# One feature set for every build of the run (the lints, the tests, the PostgreSQL pass, the
# debug package), and one for each dependency (crates/workspace-hack, kept by cargo-hakari), so
# no crate is compiled twice over: crash points for the crash tests, ts for the UI's bindings.
features=assent/crash-points,assent-core/crash-points,assent-core/ts

phase "format"
cargo fmt --all -- --check
# One build for the lints and the tests: clippy's driver compiles the workspace's own crates
# (their lints with warnings as errors, as `cargo clippy -- -D warnings` holds them) and plain
# rustc the dependencies. A separate `cargo clippy` checked every dependency a second time
# (11 of a cold run's 46 minutes). Exported, so every later build of the run (the PostgreSQL
# pass, Windows, macOS, the package) sees the same compiler and compiles nothing again.
export RUSTC_WORKSPACE_WRAPPER=clippy-driver
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
phase "build and lint the tests"
# --all-targets: the benches and examples too, as the lints always covered them.
cargo test --workspace --all-targets --locked --features "$features" --no-run 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# The black-box suite's tests spend most of their time waiting (on servers, real clients, a
# browser, timeouts): on 2 cores it runs BLACKBOX_THREADS of them at a time (the rest of the
# crates' tests as libtest chooses). The same features, so nothing is compiled again.
threads=${BLACKBOX_THREADS:-4}
if [ "$status" -eq 0 ]; then
  phase "tests"
  cargo test --workspace --exclude assent --locked --no-fail-fast --features "${features/assent\/crash-points/assent-cli/crash-points}" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  phase "black-box tests"
  cargo test -p assent --locked --no-fail-fast --features "$features" -- --test-threads "$threads" 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if [ "$status" -eq 0 ]; then
  # The behaviour both stores share, once more with every server on a team store: a database
  # of its own per server on a real PostgreSQL (tests/blackbox/pg.rs). Left out: what is about
  # the local disk (a full disk under the home's SQLite database).
  phase "black-box on PostgreSQL"
  # The same features as the run above, so nothing is compiled again; said when something is.
  again=$(cargo test -p assent --test blackbox --locked --features "$features" --no-run 2>&1 | grep -c '^ *Compiling ')
  [ "$again" -gt 0 ] && echo "warning: $again crates were compiled again for this pass: if a dependency changed, run cargo hakari generate && cargo hakari manage-deps" >&2
  ASSENT_TEST_STORE=postgres cargo test -p assent --test blackbox --locked --features "$features" -- \
    --test-threads "$threads" lifecycle:: errors:: events:: rules:: crash:: files:: http:: cli:: boundary:: durability:: security:: leases:: \
    batches:: receipts:: \
    --skip boundary::a_full_disk_is_a_clear_507_and_loses_nothing 2>&1 | tee -a "$log"
  status=${PIPESTATUS[0]}
fi
if [ "$status" -eq 0 ]; then
  phase "Windows under Wine"
  # The engine on Windows: cross-built, then the suite's desktop-free tests against it under Wine.
  FEATURES=$features ./scripts/windows.sh 2>&1 | tee -a "$log"
  status=${PIPESTATUS[0]}
fi
if [ "$status" -eq 0 ]; then
  phase "macOS check"
  # macOS: the whole workspace compiled for both Mac targets (nothing to run it on here).
  FEATURES=$features ./scripts/macos.sh
  status=$?
fi
set -e
drift=0
if [ -n "$(git status --porcelain -- ui/src/bindings 2>/dev/null)" ]; then
  git status --short -- ui/src/bindings
  echo "ui/src/bindings drifted from the Rust types: run the tests and commit the result" >&2
  drift=1
fi
# The package: a debug build with the tests' features, so it takes what the tests just built
# (the release build is `./scripts/package.sh --test`), installed with apt, tried, and removed.
package=0
if [ "$status" -eq 0 ]; then
  phase "package"
  if [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; then
    ./scripts/package.sh --debug --test --features "$features" || package=1
  else
    echo "package test not run: it installs a package, which needs root or passwordless sudo (./scripts/package.sh --test)"
  fi
fi
phase_report
# The test binaries that took longest, from cargo's own "finished in" figures.
awk '/^ *Running / { bin = $2 } /^test result:/ { for (i = 1; i <= NF; i++) if ($i == "in") { sub(/s$/, "", $(i+1)); printf "%8.1fs  %s\n", $(i+1), bin } }' "$log" |
  sort -rn | head -8 | sed 's/^/  /' | { echo "slowest test binaries:"; cat; }
# One closing line for the whole run, summed over every test binary (the box's own harness says
# "test result (with Landlock): ..."), and each test skipped, by name, with why: a test that
# could not run here is never counted as passed.
awk '/^test result/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^(ignored|skipped)/) s += $i } }
     /^test .* \.\.\. (ignored|skipped)/ { sub(/^test /, ""); named = named "\n  skipped: " $0 }
     END { printf "\ntests: %d passed, %d failed, %d skipped%s\n", p, f, s, named }' "$log"
[ "$status" -ne 0 ] && exit "$status"
[ "$package" -ne 0 ] && { echo "the package test failed" >&2; exit 1; }
exit "$drift"
