//! # assent-desktop
//!
//! The desktop app: a Tauri 2 shell around the same engine and loopback API as `assent
//! serve`, hosted in-process, so starting the app is all a person does.
//!
//! - [`run`] starts the engine and the API ([`assent_host::start::start`]) on a thread of its
//!   own while Tauri starts, puts the engine in Tauri's state, makes the window with the first
//!   page of the inbox, forwards every engine event to the window (`assent://event`), starts
//!   the tray and the notifications once that page is on screen, keeps the tray's pending
//!   count, and keeps running in the tray when the window is closed. A second launch focuses
//!   the first (single instance).
//! - [`commands`] are the window's only way in: a few lines each, calling the engine with the
//!   channel `app`. The capability in `capabilities/main.json` allows exactly these.

pub mod commands;
mod tray;

use assent_core::Engine;
use assent_host::home::Home;
use assent_host::start::OwnerWhere;
use serde_json::json;
use tauri::{Emitter, Manager, RunEvent, WindowEvent};

/// What the commands reach.
pub struct Desktop {
    /// The engine.
    pub engine: Engine,
    /// The settings page's facts.
    pub info: serde_json::Value,
    /// Whether desktop notifications work (known shortly after start).
    pub notifications: std::sync::Arc<std::sync::Mutex<String>>,
    /// When the process started.
    pub started: std::time::Instant,
    /// Whether the front end said its first page is on screen.
    pub ready: std::sync::atomic::AtomicBool,
    /// How long the store took to answer the first page handed to the window with its document.
    pub first_page_query: std::time::Duration,
    /// Told when the first page is on screen: the tray and the notifications start then.
    pub painted: tokio::sync::Notify,
    /// "Pause notifications" from the tray.
    pub pause: assent_notify::Pause,
    /// The remote listener (answering from a phone).
    pub remote: assent_remote::Remote,
}

/// The argument a start at login passes: open in the tray, without the window.
pub const AUTOSTART_FLAG: &str = "--autostart";

/// Opens the window on a proposal when a notification asks.
struct WindowHost(tauri::AppHandle);

