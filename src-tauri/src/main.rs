//! The Assent desktop app.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    software_rendering();
    assent_desktop::run();
}

/// Asks WebKitGTK to draw the window on the CPU, unless the person asked for the GPU
/// (`ASSENT_GPU=1`) or set WebKit's own switch. An inbox of lists and diffs gains nothing
/// from GPU compositing, which costs about 80 MB in the page's process (the GL buffers, with
/// Mesa's software GL where there is no GPU) and a slower first paint, and is behind the
/// blank windows some GPU drivers show with WebKitGTK.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn software_rendering() {
    const SWITCH: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
    if std::env::var_os(SWITCH).is_some() || std::env::var_os("ASSENT_GPU").is_some_and(|v| v == "1") {
        return;
    }
    // SAFETY: the first statement of `main`, before anything could start a thread that reads
    // the environment; WebKit reads it when the window is made.
    unsafe { std::env::set_var(SWITCH, "1") };
}

#[cfg(not(target_os = "linux"))]
fn software_rendering() {}
