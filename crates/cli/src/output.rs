//! What people see: tables and summaries. Scripts use `--json`.

use serde_json::Value;

/// Shortens to `max` characters with an ellipsis.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn s(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Text with invisible characters made visible and control characters escaped, so that a
/// payload cannot rewrite the terminal.
pub fn safe(text: &str) -> String {
    let visible = assent_core::invisible::make_visible(text);
    visible
        .chars()
        .map(
            |c| {
                if c.is_control() && c != '\n' && c != '\t' { format!("\\u{{{:x}}}", c as u32) } else { c.to_string() }
            },
        )
        .collect()
}

/// What a proposal does, as Assent computed it from the stored payload (never the agent's
/// words): for a proposal the agent gave no title.
pub fn computed_title(p: &Value) -> String {
    let pv = &p["preview"];
    let text = |k: &str| pv[k].as_str().unwrap_or("");
    match p["kind"].as_str().unwrap_or("") {
        "file.write" => format!("write {}", text("path")),
        "file.delete" => format!("delete {}", text("path")),
        "http.request" => format!("{} {}{}", text("method"), text("host"), text("path")),
        "tool.call" => {
            let payload = if p["payload"].is_object() { &p["payload"] } else { pv };
            assent_core::verdict::tool_call_title(payload["tool"].as_str().unwrap_or("tool"), &payload["input"])
        }
        other => other.to_string(),
    }
}

/// A table of proposals.
pub fn table(items: &[Value]) -> String {
    let rows: Vec<[String; 6]> = items
        .iter()
        .map(|p| {
            [
                s(&p["id"]),
                s(&p["status"]),
                s(&p["kind"]),
                s(&p["agent"]),
                s(&p["created_at"]).chars().take(19).collect::<String>().replace('T', " "),
                match p["title"].as_str() {
                    Some(t) => safe(&clip(t, 50)),
                    None => format!("[{}]", safe(&clip(&computed_title(p), 48))),
                },
            ]
        })
        .collect();
    let head = ["ID", "STATUS", "KIND", "AGENT", "CREATED (UTC)", "TITLE (agent's words; [what Assent computed])"];
    let mut w = head.map(|h| h.chars().count());
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<width$}", width = w[i]))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = line(&head.map(String::from));
    out.push('\n');
    for r in &rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

