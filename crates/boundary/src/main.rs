//! `assent-run`: what a client starts for each hook and each call a hook rewrote to run in a
//! box, built from `assent-boundary` alone. It starts in a fraction of the time the whole
//! `assent` takes (no allocator of its own, no async runtime, the hook's parser alone): it runs
//! the approved command from the ticket the hook left, answers a hook a rule decided at once,
//! and hands anything else to the `assent` beside it (`assent_boundary::run`).
//!
//! It starts without Rust's own start-up (its entry point is the C library's `main`): that reads
//! the process's memory map to place a guard for the main thread's stack and sets up an
//! alternate signal stack, 0.08 ms of the 2 a confined read may add. Nothing here needs them:
//! `std::env::args_os` works as ever (the C library hands the arguments over before `main`),
//! and the runner flushes what it wrote.

// Under `cargo test` the test harness is the entry point.
#![cfg_attr(not(test), no_main)]

/// The C library's entry point for this binary.
// `no_mangle` names this function `main` for the C library's start code: the only unsafe
// attribute in the binary, and nothing unsafe is done in it.
#[cfg(not(test))]
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: std::ffi::c_int, _argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    std::ffi::c_int::from(assent_boundary::run::main())
}
