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
ENGINE_PACKAGES=(build-essential pkg-config dbus gnome-keyring libsecret-tools python3)

# What the desktop app needs to build and run (Tauri 2 on WebKitGTK), and what its tests use:
# Xvfb for a display, WebKitWebDriver, a notification daemon, Chromium for the UI's layout tests.
DESKTOP_PACKAGES=(libwebkit2gtk-4.1-dev libjavascriptcoregtk-4.1-dev libsoup-3.0-dev libgtk-3-dev
  libayatana-appindicator3-dev librsvg2-dev xvfb xauth dbus-x11 at-spi2-core webkit2gtk-driver dunst
  libnotify-bin imagemagick chromium)

# Builds the inbox front end into ui/dist (the desktop app embeds it at compile time).
build_ui() {
  command -v npm >/dev/null || { echo "Node.js and npm are needed to build the front end (ui/)" >&2; return 1; }
  (cd ui && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; } && npm run build)
}

# tauri-driver, the WebDriver server for the desktop app's end-to-end test (into .ci/bin).
ensure_tauri_driver() {
  [ -x .ci/bin/bin/tauri-driver ] || cargo install tauri-driver --locked --version '^2' --root .ci/bin
}
