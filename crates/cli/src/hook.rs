//! `assent hook CLIENT` in the whole `assent`: a call that waits for the person. The hook's fast
//! path (`assent-run`, [`assent_boundary::hook`]) answers a call a rule decided at once and hands
//! anything else here, with the event it read; here the same call is filed again under the same
//! key (and found filed), waited on up to the hook's bound, and answered in the client's shape.
//! An undecided proposal is withdrawn so the inbox does not keep a question nobody is waiting
//! for, and so is one whose hook is interrupted (SIGINT, SIGTERM, SIGHUP) or whose client died.

use crate::client::Client;
use crate::home::Home;
use anyhow::Result;
use assent_boundary::hook::{self, HookCmd, Watch};
use assent_client::gate;

/// Runs a hook: one JSON line on standard output.
pub async fn run(home: &Home, cmd: HookCmd) -> Result<()> {
    if let Some(file) = hook::printed(home, &cmd) {
        print!("{}", file?);
        return Ok(());
    }
    let watch = Watch::start();
    // Listening before the signals `assent-run` held back are let through: a client that gave up
    // while the call was being filed is heard now (`assent_boundary::hook::signals`).
    let signals = assent_host::start::StopSignals::listen();
    hook::signals::release();
    let answered = async move {
        let Some(h) = hook::read(cmd, &hook::stdin()?)? else { return Ok(()) };
        let verdict = match Client::agent(home, &h.args.auth) {
            Err(_) => hook::not_running(h.agent, home),
            Ok(client) => {
                // The client gives up on a call by signalling the hook (SIGINT, SIGTERM, SIGHUP),
                // or by dying (SIGKILL: no signal reaches the hook, but it is handed to another
                // parent).
                let stop = async {
                    tokio::select! {
                        () = signals.recv() => {}
                        () = gone(watch.clone()) => {}
                    }
                };
                hook::answer(home, &h, gate(&client.api, h.gate(), stop).await)
            }
        };
        hook::say(home, &h, &verdict);
        Ok(())
    };
    hook::closed(answered.await)
}

/// Resolves once the client that started the hook is gone: at its exit where the system
/// reports exits (macOS, Windows: a blocking wait, a quarter of a second at a time), else within
/// a quarter of a second (Linux reads `/proc`).
async fn gone(watch: Watch) {
    let quarter = std::time::Duration::from_millis(250);
    let Some(exits) = watch.exits() else {
        while !watch.is_gone() {
            tokio::time::sleep(quarter).await;
        }
        return;
    };
    let both = std::sync::Arc::new((watch, exits));
    loop {
        let b = both.clone();
        match tokio::task::spawn_blocking(move || b.0.wait_gone(&b.1, quarter)).await {
            Ok(false) => {}
            _ => return,
        }
    }
}
