//! The Assent desktop app.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    assent_desktop::run();
}
