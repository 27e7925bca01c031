#!/usr/bin/env bash
# Assent's Windows installer (packaging/windows/assent.nsi), built with Debian's NSIS and tried
# under Wine in a throwaway prefix: a silent install with "start at log-in", what it wrote
# checked, the INSTALLED assent.exe run as a server and as its CLI, then a silent uninstall and
# a check that it left nothing behind but the user's data.
#
#   ./scripts/windows-installer.sh [DIR]   DIR: the cross-built programs (default: $ASSENT_WINDOWS_DIR,
#                                          else target/x86_64-pc-windows-gnu/windows-test, made by
#                                          ./scripts/windows.sh --build; not rebuilt here)
#   ASSENT_INSTALLER_COMPRESSOR            NSIS compressor (default off: the test build's 120 MB
#                                          programs stored as they are, in seconds; zlib takes
#                                          ~30 s; "/SOLID lzma", the .nsi's own default, minutes)
#
# Output: target/windows-installer/assent-setup-VERSION.exe. Each check prints `ok` or `FAIL`;
# the exit status is non-zero when one failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
started=$SECONDS

ensure_packages nsis "${WINDOWS_PACKAGES[@]}"
src=$(realpath "${1:-${ASSENT_WINDOWS_DIR:-target/x86_64-pc-windows-gnu/windows-test}}")
version=$(sed -n '/^\[workspace\.package\]/,/^\[/s/^version *= *"\(.*\)".*/\1/p' Cargo.toml)
for exe in assent.exe assent-run.exe; do
  [ -f "$src/$exe" ] || { echo "no $src/$exe: run ./scripts/windows.sh --build first" >&2; exit 1; }
done
mkdir -p target/windows-installer
out=$PWD/target/windows-installer/assent-setup-$version.exe

# The .nsi packs the desktop app when the file is there; the same test here, to say so.
desktop=0
parts="assent.exe, assent-run.exe"
if [ -f "$src/assent-desktop.exe" ]; then
  desktop=1 parts+=", assent-desktop.exe (+ Start menu entry \"Assent\")"
else
  parts+="; no assent-desktop.exe in $src: desktop app and its Start menu entry left out"
fi
echo "== installer: packing $parts; Uninstall.exe and its Start menu entry"
makensis -V2 -DVERSION="$version" -DSRC="$src" -DOUT="$out" \
  -DCOMPRESSOR="${ASSENT_INSTALLER_COMPRESSOR:-off}" packaging/windows/assent.nsi
echo "built $out ($(du -h "$out" | cut -f1), $((SECONDS - started)) s)"

