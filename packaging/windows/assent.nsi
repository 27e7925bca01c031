; Assent's Windows installer (NSIS 3, Unicode, 64-bit), for the current user alone: no
; administrator rights asked, nothing written outside the user's profile and HKCU.
;
;   makensis -DVERSION=0.1.0 -DSRC=$PWD/target/x86_64-pc-windows-gnu/release \
;     [-DOUT=$PWD/assent-setup.exe] packaging/windows/assent.nsi
;
; (`/D...` on Windows.) SRC and OUT absolute: makensis works from this file's folder. SRC holds assent.exe and assent-run.exe, and assent-desktop.exe when the
; desktop app was built: it is packed, with its Start menu entry, only if the file is there.
; scripts/windows-installer.sh builds it and tries it under Wine.
;
; What it installs, all undone by Uninstall.exe (the user's data, %APPDATA%\assent, is never
; touched: uninstalling a program is not deleting its history):
;   - $LOCALAPPDATA\Programs\Assent: the programs and Uninstall.exe
;   - Start menu\Programs\Assent: "Assent" (the desktop app, if packed), "Uninstall Assent"
;   - the install folder appended to the user's PATH (HKCU\Environment), so `assent` works
;     in a new terminal
;   - the "Apps & features" entry (HKCU\...\Uninstall\Assent)
;   - optional, off by default: "Start Assent when you log in" (HKCU\...\Run, value "Assent")
;   - the app's identity for its notifications (HKCU\Software\Classes\AppUserModelId\
;     dev.assent.inbox: its name and icon), so a toast shows as "Assent" with Assent's icon
;
; Command line (silent installs):
;   setup.exe /S                      install with the defaults
;   setup.exe /S /START_AT_LOGIN=1    ... and start Assent at log-in (=0: do not; an upgrade
;                                     otherwise keeps the choice made before)
;   setup.exe /S /D=C:\Some\Folder    another folder (/D= must come last, as NSIS wants)
;   Uninstall.exe /S                  uninstall silently

; The programs are x86-64, so is the installer (and it then sees the 64-bit registry view).
Target amd64-unicode

!ifndef VERSION
  !error "the version is needed: makensis -DVERSION=x.y.z ..."
!endif
!ifndef SRC
  !error "the folder of the built programs is needed: makensis -DSRC=DIR ..."
!endif
!define /ifndef OUT "assent-setup-${VERSION}.exe"

; The desktop app is optional: packed when it was built.
!if /FileExists "${SRC}/assent-desktop.exe"
  !define HAVE_DESKTOP
  !echo "packing the desktop app: ${SRC}/assent-desktop.exe"
!else
  !echo "no ${SRC}/assent-desktop.exe: packing the engine and the command alone"
!endif

!define PRODUCT "Assent"
!define PUBLISHER "The Assent developers"
!define UNINST_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Assent"
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"
!define ENV_KEY "Environment"
; The id the toasts are shown under (crates/notify/src/windows.rs, APP_ID; tauri.conf.json's
; identifier). An unpackaged app's toasts take their name and icon from this key.
!define AUMID_KEY "Software\Classes\AppUserModelId\dev.assent.inbox"
; makensis works from this file's folder (hence SRC given absolute).
!define ICON "../../icons/icon.ico"
; What the Run value runs: the desktop app (tray, notifications), else the headless server.
; (`assent.exe serve` is a console program: it shows a console window while it runs.)
!ifdef HAVE_DESKTOP
  !define LOGIN_COMMAND '"$INSTDIR\assent-desktop.exe"'
!else
  !define LOGIN_COMMAND '"$INSTDIR\assent.exe" serve'
!endif

