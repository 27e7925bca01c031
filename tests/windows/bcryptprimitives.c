/* For the tests under Wine only, never shipped: Wine 8 has no bcryptprimitives.dll, whose
 * ProcessPrng Rust's standard library calls for randomness on Windows 10 and later. This
 * stand-in, put next to assent.exe, answers it from RtlGenRandom (advapi32's SystemFunction036,
 * which Wine has). A real Windows has the real DLL and never loads this one. */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) { return RtlGenRandom(data, (ULONG)len); }
