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