Name "${PRODUCT}"
OutFile "${OUT}"
; Per-user, as the Tauri settings (installMode currentUser): no UAC prompt.
RequestExecutionLevel user
InstallDir "$LOCALAPPDATA\Programs\Assent"
; An upgrade goes where the previous install went.
InstallDirRegKey HKCU "${UNINST_KEY}" "InstallLocation"
; Best ratio by default; -DCOMPRESSOR=zlib packs in seconds, and -DCOMPRESSOR=off stores the
; programs as they are (the test run's choice: it installs a debug build once and removes it).
!define /ifndef COMPRESSOR "/SOLID lzma"
!if "${COMPRESSOR}" == "off"
SetCompress off
!else
SetCompressor ${COMPRESSOR}
!endif
ManifestDPIAware true
ShowInstDetails show
ShowUninstDetails show
BrandingText "${PRODUCT} ${VERSION}"

; Version resource: Windows wants four numbers; "0.1.0-rc.1" gives 0.1.0.0.
!searchparse /noerrors "${VERSION}.." "" V_MAJOR "." V_MINOR "." V_REST
!searchparse /noerrors "${V_REST}-." "" V_PATCH "-"
!searchparse /noerrors "${V_PATCH}." "" V_PATCH "."
VIProductVersion "${V_MAJOR}.${V_MINOR}.${V_PATCH}.0"
VIAddVersionKey "ProductName" "${PRODUCT}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "${PRODUCT} installer"
VIAddVersionKey "CompanyName" "${PUBLISHER}"
VIAddVersionKey "LegalCopyright" "${PUBLISHER}, Apache-2.0"

!include MUI2.nsh
!include LogicLib.nsh
!include FileFunc.nsh
!include Sections.nsh
!include WinMessages.nsh

!define MUI_ICON "${ICON}"
!define MUI_UNICON "${ICON}"
!define MUI_ABORTWARNING
!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!ifdef HAVE_DESKTOP
  !define MUI_FINISHPAGE_RUN "$INSTDIR\assent-desktop.exe"
  !define MUI_FINISHPAGE_RUN_TEXT "Open Assent"
!endif
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; ---------------------------------------------------------------------------------------------
; PATH. NSIS strings hold NSIS_MAX_STRLEN (1024) characters: a longer PATH would come back
; truncated, and writing it back would lose the user's entries. So a PATH too long to handle
; whole is never written: the installer says so and leaves it (the user adds the folder).
; The entry added is recorded in the uninstall key (PathEntry; PathCreated when there was no
; Path value before), so the uninstaller takes out that entry alone, where it now is, and leaves
; every other byte of the value as it finds it.

; PathFind: pushes the position of ";ENTRY;" in ";PATH;" (NSIS compares without case, as
; Windows compares paths), or -1. Stack in: PATH, ENTRY (ENTRY on top).
!macro PATH_FIND un
Function ${un}PathFind
  Exch $R0 ; entry
  Exch
  Exch $R1 ; path
  Push $R2
  Push $R3
  Push $R4
  Push $R5
  StrCpy $R1 ";$R1;"
  StrCpy $R0 ";$R0;"
  StrLen $R2 $R0
  StrLen $R3 $R1
  IntOp $R3 $R3 - $R2 ; the last position the entry can start at
  StrCpy $R4 0
  ${Do}
    ${If} $R4 > $R3
      StrCpy $R4 -1
      ${Break}
    ${EndIf}
    StrCpy $R5 $R1 $R2 $R4
    ${IfThen} $R5 == $R0 ${|} ${Break} ${|}
    IntOp $R4 $R4 + 1
  ${Loop}
  StrCpy $R0 $R4
  Pop $R5
  Pop $R4
  Pop $R3
  Pop $R2
  Pop $R1
  Exch $R0
FunctionEnd
!macroend
!insertmacro PATH_FIND ""
!insertmacro PATH_FIND "un."

; PathValueExists: pushes 1 when HKCU\Environment has a value named Path (whatever its case),
; else 0: a failed ReadRegStr is either "no value" or "too long to read", to be told apart.
!macro PATH_EXISTS un
Function ${un}PathValueExists
  Push $R0
  Push $R1
  StrCpy $R0 0
  ${Do}
    ClearErrors
    EnumRegValue $R1 HKCU "${ENV_KEY}" $R0
    ${If} ${Errors}
    ${OrIf} $R1 == ""
      StrCpy $R0 0
      ${Break}
    ${EndIf}
    ${If} $R1 == "Path"
      StrCpy $R0 1
      ${Break}
    ${EndIf}
    IntOp $R0 $R0 + 1
  ${Loop}
  Pop $R1
  Exch $R0
FunctionEnd
!macroend
!insertmacro PATH_EXISTS ""
!insertmacro PATH_EXISTS "un."

; Tells running programs (Explorer, so new terminals) that the environment changed.
!macro BROADCAST_ENV
  SendMessage ${HWND_BROADCAST} ${WM_SETTINGCHANGE} 0 "STR:Environment" /TIMEOUT=5000
!macroend

Function AddToPath
  ClearErrors
  ReadRegStr $0 HKCU "${ENV_KEY}" "Path"
  StrCpy $3 0 ; 1: there was no Path value
  ${If} ${Errors}
    Call PathValueExists
    Pop $1
    ${If} $1 == 1
      DetailPrint "PATH not changed: too long (or not text) to edit safely; add $INSTDIR to it by hand"
      Return
    ${EndIf}
    StrCpy $0 ""
    StrCpy $3 1
  ${EndIf}
  ; Already there (an upgrade, or the user's own): nothing to add, nothing recorded anew.
  Push $0
  Push $INSTDIR
  Call PathFind
  Pop $1
  ${If} $1 >= 0
    DetailPrint "PATH already holds $INSTDIR"
    Return
  ${EndIf}
  ; Room for PATH;INSTDIR and, for the uninstaller, the two ';' it puts around it.
  StrLen $1 $0
  StrLen $2 $INSTDIR
  IntOp $1 $1 + $2
  IntOp $1 $1 + 4
  ${If} $1 >= ${NSIS_MAX_STRLEN}
    DetailPrint "PATH not changed: too long to edit safely; add $INSTDIR to it by hand"
    Return
  ${EndIf}
  ${If} $0 == ""
    StrCpy $0 "$INSTDIR"
  ${Else}
    StrCpy $0 "$0;$INSTDIR"
  ${EndIf}
  ; REG_EXPAND_SZ, as Windows keeps the user's Path (entries such as %USERPROFILE%\bin).
  WriteRegExpandStr HKCU "${ENV_KEY}" "Path" $0
  WriteRegStr HKCU "${UNINST_KEY}" "PathEntry" "$INSTDIR"
  WriteRegDWORD HKCU "${UNINST_KEY}" "PathCreated" $3
  DetailPrint "added $INSTDIR to PATH"
  !insertmacro BROADCAST_ENV
FunctionEnd

Function un.RemoveFromPath
  ReadRegStr $2 HKCU "${UNINST_KEY}" "PathEntry"
  ${IfThen} $2 == "" ${|} Return ${|} ; the installer added none
  ReadRegDWORD $3 HKCU "${UNINST_KEY}" "PathCreated"
  ClearErrors
  ReadRegStr $0 HKCU "${ENV_KEY}" "Path"
  ${If} ${Errors}
    Call un.PathValueExists
    Pop $1
    ${If} $1 == 1
      DetailPrint "PATH not changed: too long to edit safely; take $2 out of it by hand"
    ${EndIf}
    Return
  ${EndIf}
  StrLen $1 $0
  IntOp $1 $1 + 2
  ${If} $1 >= ${NSIS_MAX_STRLEN}
    DetailPrint "PATH not changed: too long to edit safely; take $2 out of it by hand"
    Return
  ${EndIf}
  Push $0
  Push $2
  Call un.PathFind
  Pop $1
  ${IfThen} $1 < 0 ${|} Return ${|} ; the user took it out already
  ; In ";PATH;", the entry is ";ENTRY;" at $1: keep what is before it and, from its closing ';'
  ; on, what is after; then drop the two ';' added around PATH.
  StrCpy $0 ";$0;"
  ${If} $1 == 0
    StrCpy $4 ""
  ${Else}
    StrCpy $4 $0 $1
  ${EndIf}
  StrLen $5 $2
  IntOp $5 $5 + $1
  IntOp $5 $5 + 1
  StrCpy $5 $0 "" $5
  StrCpy $0 "$4$5"
  StrCpy $0 $0 "" 1
  StrCpy $0 $0 -1
  ${If} $0 == ""
  ${AndIf} $3 == 1
    DeleteRegValue HKCU "${ENV_KEY}" "Path" ; there was none before
  ${Else}
    WriteRegExpandStr HKCU "${ENV_KEY}" "Path" $0
  ${EndIf}
  DetailPrint "took $2 out of PATH"
  !insertmacro BROADCAST_ENV
FunctionEnd

; ---------------------------------------------------------------------------------------------
Section "Assent (required)" SecMain
  SectionIn RO
  SetOutPath "$INSTDIR"
  File "${SRC}/assent.exe"
  File "${SRC}/assent-run.exe"
  File "/oname=assent.ico" "${ICON}"
!ifdef HAVE_DESKTOP
  File "${SRC}/assent-desktop.exe"
!endif
  WriteUninstaller "$INSTDIR\Uninstall.exe"

  CreateDirectory "$SMPROGRAMS\Assent"
!ifdef HAVE_DESKTOP
  CreateShortcut "$SMPROGRAMS\Assent\Assent.lnk" "$INSTDIR\assent-desktop.exe"
!endif
  CreateShortcut "$SMPROGRAMS\Assent\Uninstall Assent.lnk" "$INSTDIR\Uninstall.exe"

  ; "Apps & features" (per-user entries live under HKCU).
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayName" "${PRODUCT}"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINST_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr HKCU "${UNINST_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINST_KEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKCU "${UNINST_KEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
!ifdef HAVE_DESKTOP
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayIcon" "$INSTDIR\assent-desktop.exe"
!else
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayIcon" "$INSTDIR\Uninstall.exe"
!endif
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2 ; KB, as EstimatedSize wants
  WriteRegDWORD HKCU "${UNINST_KEY}" "EstimatedSize" $0

  ; The notifications' sender: "Assent", with its icon.
  WriteRegStr HKCU "${AUMID_KEY}" "DisplayName" "${PRODUCT}"
  WriteRegStr HKCU "${AUMID_KEY}" "IconUri" "$INSTDIR\assent.ico"

  Call AddToPath
SectionEnd

Section /o "Start Assent when you log in" SecLogin
  WriteRegStr HKCU "${RUN_KEY}" "Assent" '${LOGIN_COMMAND}'
SectionEnd

; Hidden, last: the log-in entry unticked on an upgrade is taken out again.
Section "-login off"
  ${IfNot} ${SectionIsSelected} ${SecLogin}
    DeleteRegValue HKCU "${RUN_KEY}" "Assent"
  ${EndIf}
SectionEnd

!insertmacro MUI_FUNCTION_DESCRIPTION_BEGIN
  !insertmacro MUI_DESCRIPTION_TEXT ${SecMain} "The assent command, its helper assent-run and, if built, the desktop app; the folder added to your PATH."
  !insertmacro MUI_DESCRIPTION_TEXT ${SecLogin} "Start Assent each time you log in to Windows."
!insertmacro MUI_FUNCTION_DESCRIPTION_END

Function .onInit
  SetShellVarContext current
  ; An upgrade keeps the log-in choice made before.
  ReadRegStr $0 HKCU "${RUN_KEY}" "Assent"
  ${If} $0 == '${LOGIN_COMMAND}'
    !insertmacro SelectSection ${SecLogin}
  ${EndIf}
  ; /START_AT_LOGIN=1 (or 0) decides it, for silent installs above all.
  ${GetParameters} $0
  ClearErrors
  ${GetOptions} $0 "/START_AT_LOGIN=" $1
  ${IfNot} ${Errors}
    ${If} $1 == "1"
      !insertmacro SelectSection ${SecLogin}
    ${Else}
      !insertmacro UnselectSection ${SecLogin}
    ${EndIf}
  ${EndIf}
FunctionEnd

; ---------------------------------------------------------------------------------------------
; The uninstaller: what the installer wrote, named one by one. RMDir without /r, so a folder
; the user put files in stays with them. Never %APPDATA%\assent (the user's proposals, rules,
; receipts and keys).
Function un.onInit
  SetShellVarContext current
FunctionEnd

Section "Uninstall"
  Delete "$INSTDIR\assent.exe"
  Delete "$INSTDIR\assent-run.exe"
  Delete "$INSTDIR\assent.ico"
  ; Named whether or not this build packed it: an earlier version may have.
  Delete "$INSTDIR\assent-desktop.exe"
  Delete "$INSTDIR\Uninstall.exe"
  RMDir "$INSTDIR"

  Delete "$SMPROGRAMS\Assent\Assent.lnk"
  Delete "$SMPROGRAMS\Assent\Uninstall Assent.lnk"
  RMDir "$SMPROGRAMS\Assent"

  ; The log-in entry, only if it is still the one an installer wrote.
  ReadRegStr $0 HKCU "${RUN_KEY}" "Assent"
  ${If} $0 == '"$INSTDIR\assent-desktop.exe"'
  ${OrIf} $0 == '"$INSTDIR\assent.exe" serve'
    DeleteRegValue HKCU "${RUN_KEY}" "Assent"
  ${EndIf}

  DeleteRegKey HKCU "${AUMID_KEY}"
  Call un.RemoveFromPath ; reads the uninstall key: before it goes
  DeleteRegKey HKCU "${UNINST_KEY}"
SectionEnd
