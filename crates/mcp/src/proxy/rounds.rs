//! MCP 2026-07-28's multi round-trip calls (`input_required`): a server may answer a call by
//! asking the client for input (to confirm, to choose), and the client then calls again with the
//! same tool and arguments, its answers and the server's `requestState`. Such a retry continues
//! the call the person approved: it goes through without asking again, bound to that tool, the
//! arguments the client first sent and that state, and runs with the arguments approved.

use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long a server's question keeps an approved call open for the client's retry.
pub(super) const OPEN_FOR: Duration = Duration::from_secs(600);

/// An approved call sent to the server.
#[derive(Debug, Clone)]
struct Sent {
    tool: String,
    /// The arguments as the client sent them.
    asked_with: Value,
    /// The arguments approved (the person's edit, the receipt).
    approved: Value,
}

/// A call the server asked input for, open for the client's retry.
#[derive(Debug)]
struct Open {
    sent: Sent,
    state: Option<String>,
    since: Instant,
}

/// The approved calls in flight, and those open for a retry.
#[derive(Debug, Default)]
pub(super) struct Rounds {
    sent: HashMap<String, Sent>,
    open: Vec<Open>,
}

impl Rounds {
    /// The approved call `id` was sent to the server.
    pub(super) fn sent(&mut self, id: String, tool: &str, asked_with: Value, approved: Value) {
        self.sent.insert(id, Sent { tool: tool.to_string(), asked_with, approved });
    }

    /// The server answered request `id` with `result`: when it asks the client for input, the
    /// approved call stays open for the retry.
    pub(super) fn answered(&mut self, id: &str, result: Option<&Value>) {
        let Some(sent) = self.sent.remove(id) else { return };
        let Some(result) = result.filter(|r| r["resultType"] == "input_required") else { return };
        let state = result["requestState"].as_str().map(str::to_string);
        self.open.push(Open { sent, state, since: Instant::now() });
    }

    /// The tool and the approved arguments to send the call `params` with, when it is the retry
    /// of an open call: the same tool, the same arguments as first sent, the state the server
    /// gave. Each opening is used once.
    pub(super) fn continues(&mut self, params: &Value) -> Option<(String, Value)> {
        self.open.retain(|o| o.since.elapsed() < OPEN_FOR);
        let state = params.get("requestState").and_then(Value::as_str);
        if state.is_none() && params.get("inputResponses").is_none() {
            return None;
        }
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Object(Default::default()));
        let at = self.open.iter().position(|o| {
            params["name"].as_str() == Some(&o.sent.tool)
                && o.sent.asked_with == arguments
                && o.state.as_deref() == state
        })?;
        let o = self.open.swap_remove(at);
        Some((o.sent.tool, o.sent.approved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_retry_of_an_approved_call_continues_it() {
        let mut r = Rounds::default();
        r.sent("1".into(), "archive", json!({"id": 7}), json!({"id": 7, "assent_receipt": "r"}));
        let asks = json!({"resultType": "input_required", "requestState": "s1", "inputRequests": {}});
        r.answered("1", Some(&asks));
        let retry = |name: &str, args: Value, state: &str| json!({"name": name, "arguments": args, "requestState": state, "inputResponses": {"a": {}}});
        assert_eq!(r.continues(&retry("archive", json!({"id": 8}), "s1")), None, "other arguments");
        assert_eq!(r.continues(&retry("delete", json!({"id": 7}), "s1")), None, "another tool");
        assert_eq!(r.continues(&retry("archive", json!({"id": 7}), "forged")), None, "another state");
        assert_eq!(r.continues(&json!({"name": "archive", "arguments": {"id": 7}})), None, "a fresh call");
        let (tool, approved) = r.continues(&retry("archive", json!({"id": 7}), "s1")).expect("the retry");
        assert_eq!((tool.as_str(), approved), ("archive", json!({"id": 7, "assent_receipt": "r"})));
        assert_eq!(r.continues(&retry("archive", json!({"id": 7}), "s1")), None, "used once");
        // A final answer opens nothing.
        r.sent("2".into(), "archive", json!({}), json!({}));
        r.answered("2", Some(&json!({"content": []})));
        assert!(r.open.is_empty() && r.sent.is_empty());
    }
}
