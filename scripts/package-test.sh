#!/usr/bin/env bash
# Installs a built Assent package on this machine (apt-get, which pulls in its dependencies),
# tries the installed files (the command, the headless server, the app's window under Xvfb,
# the desktop entry and the metainfo against their validators), then removes it and checks that
# nothing is left. Needs root (or sudo): it changes the system's packages.
#
#   ./scripts/package-test.sh target/release/bundle/deb/Assent_0.1.0_amd64.deb [BUILT_ASSENT]
set -euo pipefail
cd "$(dirname "$0")/.."
deb=$1
built=${2:-}
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
work=$(mktemp -d)
app_pid=""
cleanup() {
  [ -n "$app_pid" ] && kill -TERM -- "-$app_pid" 2>/dev/null || true
  pkill -f /tmp/assent-package-serve 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "package test FAILED: $*" >&2; exit 1; }

echo "== installing $deb"
if dpkg -s assent >/dev/null 2>&1; then $sudo apt-get remove -y -q assent >/dev/null; fi
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "./$deb" >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get install"; }
dpkg -s assent | grep '^Status: install ok installed' >/dev/null || fail "dpkg does not list assent as installed"
depends=$(dpkg -s assent | sed -n 's/^Depends: //p')
for d in libwebkit2gtk-4.1-0 libgtk-3-0 "gnome-keyring | keepassxc"; do
  case "$depends" in *"$d"*) ;; *) fail "Depends lacks $d: $depends" ;; esac
done

echo "== the installed files"
dpkg -L assent > "$work/files"
for f in /usr/bin/assent /usr/bin/assent-run /usr/bin/assent-desktop /usr/share/applications/Assent.desktop \
  /usr/share/metainfo/dev.assent.inbox.metainfo.xml /usr/share/icons/hicolor/32x32/apps/assent-desktop.png \
  /usr/share/icons/hicolor/128x128/apps/assent-desktop.png /usr/share/icons/hicolor/256x256/apps/assent-desktop.png \
  /usr/share/icons/hicolor/512x512/apps/assent-desktop.png /usr/share/man/man1/assent.1.gz \
  /usr/share/man/man1/assent-doctor.1.gz /usr/share/bash-completion/completions/assent \
  /usr/share/zsh/vendor-completions/_assent /usr/share/fish/vendor_completions.d/assent.fish \
  /usr/share/doc/assent/copyright; do
  grep -qx "$f" "$work/files" || fail "the package has no $f"
  [ -e "$f" ] || fail "$f is not on disk"
done
[ "$(command -v assent)" = /usr/bin/assent ] || fail "assent is not the one on the PATH: $(command -v assent)"
desktop-file-validate /usr/share/applications/Assent.desktop || fail "desktop-file-validate"
grep -q '^Exec=assent-desktop' /usr/share/applications/Assent.desktop || fail "the desktop entry does not start assent-desktop"
appstreamcli validate --no-net /usr/share/metainfo/dev.assent.inbox.metainfo.xml || fail "appstreamcli validate"
zcat /usr/share/man/man1/assent.1.gz | grep '^\.TH assent 1' >/dev/null || fail "the man page is not roff"
bash -c 'source /usr/share/bash-completion/completions/assent && complete -p assent' >/dev/null || fail "the bash completion does not load"

echo "== assent --version"
version=$(/usr/bin/assent --version)
echo "$version"
case "$version" in "assent "*" (commit "*")") ;; *) fail "unexpected version line: $version" ;; esac
if [ -n "$built" ]; then
  [ "$version" = "$("$built" --version)" ] || fail "the installed command is not the one just built"
fi

