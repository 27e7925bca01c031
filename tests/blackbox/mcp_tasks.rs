//! `assent mcp` to a client that takes tasks (MCP 2026-07-28's tasks extension,
//! `io.modelcontextprotocol/tasks`): a wait for a person's decision comes back at once as a task,
//! which the client polls until the person decides, however long that takes; `tasks/cancel`
//! ends the wait and leaves the proposal. The client is the `mcp` package's 2026-07-28 `Client`
//! with the extension written on its extension interface (tests/fixtures/mcp/tasks_client.py).

use crate::harness::Server;
use crate::mcp::Client;
use reqwest::Method;
use serde_json::json;

/// A server, and the tasks client (tests/fixtures/mcp/tasks_client.py) in `scenario` once it has
/// found MCP 2026-07-28 and proposed a tool call; the proposal's id.
async fn proposed(scenario: &str) -> (Server, Client, String) {
    let s = Server::start().await;
    let mut c = Client::run("tasks_client.py", &s, scenario, &[]);
    assert_eq!(c.next("protocol"), "2026-07-28");
    let id = c.next("proposed").as_str().unwrap().to_string();
    (s, c, id)
}

#[tokio::test]
async fn a_decision_that_takes_a_person_long_is_one_task_the_client_polls() {
    let (s, mut c, id) = proposed("decide").await;
    let id = id.as_str();
    let task = c.next("task");
    assert_eq!(task["status"], "working", "{task}");
    assert_eq!(task["ttl_ms"], 24 * 3600 * 1000, "{task}");
    assert!(task["message"].as_str().is_some_and(|m| m.contains("decision")), "{task}");
    assert_eq!(c.next("polled")["status"], "working");
    // The call asked for a 1-second wait; as a task it waits on, well past that.
    let working = c.next("working_after");
    assert!(working["polls"].as_u64() > Some(2), "{working}");
    let (_, p) = s.get(id, &s.agent).await;
    assert_eq!(p["status"], "pending", "{p}");
    let (code, d) = s.decide(id, json!({"outcome": "approve", "edits": {"input": {"env": "production"}}})).await;
    assert_eq!(code, 200, "{d}");
    let settled = c.next("settled");
    assert_eq!(settled["status"], "completed");
    // A finished task no longer says it waits for the person.
    assert_eq!(settled["message"], "decided: the result says how", "{settled}");
    let r = c.next("result");
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(r["json"]["status"], "approved", "{r}");
    assert_eq!(r["json"]["approved_input"], json!({"env": "production"}), "the person's edit: {r}");
    assert_eq!(r["json"]["edited_by_person"], true, "{r}");
    c.finish();
}

#[tokio::test]
async fn a_cancelled_task_ends_the_wait_and_leaves_the_proposal() {
    let (s, mut c, id) = proposed("cancel").await;
    assert_eq!(c.next("task")["status"], "working");
    assert_eq!(c.next("polled")["status"], "working");
    c.next("cancel_sent");
    assert_eq!(c.next("settled")["status"], "cancelled");
    let r = c.next("result");
    assert_eq!((r["is_error"].clone(), r["text"].clone()), (json!(true), json!("cancelled")), "{r}");
    c.finish();
    // Cancelling a wait is not withdrawing: the question stays for the person.
    let (_, p) = s.req(Method::GET, &format!("/proposals/{id}"), Some(&s.owner), None).await;
    assert_eq!(p["status"], "pending", "{p}");
}

#[tokio::test]
async fn a_client_without_tasks_gets_an_ordinary_answer() {
    let (_s, mut c, id) = proposed("plain").await;
    // No task: the wait ends after the second it asked for, the proposal still pending.
    let r = c.next("result");
    assert_eq!((r["json"]["id"].as_str(), r["json"]["status"].as_str()), (Some(id.as_str()), Some("pending")), "{r}");
    c.finish();
}

#[tokio::test]
async fn a_cancelled_permission_prompt_task_withdraws_its_proposal() {
    let s = Server::start().await;
    let mut c = Client::run("tasks_client.py", &s, "prompt", &[]);
    assert_eq!(c.next("protocol"), "2026-07-28");
    assert_eq!(c.next("task")["status"], "working");
    c.next("polled");
    c.next("cancel_sent");
    assert_eq!(c.next("settled")["status"], "cancelled");
    assert_eq!(c.next("result")["text"], "cancelled");
    c.finish();
    // A prompt nobody answers any more leaves no question: withdrawn, as a cancelled call's is.
    let (_, page) = s.req(Method::GET, "/proposals", Some(&s.owner), None).await;
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{page}");
    assert_eq!(items[0]["payload"]["input"]["command"], "make deploy", "{page}");
    assert_eq!(items[0]["status"], "withdrawn", "{page}");
}
