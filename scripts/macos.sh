#!/usr/bin/env bash
# A compile check of the whole workspace (the engine, the command and the desktop app) for
# macOS on Apple silicon and on Intel, from Linux: `cargo check` for aarch64-apple-darwin and
# x86_64-apple-darwin. The C in the dependencies (SQLite, ring) is compiled by zig's C compiler
# (the `ziglang` package from PyPI, pinned), which carries macOS's headers. Nothing is linked or
# run: there is no Mac here (docs/platforms.md).
#
# FEATURES (the test run's feature set) is honoured so build scripts and proc macros built for
# the run are reused.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

features=${FEATURES:-assent/crash-points,assent-core/crash-points,assent-core/ts}
zig=.ci/zig
venv=.ci/venv-zig
if ! "$venv/bin/python" -m ziglang version >/dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "ziglang==0.17.1"
fi
mkdir -p "$zig"
for arch in aarch64 x86_64; do
  # cc-rs passes its own spelling of the target (--target=arm64-apple-macosx), which is not
  # zig's: the wrapper drops it and names the target as zig does.
  cat > "$zig/cc-$arch-apple-darwin" <<SH
#!/bin/sh
for a in "\$@"; do shift; case \$a in --target=*) ;; *) set -- "\$@" "\$a";; esac; done
exec "$PWD/$venv/bin/python" -m ziglang cc -target $arch-macos "\$@"
SH
  chmod +x "$zig/cc-$arch-apple-darwin"
done
printf '#!/bin/sh\nexec "%s" -m ziglang ar "$@"\n' "$PWD/$venv/bin/python" > "$zig/ar"
chmod +x "$zig/ar"

# Both targets in one cargo run: one build graph keeps both cores busy where two runs in a row
# would each end on one crate at a time.
targets=(aarch64-apple-darwin x86_64-apple-darwin)
echo "== macOS: compile check (${targets[*]})"
vars=()
args=()
for target in "${targets[@]}"; do
  rustup target list --installed 2>/dev/null | grep -qx "$target" || rustup target add "$target"
  var=${target//-/_}
  vars+=("CC_$var=$PWD/$zig/cc-$target" "AR_$var=$PWD/$zig/ar" "CARGO_TARGET_${var^^}_RUSTFLAGS=-D warnings")
  args+=(--target "$target")
done
# A check links nothing, so SQLite's C (a third of a million lines, compiled once per target by
# zig) is not built: the crate is told to link a system SQLite, and takes its bundled bindings.
vars+=(LIBSQLITE3_SYS_USE_PKG_CONFIG=1 SQLITE3_LIB_DIR=/nonexistent)
env "${vars[@]}" cargo check --locked --workspace "${args[@]}" --features "$features" ${MACOS_TIMINGS:+--timings}
