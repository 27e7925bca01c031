#!/usr/bin/env bash
# Builds Assent's Debian package with Tauri's bundler: the desktop app, the `assent` command on
# the PATH, a .desktop entry, icons in the hicolor sizes, AppStream metainfo, man pages and
# shell completions, with its dependencies declared (WebKitGTK, a Secret Service).
#
#   ./scripts/package.sh            release build -> target/release/bundle/deb/Assent_<v>_amd64.deb
#   ./scripts/package.sh --test     ... then install it, try the installed files, remove it
#   ./scripts/package.sh --debug    the same from a debug build (faster; what CI tests)
#   --features LIST                 with a debug build: the workspace's features the test run
#                                   builds with, so the package takes the crates it built
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

profile=release
test=0
features=""
while [ $# -gt 0 ]; do
  case "$1" in
    --test) test=1 ;;
    --debug) profile=debug ;;
    --features) features=${2:?--features needs a list}; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "package.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
# Test-only features (crash points) never go into a release package.
if [ -n "$features" ] && [ "$profile" != debug ]; then
  echo "package.sh: --features is for a debug build (--debug) only" >&2
  exit 2
fi

require_build_tools
ensure_packages "${ENGINE_PACKAGES[@]}" "${DESKTOP_PACKAGES[@]}" "${PACKAGE_PACKAGES[@]}"
build_ui
echo "== Tauri's bundler"
(cd packaging && { [ -x node_modules/.bin/tauri ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm install --no-audit --no-fund; })

cargo_flags=()
[ "$profile" = release ] && cargo_flags+=(--release)
app_features=()
if [ -n "$features" ]; then
  # assent-core is named as a package too: a feature of it reaches the command's build only so,
  # as the command depends on it through assent-cli. The app depends on it directly, and takes
  # the features of it alone.
  cargo_flags+=(-p assent-core --features "$features")
  core=$(tr ',' '\n' <<<"$features" | grep '^assent-core/' | paste -sd, - || true)
  [ -n "$core" ] && app_features+=(--features "$core")
fi
echo "== the command line ($profile)"
cargo build "${cargo_flags[@]}" --locked -p assent -p assent-boundary
bin="target/$profile/assent"

# Man pages and completions, generated from the command's own definitions.
stage="target/package"
rm -rf "$stage"
mkdir -p "$stage/man" "$stage/completions"
"$bin" man --dir "$stage/man"
gzip -9n "$stage"/man/*.1
"$bin" completions bash > "$stage/completions/assent"
"$bin" completions zsh > "$stage/completions/_assent"
"$bin" completions fish > "$stage/completions/assent.fish"

# The files the package carries besides the app, as a bundler config merged over
# src-tauri/tauri.conf.json (absolute paths: the bundler resolves relative ones from src-tauri).
python3 - "$PWD" "$bin" "$stage" > "$stage/tauri.package.json" <<'EOF'
import json, os, sys
root, binary, stage = sys.argv[1:4]
files = {
    "/usr/bin/assent": os.path.join(root, binary),
    "/usr/bin/assent-run": os.path.join(root, os.path.dirname(binary), "assent-run"),
    "/usr/share/metainfo/dev.assent.inbox.metainfo.xml": os.path.join(root, "packaging/linux/dev.assent.inbox.metainfo.xml"),
    "/usr/share/doc/assent/copyright": os.path.join(root, "packaging/linux/copyright"),
    "/usr/share/bash-completion/completions/assent": os.path.join(root, stage, "completions/assent"),
    "/usr/share/zsh/vendor-completions/_assent": os.path.join(root, stage, "completions/_assent"),
    "/usr/share/fish/vendor_completions.d/assent.fish": os.path.join(root, stage, "completions/assent.fish"),
}
for page in sorted(os.listdir(os.path.join(root, stage, "man"))):
    files[f"/usr/share/man/man1/{page}"] = os.path.join(root, stage, "man", page)
print(json.dumps({"bundle": {"active": True, "targets": ["deb"], "linux": {"deb": {"files": files}}}}, indent=2))
EOF

echo "== the desktop app and the package ($profile)"
bundle_flags=(--bundles deb --ci --config "$PWD/$stage/tauri.package.json" "${app_features[@]}")
[ "$profile" = debug ] && bundle_flags+=(--debug)
(cd src-tauri && ../packaging/node_modules/.bin/tauri build "${bundle_flags[@]}")

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
deb="target/$profile/bundle/deb/Assent_${version}_amd64.deb"
[ -f "$deb" ] || { echo "package.sh: the bundler made no $deb" >&2; exit 1; }
echo "built $deb ($(du -h "$deb" | cut -f1))"

if [ "$test" = 1 ]; then
  ./scripts/package-test.sh "$deb" "$bin"
fi