/// One proposal in full, for `show` and after a decision.
pub fn proposal(p: &Value, audit: Option<&Value>) -> String {
    let mut o = String::new();
    let mut kv = |k: &str, v: String| o.push_str(&format!("{k:<12}{v}\n"));
    kv("id", s(&p["id"]));
    kv("status", s(&p["status"]));
    kv("kind", s(&p["kind"]));
    kv("agent", s(&p["agent"]));
    kv("created", s(&p["created_at"]));
    kv("expires", s(&p["expires_at"]));
    for f in ["group_id", "session_id", "supersedes"] {
        if !p[f].is_null() {
            kv(f, s(&p[f]));
        }
    }
    kv("what", format!("{} (computed by Assent)", safe(&computed_title(p))));
    if let Some(t) = p["title"].as_str() {
        kv("title", format!("{} (the agent's words)", safe(t)));
    }
    if let Some(t) = p["summary"].as_str() {
        kv("summary", format!("{} (the agent's words)", safe(t)));
    }
    let d = &p["decision"];
    if !d.is_null() {
        let mut line = format!("{} by {} via {} at {}", s(&d["outcome"]), s(&d["by"]), s(&d["channel"]), s(&d["at"]));
        if let Some(r) = d["reason"].as_str() {
            line.push_str(&format!(": {}", safe(r)));
        }
        if let Some(f) = d["feedback"].as_str() {
            line.push_str(&format!(": {}", safe(f)));
        }
        kv("decision", line);
        if d.get("edited_payload").is_some_and(|e| !e.is_null()) {
            kv("edited", "yes: the approved payload differs from the proposed one".into());
        }
    }
    if let Some(e) = p["error"].as_object() {
        kv("error", format!("{}: {}", s(&e["code"]), s(&e["message"])));
    }
    if !p["result"].is_null() {
        kv("result", safe(&clip(&p["result"].to_string(), 300)));
    }
    o.push_str("\npreview (computed by Assent from the stored payload):\n");
    let pv = &p["preview"];
    if pv["type"] == "file.write" || pv["type"] == "file.delete" {
        o.push_str(&file_preview(pv));
    } else if pv["type"] == "http.request" {
        o.push_str(&format!("  {} {}\n", s(&pv["method"]), safe(&s(&pv["url"]))));
        o.push_str(&format!("  host        {}\n", s(&pv["host"])));
        if pv["effective_method"].as_str().is_some_and(|m| Some(m) != pv["method"].as_str()) {
            o.push_str(&format!(
                "  WARNING: a header asks the server to treat this as {}\n",
                safe(&s(&pv["effective_method"]))
            ));
        }
        if let Some(c) = pv["credential"].as_str() {
            o.push_str(&format!("  credential  {c} ({}), injected by Assent\n", s(&pv["credential_scheme"])));
            if let Some(origins) = pv["credential_origins"].as_array() {
                let list: Vec<String> = origins.iter().map(s).collect();
                o.push_str(&format!("              may be sent only to {}\n", list.join(", ")));
            }
        }
        match pv["headers"].as_array() {
            Some(hs) if !hs.is_empty() => {
                o.push_str("  headers\n");
                for h in hs {
                    let flag = if h["changes_meaning"] == true { "   <- changes what the request means" } else { "" };
                    o.push_str(&format!("    {}: {}{flag}\n", safe(&s(&h["name"])), safe(&s(&h["value"]))));
                }
            }
            _ => {
                let names: Vec<String> =
                    pv["header_names"].as_array().map(|a| a.iter().map(s).collect()).unwrap_or_default();
                if !names.is_empty() {
                    o.push_str(&format!("  headers     {}\n", names.join(", ")));
                }
            }
        }
        if pv["body_kind"] != "none" {
            o.push_str("  body\n");
            for l in pv["body"].as_str().unwrap_or("").lines() {
                o.push_str(&format!("    {}\n", safe(l)));
            }
        }
    } else if pv["type"] == "tool.call" {
        o.push_str(&format!("  tool   {}\n  input\n", safe(&s(&pv["tool"]))));
        for l in pv["input_text"].as_str().unwrap_or("").lines() {
            o.push_str(&format!("    {}\n", safe(l)));
        }
    } else {
        for l in serde_json::to_string_pretty(pv).unwrap_or_default().lines() {
            o.push_str(&format!("  {}\n", safe(l)));
        }
    }
    if let Some(found) = pv["invisible_characters"].as_array().filter(|a| !a.is_empty()) {
        o.push_str("\n  WARNING: invisible or bidirectional characters in the payload:\n");
        for f in found {
            o.push_str(&format!("    {} {} x{}\n", s(&f["codepoint"]), s(&f["name"]), s(&f["count"])));
        }
    }
    if let Some(items) = audit.and_then(|a| a["items"].as_array()) {
        o.push_str("\naudit:\n");
        for e in items {
            o.push_str(&format!(
                "  {}  {} -> {}  by {} via {}\n",
                s(&e["at"]),
                s(&e["from"]),
                s(&e["to"]),
                s(&e["actor"]),
                s(&e["channel"])
            ));
        }
    }
    o
}

/// A file preview as a unified diff.
fn file_preview(pv: &Value) -> String {
    let mut o = String::new();
    let verb = if pv["type"] == "file.delete" {
        "delete"
    } else if pv["exists"] == true {
        "replace"
    } else {
        "create"
    };
    o.push_str(&format!("  {verb} {}\n", safe(&s(&pv["path"]))));
    if let Some(st) = pv["stats"].as_object() {
        o.push_str(&format!("  +{} -{} lines\n", s(&st["added"]), s(&st["removed"])));
    }
    if pv["too_large"] == true {
        o.push_str("  (too large to diff)\n");
    }
    if let Some(sum) = pv["summary"].as_str() {
        o.push_str(&format!("  {sum}\n"));
    }
    for h in pv["hunks"].as_array().cloned().unwrap_or_default() {
        o.push_str(&format!(
            "  @@ -{},{} +{},{} @@\n",
            s(&h["old_start"]),
            s(&h["old_lines"]),
            s(&h["new_start"]),
            s(&h["new_lines"])
        ));
        for l in h["lines"].as_array().cloned().unwrap_or_default() {
            o.push_str(&format!("  {}{}\n", s(&l["tag"]), safe(l["text"].as_str().unwrap_or(""))));
        }
    }
    if pv["truncated"] == true {
        o.push_str("  ... (more changes not shown)\n");
    }
    o
}