impl assent_notify::Host for WindowHost {
    fn open(&self, id: Option<&str>) {
        show_main(&self.0);
        if let Some(id) = id {
            let _ = self.0.emit("assent://open", &json!({ "id": id }));
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ASSENT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour only for a person at a terminal: an MCP client or a hook runner passes stderr
        // on to a log or another terminal, where escape codes are noise.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none())
        // A log that cannot be written (a full disk) is dropped, never a panic.
        .log_internal_errors(false)
        .try_init();
}

/// Shows and focuses the main window.
pub fn show_main<R: tauri::Runtime>(app: &tauri::AppHandle<R>) {
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.show();
        let _ = w.unminimize();
        let _ = w.set_focus();
    }
}

/// Proposals in the inbox's first page (the front end asks for as many).
const FIRST_PAGE: u32 = 100;

/// The engine started, with what the window shows first.
struct Started {
    running: assent_host::start::Running,
    info: serde_json::Value,
    /// The inbox's first page as JSON, handed to the window with its document.
    first_page: Option<String>,
    /// How long the store took to answer it.
    first_page_query: std::time::Duration,
}

/// Starts the engine and the API on `home` and reads the inbox's first page.
async fn start_engine(home: Home) -> anyhow::Result<Started> {
    let running = assent_host::start::start(home, Default::default()).await?;
    let info = json!({
        "version": assent_host::VERSION,
        "commit": assent_host::COMMIT,
        "home": running.home.dir.display().to_string(),
        "api_url": format!("{}/v1", running.url),
        "owner_credential": match running.owner_location {
            OwnerWhere::Keychain => "keychain",
            OwnerWhere::File => "file",
        },
        "kinds": running.engine.kinds().names(),
        "limits": {
            "default_expires_in": running.config.default_expires_in,
            "max_pending_per_agent": running.config.max_pending_per_agent,
            "max_waits_per_agent": running.config.max_waits_per_agent,
        },
    });
    // The inbox's first page goes to the window with its document, so the first paint needs no
    // round trip through IPC (WebKit answers the first few slowly while it lays the page out).
    let asked = std::time::Instant::now();
    let query = assent_core::store::ListQuery { limit: FIRST_PAGE, ..Default::default() };
    let first_page = running
        .engine
        .list(&assent_core::Principal::Owner, query, None)
        .await
        .ok()
        .and_then(|p| serde_json::to_string(&p).ok());
    Ok(Started { running, info, first_page, first_page_query: asked.elapsed() })
}

/// The engine, held by one owner at a time: the thread starting it, then the window's set-up
/// (which waits for the start), then the app's exit or a failure of Tauri's start (which stop it).
enum EngineSlot {
    /// Starting on its own thread.
    Starting(std::thread::JoinHandle<anyhow::Result<Started>>),
    /// Started and taken by the window's set-up: stopped at exit.
    Running(assent_host::start::Running),
    /// Stopped, being stopped, or its start failed.
    Gone,
}

type Slot = std::sync::Arc<std::sync::Mutex<EngineSlot>>;

fn take(slot: &Slot) -> EngineSlot {
    std::mem::replace(&mut *slot.lock().unwrap_or_else(|e| e.into_inner()), EngineSlot::Gone)
}

/// Stops whatever of the engine and its API started, waiting for a start under way.
fn stop_engine(slot: &Slot) {
    let running = match take(slot) {
        EngineSlot::Starting(t) => t.join().ok().and_then(Result::ok).map(|s| s.running),
        EngineSlot::Running(r) => Some(r),
        EngineSlot::Gone => None,
    };
    if let Some(r) = running {
        tauri::async_runtime::block_on(r.stop());
    }
}

/// Makes the main window (from its entry in `tauri.conf.json`, which Tauri does not create
/// itself), with the first page of the inbox as `window.__ASSENT_FIRST_PAGE__` before its
/// scripts run. The front end renders it at once and then asks for a fresh page, so nothing
/// that changed meanwhile is missed.
fn main_window<R: tauri::Runtime>(app: &tauri::AppHandle<R>, first_page: Option<String>) -> tauri::Result<()> {
    let config = app.config().app.windows.iter().find(|w| w.label == "main").cloned().unwrap_or_default();
    let mut builder = tauri::WebviewWindowBuilder::from_config(app, &config)?;
    if let Some(json) = first_page {
        builder = builder.initialization_script(format!("window.__ASSENT_FIRST_PAGE__ = {json};"));
    }
    builder.build()?;
    Ok(())
}

/// Says why the app cannot start (with its causes) and exits.
fn fail(e: &dyn std::fmt::Display) -> ! {
    eprintln!("assent: {e:#}");
    std::process::exit(1)
}

/// The tray and the notifications, started once the window has painted (which does not need
/// them) or after a few seconds; at once when the window stays hidden.
fn after_first_paint(
    app: &tauri::AppHandle,
    engine: assent_core::Engine,
    pause: assent_notify::Pause,
    notes: std::sync::Arc<std::sync::Mutex<String>>,
    hidden: bool,
    started: std::time::Instant,
) {
    let handle = app.clone();
    let host = std::sync::Arc::new(WindowHost(app.clone()));
    tauri::async_runtime::spawn(async move {
        if !hidden {
            let d = handle.state::<Desktop>();
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), d.painted.notified()).await;
        }
        let h = handle.clone();
        let _ = handle.run_on_main_thread(move || {
            if let Err(e) = tray::install(&h) {
                tracing::warn!(error = %e, "no tray icon");
            }
            tracing::debug!(ms = started.elapsed().as_millis() as u64, "tray ready");
        });
        let opts = assent_notify::Options { pause, ..Default::default() };
        let a = assent_notify::start(engine, host, opts).await;
        *notes.lock().unwrap_or_else(|e| e.into_inner()) = a.describe();
    });
}

/// Hands the engine's events to the window (`assent://event`), and refreshes the tray's count
/// as they come.
fn forward_events(app: tauri::AppHandle, engine: &assent_core::Engine) {
    let handle = app.clone();
    let mut events = engine.subscribe();
    let changed = std::sync::Arc::new(tokio::sync::Notify::new());
    let poke = changed.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            match events.recv().await {
                Ok(e) => {
                    let sent = handle.emit("assent://event", &e);
                    tracing::debug!(ok = sent.is_ok(), "event to the window");
                    poke.notify_one();
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    let _ = handle.emit("assent://event", &json!({"type": "lagged"}));
                    poke.notify_one();
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    });
    // The tray count follows changes, at most a few times a second.
    let handle = app;
    tauri::async_runtime::spawn(async move {
        loop {
            changed.notified().await;
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            tray::refresh(&handle).await;
        }
    });
}

