//! The tray icon: the pending count at a glance, and Open / Quit.

use tauri::menu::{Menu, MenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Runtime};

const TRAY_ID: &str = "assent";

/// Adds the tray icon.
pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let open = MenuItem::with_id(app, "open", "Open Assent", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Assent", true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&open, &quit])?;
    let mut builder = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("Assent")
        .menu(&menu)
        .show_menu_on_left_click(false)
        .on_menu_event(|app, e| match e.id().as_ref() {
            "open" => crate::show_main(app),
            "quit" => app.exit(0),
            _ => {}
        })
        .on_tray_icon_event(|tray, e| {
            if let TrayIconEvent::Click { button: MouseButton::Left, button_state: MouseButtonState::Up, .. } = e {
                crate::show_main(tray.app_handle());
            }
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    builder.build(app)?;
    let handle = app.clone();
    tauri::async_runtime::spawn(async move { refresh(&handle).await });
    Ok(())
}

/// Updates the tray's tooltip and title with the pending count.
pub async fn refresh<R: Runtime>(app: &AppHandle<R>) {
    let Some(d) = app.try_state::<crate::Desktop>() else { return };
    let n = d.engine.pending_count().await.unwrap_or(0);
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let text = match n {
            0 => "Assent: nothing pending".to_string(),
            n => format!("Assent: {n} pending"),
        };
        let _ = tray.set_tooltip(Some(&text));
        let _ = tray.set_title(Some(if n == 0 { String::new() } else { n.to_string() }));
    }
}
