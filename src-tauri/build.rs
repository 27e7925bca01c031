//! Declares the app's commands so that only those listed in the capability are callable.

fn main() {
    let commands = &[
        "list_proposals",
        "get_proposal",
        "decide",
        "decide_batch",
        "decide_group",
        "retry",
        "list_agents",
        "add_agent",
        "revoke_agent",
        "list_credentials",
        "add_credential",
        "remove_credential",
        "app_info",
        "ui_ready",
        "pending_count",
        "similar_rule",
        "list_rules",
        "add_rule",
        "remove_rule",
        "get_autostart",
        "set_autostart",
        "quit_app",
        "remote_status",
        "remote_enable",
        "remote_disable",
        "remote_pair",
        "remote_devices",
        "remote_revoke",
    ];
    tauri_build::try_build(
        tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(commands)),
    )
    .unwrap_or_else(|e| panic!("tauri build step failed: {e}"));
}