/// Runs the app until the person quits it from the tray.
pub fn run() {
    let started = std::time::Instant::now();
    init_tracing();
    assent_host::install_tls_provider();
    let home = match Home::resolve(std::env::var_os("ASSENT_HOME").map(Into::into)) {
        Ok(h) => h,
        Err(e) => fail(&e),
    };
    // The engine starts on its own thread while this one starts the window system and Tauri;
    // the window is made once both are done.
    let starting = std::thread::spawn(move || tauri::async_runtime::block_on(start_engine(home)));
    let slot: Slot = std::sync::Arc::new(std::sync::Mutex::new(EngineSlot::Starting(starting)));
    let for_setup = slot.clone();
    let notifications = std::sync::Arc::new(std::sync::Mutex::new("starting".to_string()));
    let notes = notifications.clone();
    let pause = assent_notify::Pause::default();
    // Started at login: the engine runs and the window stays in the tray until asked for.
    let hidden = std::env::args().any(|a| a == AUTOSTART_FLAG);

    let app = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| show_main(app)))
        .plugin(tauri_plugin_autostart::Builder::new().args([AUTOSTART_FLAG]).build())
        .invoke_handler(tauri::generate_handler![
            commands::list_proposals,
            commands::get_proposal,
            commands::decide,
            commands::decide_batch,
            commands::decide_group,
            commands::retry,
            commands::list_agents,
            commands::add_agent,
            commands::revoke_agent,
            commands::list_credentials,
            commands::add_credential,
            commands::remove_credential,
            commands::app_info,
            commands::ui_ready,
            commands::pending_count,
            commands::similar_rule,
            commands::list_rules,
            commands::add_rule,
            commands::remove_rule,
            commands::get_autostart,
            commands::set_autostart,
            commands::quit_app,
            commands::remote_status,
            commands::remote_enable,
            commands::remote_disable,
            commands::remote_pair,
            commands::remote_devices,
            commands::remote_revoke,
        ])
        .setup(move |app| {
            tracing::debug!(ms = started.elapsed().as_millis() as u64, "setting up");
            let start = match take(&for_setup) {
                EngineSlot::Starting(t) => t.join().map_err(|_| anyhow::anyhow!("the engine failed to start")),
                _ => Err(anyhow::anyhow!("the engine failed to start")),
            };
            let Started { running, info, first_page, first_page_query } = match start.and_then(|r| r) {
                Ok(s) => s,
                Err(e) => fail(&e),
            };
            let engine = running.engine.clone();
            let remote = running.remote.clone();
            *for_setup.lock().unwrap_or_else(|e| e.into_inner()) = EngineSlot::Running(running);
            app.manage(Desktop {
                engine: engine.clone(),
                info,
                notifications,
                started,
                ready: false.into(),
                first_page_query,
                painted: Default::default(),
                pause: pause.clone(),
                remote,
            });
            main_window(app.handle(), first_page)?;
            if !hidden {
                show_main(app.handle());
            }
            tracing::debug!(ms = started.elapsed().as_millis() as u64, "window made");
            after_first_paint(app.handle(), engine.clone(), pause.clone(), notes.clone(), hidden, started);
            forward_events(app.handle().clone(), &engine);
            Ok(())
        })
        .on_page_load(move |_, payload| {
            tracing::debug!(ms = started.elapsed().as_millis() as u64, event = ?payload.event(), "page load");
        })
        .on_window_event(|window, event| {
            // Closing the window keeps Assent running in the tray: agents may still propose.
            if let WindowEvent::CloseRequested { api, .. } = event {
                let _ = window.hide();
                api.prevent_close();
            }
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(a) => a,
        Err(e) => {
            eprintln!("assent: cannot start the desktop app: {e}");
            // The engine started (or is starting) whether or not the window's set-up took it.
            stop_engine(&slot);
            std::process::exit(1);
        }
    };
    app.run(move |_app, event| match event {
        RunEvent::ExitRequested { api, code, .. } if code.is_none() => api.prevent_exit(),
        RunEvent::Exit => stop_engine(&slot),
        _ => {}
    });
}
