# Shared by the scripts: find cargo, install missing Debian packages.

if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi

# Installs the named Debian packages that are not installed yet.
ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing system packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# What building and testing the engine needs: a C toolchain for the bundled SQLite, and a
# real Secret Service (D-Bus, gnome-keyring, secret-tool) for the keychain tests.
ENGINE_PACKAGES=(build-essential pkg-config dbus gnome-keyring libsecret-tools python3 curl util-linux)

# What the team-store tests need: a real PostgreSQL server (started by scripts/postgres.sh in
# a temp directory, never the system's) and its client tools.
TEAM_PACKAGES=(postgresql postgresql-client)

# What the desktop app needs to build and run (Tauri 2 on WebKitGTK), and what its tests use:
# Xvfb for a display, WebKitWebDriver, a notification daemon, Chromium for the UI's layout tests.
DESKTOP_PACKAGES=(libwebkit2gtk-4.1-dev libjavascriptcoregtk-4.1-dev libsoup-3.0-dev libgtk-3-dev
  libayatana-appindicator3-dev librsvg2-dev xvfb xauth dbus-x11 at-spi2-core webkit2gtk-driver dunst
  libnotify-bin imagemagick chromium)

# What building and testing the packages needs besides: validators for the desktop entry and the
# AppStream metainfo, and X tools to find the installed app's window.
PACKAGE_PACKAGES=(desktop-file-utils appstream x11-utils)

# What the Windows pass needs (scripts/windows.sh): a mingw-w64 linker for the cross-build and
# Wine to run the result.
WINDOWS_PACKAGES=(gcc-mingw-w64-x86-64 wine wine64 nsis)

# The toolchains building from source needs (README: "Build from source").
RUST_MIN=1.88
NODE_MIN=20.19

# Stops with the prerequisites when a toolchain is missing or too old, before anything is built.
# `require_build_tools rust` for what needs no front end (the headless server).
require_build_tools() {
  local problems=()
  if ! command -v cargo >/dev/null 2>&1; then
    problems+=("Rust $RUST_MIN or newer is not installed (https://rustup.rs, then open a new shell)")
  else
    local rv
    rv=$(rustc --version 2>/dev/null | sed -n 's/^rustc \([0-9]*\.[0-9]*\).*/\1/p')
    version_at_least "$rv" "$RUST_MIN" || problems+=("Rust $RUST_MIN or newer is needed, this is ${rv:-unknown} (rustup update)")
  fi
  if [ "${1:-}" = rust ]; then
    :
  elif ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    problems+=("Node.js $NODE_MIN or newer with npm is not installed (https://nodejs.org or your package manager)")
  else
    local nv
    nv=$(node --version 2>/dev/null | sed -n 's/^v\([0-9]*\.[0-9]*\).*/\1/p')
    version_at_least "$nv" "$NODE_MIN" || problems+=("Node.js $NODE_MIN or newer is needed, this is ${nv:-unknown}")
  fi
  if [ ${#problems[@]} -gt 0 ]; then
    echo "Building Assent from source needs Rust $RUST_MIN+ (with cargo) and Node.js $NODE_MIN+ (with npm);" >&2
    echo "the scripts install everything else on Debian and Ubuntu. Missing here:" >&2
    printf '  - %s\n' "${problems[@]}" >&2
    exit 1
  fi
}

# version_at_least HAVE WANT: true when HAVE (major.minor) >= WANT.
version_at_least() {
  [ -n "$1" ] || return 1
  local h1 h2 w1 w2
  IFS=. read -r h1 h2 <<<"$1"
  IFS=. read -r w1 w2 <<<"$2"
  [ "$h1" -gt "$w1" ] || { [ "$h1" -eq "$w1" ] && [ "${h2:-0}" -ge "${w2:-0}" ]; }
}

# Builds the inbox front end into ui/dist (the desktop app embeds it at compile time).
# Skipped when nothing it builds from changed since the last build (by content: the tests
# rewrite ui/src/bindings with the same text): a new build rewrites ui/dist and ui/dist-remote,
# which the app and the remote crate embed, and so would have cargo compile them again.
build_ui() {
  command -v npm >/dev/null || { echo "Node.js and npm are needed to build the front end (ui/)" >&2; return 1; }
  local stamp=ui/node_modules/.assent-ui-built sources
  sources=$(find ui/src ui/public-remote ui/index.html ui/remote.html ui/package.json ui/package-lock.json \
    ui/vite.config.ts ui/svelte.config.js ui/tsconfig.json -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum)
  if [ -f ui/dist/index.html ] && [ -d ui/dist-remote ] && [ "$(cat "$stamp" 2>/dev/null)" = "$sources" ]; then
    echo "front end: built, and nothing changed since"
    return 0
  fi
  (cd ui && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; } && npm run build) &&
    echo "$sources" > "$stamp"
}

# tauri-driver, the WebDriver server for the desktop app's end-to-end test (into .ci/bin).
ensure_tauri_driver() {
  [ -x .ci/bin/bin/tauri-driver ] || cargo install tauri-driver --locked --version '^2' --root .ci/bin
}

# Says how much disk the build has, and warns when it is less than a cold build of every
# target takes (measured: see scripts/test.sh). Never deletes anything.
report_disk() {
  local need_gb=${ASSENT_DISK_NEED_GB:-8} dir=target free_kb
  mkdir -p "$dir"
  free_kb=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
  echo "== disk: $((free_kb / 1024 / 1024)) GB free for $(cd "$dir" && pwd) (a cold run takes about $need_gb GB)"
  if [ "$free_kb" -lt $((need_gb * 1024 * 1024)) ]; then
    echo "warning: less disk free than a cold build takes; the build may stop with 'No space left on device'." >&2
    [ -d "$dir/debug/incremental" ] && echo "  (target/debug/incremental is a cache: removing it frees $(du -sh "$dir/debug/incremental" | cut -f1))" >&2
  fi
  return 0
}
