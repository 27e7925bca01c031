//! What people see: tables and summaries. Scripts use `--json`.

use assent_core::Proposal;
use assent_core::preview::{FilePreview, HttpPreview, Preview};
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

/// An enum's wire word (`approve`, `cli`, ...).
fn word<T: serde::Serialize>(t: &T) -> String {
    s(&serde_json::to_value(t).unwrap_or(Value::Null))
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
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
pub fn computed_title(p: &Proposal) -> String {
    match &p.preview {
        Preview::FileWrite(f) => format!("write {}", f.path),
        Preview::FileDelete(f) => format!("delete {}", f.path),
        Preview::HttpRequest(h) => {
            format!("{} {}{}", h.method, h.host.as_deref().unwrap_or(""), h.path.as_deref().unwrap_or(""))
        }
        Preview::ToolCall(t) => {
            // The payload when it reads as its kind's (a pruned one keeps only the preview's
            // figures).
            match p.typed_payload().as_deref() {
                Ok(assent_core::payloads::Payload::ToolCall(c)) => {
                    assent_core::verdict::tool_call_title(&c.tool, &c.input)
                }
                _ => assent_core::verdict::tool_call_title(&t.tool, &t.input),
            }
        }
        Preview::Unreadable { .. } => p.kind.to_string(),
    }
}

/// A table of proposals.
pub fn table(items: &[Proposal]) -> String {
    let rows: Vec<[String; 6]> = items
        .iter()
        .map(|p| {
            [
                p.id.clone(),
                p.status.to_string(),
                p.kind.to_string(),
                p.agent.clone(),
                p.created_at.to_rfc3339().chars().take(19).collect::<String>().replace('T', " "),
                match &p.title {
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
pub fn proposal(p: &Proposal, audit: Option<&[assent_core::proposal::AuditEntry]>) -> String {
    let mut o = String::new();
    let mut kv = |k: &str, v: String| o.push_str(&format!("{k:<12}{v}\n"));
    kv("id", p.id.clone());
    kv("status", p.status.to_string());
    kv("kind", p.kind.to_string());
    kv("agent", p.agent.clone());
    kv("created", p.created_at.to_rfc3339());
    kv("expires", p.expires_at.to_rfc3339());
    for (f, v) in [("group_id", &p.group_id), ("session_id", &p.session_id), ("supersedes", &p.supersedes)] {
        if let Some(v) = v {
            kv(f, v.clone());
        }
    }
    kv("what", format!("{} (computed by Assent)", safe(&computed_title(p))));
    // What `--seen` takes: a decision with it is refused if the payload is not this one.
    kv("sha256", format!("{} (of the payload; decide with --seen to decide only this)", p.payload.sha256()));
    if let Some(t) = &p.title {
        kv("title", format!("{} (the agent's words)", safe(t)));
    }
    if let Some(t) = &p.summary {
        kv("summary", format!("{} (the agent's words)", safe(t)));
    }
    if let Some(d) = &p.decision {
        let mut line = format!("{} by {} via {} at {}", word(&d.outcome), d.by, word(&d.channel), d.at.to_rfc3339());
        if let Some(r) = &d.reason {
            line.push_str(&format!(": {}", safe(r)));
        }
        if let Some(f) = &d.feedback {
            line.push_str(&format!(": {}", safe(f)));
        }
        kv("decision", line);
        if d.edited_payload.is_some() {
            kv("edited", "yes: the approved payload differs from the proposed one".into());
        }
        let boxable = matches!(&p.preview, Preview::ToolCall(t) if t.runs_in.is_some());
        match d.confine {
            Some(b) if d.hosts.is_empty() => kv("runs in", format!("the {} box, no network", b.as_str())),
            Some(b) => kv("runs in", format!("the {} box, reaching {}", b.as_str(), safe(&d.hosts.join(", ")))),
            None if boxable && d.outcome == assent_core::proposal::Outcome::Approve => {
                kv("runs in", "no box: unconfined, as the person chose".into())
            }
            None => {}
        }
    }
    if let Some(e) = &p.error {
        kv("error", format!("{}: {}", e.code, e.message));
    }
    if let Some(r) = &p.result {
        kv("result", safe(&clip(&r.to_string(), 300)));
    }
    o.push_str("\npreview (computed by Assent from the stored payload):\n");
    match &p.preview {
        Preview::FileWrite(f) => o.push_str(&file_preview(f, false)),
        Preview::FileDelete(f) => o.push_str(&file_preview(f, true)),
        Preview::HttpRequest(h) => o.push_str(&http_preview(h)),
        Preview::ToolCall(t) => {
            o.push_str(&format!("  tool   {}\n", safe(&t.tool)));
            for (label, v) in [("folder", &t.cwd), ("via", &t.client), ("mode", &t.permission_mode)] {
                if let Some(v) = v {
                    o.push_str(&format!("  {label:<6} {} (as the client reports)\n", safe(v)));
                }
            }
            if let Some(b) = t.runs_in {
                let how = b.in_words();
                o.push_str(&format!(
                    "  runs in the {} box when approved ({how}); `--run unconfined` runs it as the client would\n",
                    b.as_str()
                ));
                if t.reaches.is_empty() {
                    o.push_str("  reaches no network (`--host NAME` lets the box reach one)\n");
                } else {
                    o.push_str(&format!(
                        "  reaches {} only, as Assent's reader names them (`--no-network` takes them away)\n",
                        safe(&t.reaches.join(", "))
                    ));
                }
            }
            o.push_str("  input\n");
            for l in t.input_text.lines() {
                o.push_str(&format!("    {}\n", safe(l)));
            }
            for n in &t.notes {
                o.push_str(&format!("  note   {} (Assent's note)\n", safe(n)));
            }
        }
        Preview::Unreadable { raw } => {
            for l in serde_json::to_string_pretty(raw).unwrap_or_default().lines() {
                o.push_str(&format!("  {}\n", safe(l)));
            }
        }
    }
    let found = p.preview.invisible_characters();
    if !found.is_empty() {
        o.push_str("\n  WARNING: invisible or bidirectional characters in the payload:\n");
        for f in found {
            o.push_str(&format!("    {} {} x{}\n", f.codepoint, f.name, f.count));
        }
    }
    if let Some(items) = audit {
        o.push_str("\naudit:\n");
        for e in items {
            o.push_str(&format!(
                "  {}  {} -> {}  by {} via {}\n",
                e.at.to_rfc3339(),
                word(&e.from),
                word(&e.to),
                e.actor,
                word(&e.channel)
            ));
            if let Some(m) = e.detail.as_ref().and_then(|d| d["message"].as_str()) {
                o.push_str(&format!("      {}\n", safe(m)));
            }
        }
    }
    o
}

/// An HTTP preview: the request line, where the credential may go, the headers, the body.
fn http_preview(h: &HttpPreview) -> String {
    let mut o = String::new();
    o.push_str(&format!("  {} {}\n", h.method, safe(&h.url)));
    o.push_str(&format!("  host        {}\n", opt(&h.host)));
    if !h.effective_method.is_empty() && h.effective_method != h.method {
        o.push_str(&format!("  WARNING: a header asks the server to treat this as {}\n", safe(&h.effective_method)));
    }
    if let Some(c) = &h.credential {
        o.push_str(&format!("  credential  {c} ({}), injected by Assent\n", opt(&h.credential_scheme)));
        if let Some(origins) = &h.credential_origins {
            o.push_str(&format!("              may be sent only to {}\n", origins.join(", ")));
        }
    }
    if !h.headers.is_empty() {
        o.push_str("  headers\n");
        for x in &h.headers {
            let flag = if x.changes_meaning { "   <- changes what the request means" } else { "" };
            o.push_str(&format!("    {}: {}{flag}\n", safe(&x.name), safe(&x.value)));
        }
    } else if !h.header_names.is_empty() {
        o.push_str(&format!("  headers     {}\n", h.header_names.join(", ")));
    }
    if h.body_kind != "none" {
        o.push_str("  body\n");
        for l in h.body.lines() {
            o.push_str(&format!("    {}\n", safe(l)));
        }
    }
    o
}

/// A file preview as a unified diff.
fn file_preview(f: &FilePreview, delete: bool) -> String {
    let mut o = String::new();
    let verb = if delete {
        "delete"
    } else if f.exists {
        "replace"
    } else {
        "create"
    };
    o.push_str(&format!("  {verb} {}\n", safe(&f.path)));
    if let Some(st) = f.diff.stats {
        o.push_str(&format!("  +{} -{} lines\n", st.added, st.removed));
    }
    if f.diff.too_large {
        o.push_str("  (too large to diff)\n");
    }
    if let Some(sum) = &f.diff.summary {
        o.push_str(&format!("  {sum}\n"));
    }
    if f.diff.truncated {
        o.push_str("  (longer than a preview holds: the start and the end shown, the middle left out)\n");
    }
    for h in f.diff.hunks() {
        o.push_str(&format!("  @@ -{},{} +{},{} @@\n", h.old_start, h.old_lines, h.new_start, h.new_lines));
        for l in &h.lines {
            o.push_str(&format!("  {}{}\n", l.tag, safe(&l.text)));
        }
    }
    o
}

/// How a list prints: a table, or `--json`.
#[derive(Debug, clap::Args)]
pub struct Printed {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}