echo "== assent serve --port 0 from the installed files"
home="$work/serve-home"
mkdir -p "$home"
ASSENT_OWNER_CREDENTIAL=file /usr/bin/assent --home "$home" serve --port 0 >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
for _ in $(seq 100); do grep -q http "$work/serve.out" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$work/serve.out" | head -1)
[ -n "$url" ] || { cat "$work/serve.err"; fail "the installed server did not start"; }
health=$(curl -sf "${url%/v1}/v1/health") || fail "GET /v1/health"
echo "$health"
case "$health" in *'"status":"ok"'*) ;; *) fail "health: $health" ;; esac
doc=$(curl -sf "${url%/v1}/v1/openapi.json") || fail "GET /v1/openapi.json"
case "$doc" in *'"openapi": "3.1.0"'*) ;; *) fail "GET /v1/openapi.json is not OpenAPI 3.1" ;; esac
token=$(cat "$home/agent.token")
made=$(curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"kind":"tool.call","payload":{"tool":"Bash","input":{"command":"ls"}}}' "${url%/v1}/v1/proposals") || fail "propose"
case "$made" in *'"status":"pending"'*) ;; *) fail "proposal: $made" ;; esac
/usr/bin/assent --home "$home" doctor --json >"$work/doctor.json" || true
grep -q '"name":"server","status":"ok"' "$work/doctor.json" || fail "doctor does not see the server: $(cat "$work/doctor.json")"
kill -TERM "$serve_pid"
wait "$serve_pid" || true

echo "== the installed app's window, under Xvfb"
apphome="$work/app-home"
mkdir -p "$apphome" "$work/user"
echo 'port = 0' > "$apphome/config.toml"
HOME="$work/user" ASSENT_HOME="$apphome" ASSENT_OWNER_CREDENTIAL=file \
  setsid xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
  sh -c 'assent-desktop & app=$!; for i in $(seq 300); do if xwininfo -root -tree 2>/dev/null | grep -q "\"Assent\""; then sleep 2; xwininfo -root -tree > "$0/tree"; import -window root "$0/window.png"; break; fi; sleep 0.1; done; kill $app; wait $app' "$work" \
  >"$work/app.log" 2>&1 &
app_pid=$!
wait "$app_pid" || true
app_pid=""
[ -f "$work/tree" ] || { tail -20 "$work/app.log"; fail "the installed app showed no window named Assent"; }
grep '"Assent"' "$work/tree" | head -1
[ -f "$apphome/assent.db" ] || fail "the installed app did not open its database"
mkdir -p target/package
cp "$work/window.png" target/package/installed-app.png
echo "screenshot: target/package/installed-app.png"

echo "== started at login: the app runs in the tray, its window hidden"
rm -rf "$apphome" && mkdir -p "$apphome" && echo 'port = 0' > "$apphome/config.toml"
HOME="$work/user" ASSENT_HOME="$apphome" ASSENT_OWNER_CREDENTIAL=file \
  setsid xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
  sh -c 'assent-desktop --autostart & app=$!; for i in $(seq 300); do [ -f "$1/server.json" ] && break; sleep 0.1; done; sleep 2; for w in $(xwininfo -root -tree 2>/dev/null | sed -n "s/^ *\(0x[0-9a-f]*\) \"Assent\".*/\1/p"); do xwininfo -id "$w" | grep "Map State"; done > "$0/hidden"; kill $app; wait $app' "$work" "$apphome" \
  >"$work/app.log" 2>&1 &
app_pid=$!
wait "$app_pid" || true
app_pid=""
[ -f "$apphome/server.json" ] || [ -f "$apphome/assent.db" ] || { tail -20 "$work/app.log"; fail "started with --autostart, the app did not run"; }
grep -q "IsViewable" "$work/hidden" && fail "started with --autostart, the window was shown: $(cat "$work/hidden")"
echo "window hidden: $(tr '\n' ' ' < "$work/hidden")"

echo "== removing the package"
DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -q assent >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get purge"; }
dpkg -s assent >/dev/null 2>&1 && fail "assent is still installed"
while read -r f; do
  [ -f "$f" ] && fail "$f was left behind"
done < "$work/files"
[ -e /usr/bin/assent ] && fail "/usr/bin/assent was left behind"
echo "package test: ok ($deb)"