echo "== installer: under Wine, in a prefix of its own"
tmp=$(mktemp -d)
export WINEPREFIX=$tmp/prefix WINEDEBUG=-all
server=""
cleanup() {
  [ -n "$server" ] && kill -9 "$server" 2>/dev/null
  wineserver -k >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$WINEPREFIX"
wineserver -p >/dev/null 2>&1 # one Wine server for the run: each program then starts fast
wineboot -i >/dev/null 2>&1

passed=0 failed=0
check() { # check WHAT COMMAND...: one line, ok or FAIL (and then what the command said)
  local said
  if said=$("${@:2}" 2>&1); then
    echo "ok   $1"
    passed=$((passed + 1))
  else
    echo "FAIL $1"
    failed=$((failed + 1))
    [ -z "$said" ] || head -5 <<<"$said" | sed 's/^/     /'
  fi
}
win() { wine "$@" 2>/dev/null | tr -d '\r'; } # a Windows program's output, without its CRs
regval() { # regval KEY NAME: the value's data, or nothing (status 1) when it is not there
  win reg query "$1" /v "$2" | sed -n "s/^ *$2 *REG_[A-Z_]* *//p" | grep .
}
same() { [ "$1" = "$2" ] || { echo "  expected: $2" >&2; echo "  got:      $1" >&2; return 1; }; }
absent() { ! win reg query "$@"; }

appdata=$(win cmd /c echo %APPDATA%)
instdir_w="$(win cmd /c echo %LOCALAPPDATA%)\\Programs\\Assent"
instdir=$(winepath -u "$instdir_w")
startmenu=$(winepath -u "$appdata\\Microsoft\\Windows\\Start Menu\\Programs\\Assent")
home_w="$appdata\\assent" # the data folder Assent uses on Windows: the uninstaller must keep it
home=$(winepath -u "$home_w")
uninst='HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\Assent'
run='HKCU\Software\Microsoft\Windows\CurrentVersion\Run'
# A user PATH of one's own before the install (an entry to expand, a trailing ';'), to see the
# installer append to it and the uninstaller give it back byte for byte.
user_path='C:\tools;%USERPROFILE%\bin;'
wine reg add 'HKCU\Environment' /v Path /t REG_EXPAND_SZ /d "$user_path" /f >/dev/null 2>&1

t=$SECONDS rc=0
wine "$out" /S /START_AT_LOGIN=1 || rc=$?
check "silent install (/S /START_AT_LOGIN=1): exit $rc, $((SECONDS - t)) s" test $rc = 0
for f in assent.exe assent-run.exe Uninstall.exe; do check "installed $instdir_w\\$f" test -f "$instdir/$f"; done
if [ $desktop = 1 ]; then
  check "installed assent-desktop.exe" test -f "$instdir/assent-desktop.exe"
  check "Start menu: Assent.lnk" test -f "$startmenu/Assent.lnk"
  login="\"$instdir_w\\assent-desktop.exe\""
else
  check "no desktop app, so no Start menu entry for it" test ! -e "$startmenu/Assent.lnk"
  login="\"$instdir_w\\assent.exe\" serve"
fi
check "Start menu: Uninstall Assent.lnk" test -f "$startmenu/Uninstall Assent.lnk"
check "uninstall entry: DisplayName" same "$(regval "$uninst" DisplayName)" Assent
check "uninstall entry: DisplayVersion $version" same "$(regval "$uninst" DisplayVersion)" "$version"
check "uninstall entry: InstallLocation" same "$(regval "$uninst" InstallLocation)" "$instdir_w"
check "uninstall entry: QuietUninstallString" same "$(regval "$uninst" QuietUninstallString)" "\"$instdir_w\\Uninstall.exe\" /S"
for v in Publisher UninstallString NoModify NoRepair EstimatedSize; do check "uninstall entry: $v" regval "$uninst" $v; done
check "log-in entry (Run\\Assent): $login" same "$(regval "$run" Assent)" "$login"
aumid='HKCU\Software\Classes\AppUserModelId\dev.assent.inbox'
check "notifications' sender: DisplayName Assent" same "$(regval "$aumid" DisplayName)" Assent
check "notifications' sender: IconUri, installed" same "$(regval "$aumid" IconUri)" "$instdir_w\assent.ico"
check "installed assent.ico" test -s "$instdir/assent.ico"
check "PATH appended: $user_path;$instdir_w" same "$(regval 'HKCU\Environment' Path)" "$user_path;$instdir_w"

# Test only: Wine 8 lacks ProcessPrng (docs/platforms.md); the stand-in goes next to the
# installed program for this run, and is taken away before the uninstall. Never packaged.
x86_64-w64-mingw32-gcc -shared -o "$instdir/bcryptprimitives.dll" \
  tests/windows/bcryptprimitives.c tests/windows/bcryptprimitives.def -ladvapi32
exe=$instdir/assent.exe
check "installed assent.exe --version: assent $version" grep -q "^assent $version" <<<"$(win "$exe" --version)"

# The installed server on a free port, in the user's data folder; owner credential in a file
# (Wine has no real Credential Manager), as the black-box harness runs it.
export ASSENT_OWNER_CREDENTIAL=file
wine "$exe" --home "$home_w" serve --port 0 >"$tmp/serve.out" 2>"$tmp/serve.err" </dev/null &
server=$!
for _ in $(seq 60); do [ -s "$home/server.json" ] && break; sleep 1; done
check "installed server started (server.json in $home_w)" grep -q '"url": "http://127.0.0.1:' "$home/server.json"
check "installed server says it listens" grep -q "Assent is listening on http://127.0.0.1:" "$tmp/serve.out"
id=$(win "$exe" --home "$home_w" propose --tool installer_check --input '{"step":"installed"}' --title "installer check")
check "installed CLI: propose -> $id" grep -q '^p_' <<<"$id"
check "installed CLI: list --json shows it pending" grep -q "\"id\":\"$id\".*\"status\":\"pending\"" <<<"$(win "$exe" --home "$home_w" list --json)"
check "installed CLI: approve" win "$exe" --home "$home_w" approve "$id"
check "installed CLI: list --status approved" grep -q "\"id\":\"$id\"" <<<"$(win "$exe" --home "$home_w" list --status approved --json)"
kill "$server" 2>/dev/null || true
for _ in $(seq 10); do kill -0 "$server" 2>/dev/null || break; sleep 1; done
kill -9 "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
server=""
rm -f "$instdir/bcryptprimitives.dll"
data_before=$(cd "$home" && find . -type f | sort)

# Uninstall as "Apps & features" would (QuietUninstallString, no _?=): Uninstall.exe copies
# itself to %TEMP% and returns at once, so wait for the folder to go. (Its output to a file: a
# pipe would be held open by the copy, and by what Wine starts, long after it is done.)
t=$SECONDS rc=0
wine "$instdir/Uninstall.exe" /S >"$tmp/uninstall.out" 2>&1 || rc=$?
for _ in $(seq 120); do [ -e "$instdir" ] || break; sleep 0.5; done
check "silent uninstall (Uninstall.exe /S): exit $rc, $((SECONDS - t)) s" test $rc = 0
check "install folder gone" test ! -e "$instdir"
check "Start menu folder gone" test ! -e "$startmenu"
check "uninstall entry gone" absent "$uninst"
check "log-in entry gone" absent "$run" /v Assent
check "notifications' sender gone" absent "$aumid"
check "PATH given back as it was: $user_path" same "$(regval 'HKCU\Environment' Path)" "$user_path"
check "user data kept: $home_w ($(wc -l <<<"$data_before") files, as before)" same "$(cd "$home" && find . -type f | sort)" "$data_before"
check "user data kept: assent.db" test -s "$home/assent.db"

echo "== installer: took $((SECONDS - started)) s"
echo "installer: $passed checks passed, $failed failed"
[ "$failed" -eq 0 ]
