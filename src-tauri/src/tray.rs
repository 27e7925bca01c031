//! The tray icon: the pending count at a glance, Open inbox, Pause notifications for an hour,
//! and Quit (which says first how many agents are waiting, since quitting leaves them without
//! an answer until Assent runs again).

use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Emitter, Manager, Runtime};

const TRAY_ID: &str = "assent";

/// How long "Pause notifications" lasts.
const PAUSE: std::time::Duration = std::time::Duration::from_secs(3600);

/// The menu items whose text follows the state.
struct Items<R: Runtime> {
    status: MenuItem<R>,
    pause: MenuItem<R>,
    /// "Resume notifications (paused until 14:05)", written once when paused.
    resume_label: std::sync::Mutex<String>,
}

/// Adds the tray icon.
pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let status = MenuItem::with_id(app, "status", "Nothing pending", false, None::<&str>)?;
    let open = MenuItem::with_id(app, "open", "Open inbox", true, None::<&str>)?;
    let pause = MenuItem::with_id(app, "pause", "Pause notifications for 1 hour", true, None::<&str>)?;
    let quit_item = MenuItem::with_id(app, "quit", "Quit Assent", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &status,
            &PredefinedMenuItem::separator(app)?,
            &open,
            &pause,
            &PredefinedMenuItem::separator(app)?,
            &quit_item,
        ],
    )?;
    app.manage(Items { status, pause, resume_label: Default::default() });
    let mut builder = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("Assent")
        .menu(&menu)
        .show_menu_on_left_click(false)
        .on_menu_event(|app, e| match e.id().as_ref() {
            "open" => crate::show_main(app),
            "pause" => toggle_pause(app),
            "quit" => quit(app),
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

/// Pauses notifications for an hour, or resumes them.
fn toggle_pause<R: Runtime>(app: &AppHandle<R>) {
    let Some(d) = app.try_state::<crate::Desktop>() else { return };
    if d.pause.until().is_some() {
        d.pause.resume();
        tracing::info!("notifications resumed from the tray");
    } else {
        d.pause.pause_for(PAUSE);
        tracing::info!("notifications paused for an hour from the tray");
        if let (Some(items), Some(until)) = (app.try_state::<Items<R>>(), d.pause.until()) {
            let label = format!("Resume notifications (paused until {})", local_hhmm(until.0));
            *items.resume_label.lock().unwrap_or_else(|e| e.into_inner()) = label;
        }
        // The menu says so until the hour is over.
        let handle = app.clone();
        tauri::async_runtime::spawn(async move {
            tokio::time::sleep(PAUSE + std::time::Duration::from_secs(1)).await;
            refresh(&handle).await;
        });
    }
    let handle = app.clone();
    tauri::async_runtime::spawn(async move { refresh(&handle).await });
}

/// Quits, unless agents are waiting: then the window asks first (it answers with `quit_app`).
fn quit<R: Runtime>(app: &AppHandle<R>) {
    let Some(d) = app.try_state::<crate::Desktop>() else {
        app.exit(0);
        return;
    };
    let waiting = d.engine.agents_waiting();
    if waiting == 0 {
        tracing::info!("quit from the tray");
        app.exit(0);
        return;
    }
    let engine = d.engine.clone();
    let handle = app.clone();
    tauri::async_runtime::spawn(async move {
        let pending = engine.pending_count().await.unwrap_or(0);
        crate::show_main(&handle);
        let _ = handle.emit("assent://quit-requested", &serde_json::json!({ "waiting": waiting, "pending": pending }));
    });
}

/// Updates the tray's tooltip, title and menu with the pending count and the pause.
pub async fn refresh<R: Runtime>(app: &AppHandle<R>) {
    let Some(d) = app.try_state::<crate::Desktop>() else { return };
    let n = d.engine.pending_count().await.unwrap_or(0);
    let text = match n {
        0 => "Nothing pending".to_string(),
        1 => "1 proposal pending".to_string(),
        n => format!("{n} proposals pending"),
    };
    let pause = match d.pause.until() {
        Some(_) => {
            app.try_state::<Items<R>>().map(|i| i.resume_label.lock().unwrap_or_else(|e| e.into_inner()).clone())
        }
        None => Some("Pause notifications for 1 hour".to_string()),
    };
    // Menus and the tray belong to the main thread; asking it from here and waiting would hold
    // a runtime thread (and the tasks queued behind it, the window's events among them) until
    // the main thread gets to it. So the change is sent over and not waited for.
    let handle = app.clone();
    let _ = app.run_on_main_thread(move || {
        if let Some(tray) = handle.tray_by_id(TRAY_ID) {
            let _ = tray.set_tooltip(Some(&format!("Assent: {}", text.to_lowercase())));
            let _ = tray.set_title(Some(if n == 0 { String::new() } else { n.to_string() }));
        }
        if let Some(items) = handle.try_state::<Items<R>>() {
            let _ = items.status.set_text(&text);
            if let Some(p) = pause {
                let _ = items.pause.set_text(p);
            }
        }
    });
}

/// Hours and minutes of a time, in the machine's time zone when it can be read (UTC otherwise).
fn local_hhmm(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let offset = local_offset_secs(secs);
    let day = (secs + offset).rem_euclid(86_400);
    format!("{:02}:{:02}", day / 3600, (day % 3600) / 60)
}

/// The local time zone's offset from UTC at `secs`, from `date` (no time zone database is
/// linked for one menu label).
fn local_offset_secs(secs: i64) -> i64 {
    let out = std::process::Command::new("date").args(["-d", &format!("@{secs}"), "+%z"]).output();
    let Ok(out) = out else { return 0 };
    let z = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let (sign, digits) = match z.split_at_checked(1) {
        Some(("-", d)) => (-1, d),
        Some(("+", d)) => (1, d),
        _ => return 0,
    };
    match (digits.get(0..2).and_then(|h| h.parse::<i64>().ok()), digits.get(2..4).and_then(|m| m.parse::<i64>().ok())) {
        (Some(h), Some(m)) => sign * (h * 3600 + m * 60),
        _ => 0,
    }
}
