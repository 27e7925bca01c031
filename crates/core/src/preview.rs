//! Previews, typed: what Assent computed from a stored payload, one shape per kind, tagged by
//! `type` (the kind's name). A kind builds its variant; the store reads stored previews back
//! through [`Preview::read`], which never fails (a row written by an older Assent that no longer
//! fits its variant comes back as [`Preview::Unreadable`] with its JSON, shown as it is).
//!
//! Two reduced forms exist, and both keep the same shapes: the view an agent gets
//! ([`Preview::for_agent`]: figures only, the content withheld) and what a proposal keeps after
//! the retention ([`crate::stored::pruned_preview`]).

use crate::invisible::Found;
use crate::payloads::KindName;
use serde::{Deserialize, Serialize};
use serde_json::Value;

fn is_false(b: &bool) -> bool {
    !*b
}

/// A preview: one variant per kind, tagged by `type`. Reading one never fails (see
/// [`Preview::read`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Preview {
    /// `tool.call`.
    #[serde(rename = "tool.call")]
    ToolCall(ToolPreview),
    /// `file.write`.
    #[serde(rename = "file.write")]
    FileWrite(FilePreview),
    /// `file.delete`.
    #[serde(rename = "file.delete")]
    FileDelete(FilePreview),
    /// `http.request`.
    #[serde(rename = "http.request")]
    HttpRequest(HttpPreview),
    /// A stored preview that fits none of the shapes (written by another version): its JSON.
    #[serde(rename = "unreadable")]
    Unreadable {
        /// The stored JSON.
        #[cfg_attr(feature = "ts", ts(type = "unknown"))]
        raw: Value,
    },
}

impl<'de> Deserialize<'de> for Preview {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Preview, D::Error> {
        Ok(Preview::read(Value::deserialize(d)?))
    }
}

/// A `tool.call` preview: the tool and its input, pretty-printed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolPreview {
    /// The tool's name.
    pub tool: String,
    /// Its input as given.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub input: Value,
    /// The input pretty-printed, hidden characters made visible.
    pub input_text: String,
    /// Hidden characters found anywhere in the payload.
    #[serde(default)]
    pub invisible_characters: Vec<Found>,
    /// Set when the content was pruned after the retention.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub content_pruned: bool,
    /// The working folder, as the client reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cwd: Option<String>,
    /// The client it came through, in words, as the client reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub client: Option<String>,
    /// The client's permission mode, as it reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub permission_mode: Option<String>,
    /// The box an approval runs the command in unless the person chooses otherwise (the
    /// decision's `run`); none: approving runs it as the client runs it (not a command the
    /// client runs through Assent, or this system builds no box: a note says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub runs_in: Option<crate::confine::Confine>,
    /// The hosts the box of `runs_in` reaches unless the person chooses otherwise (the
    /// decision's `hosts`), as Assent's reader names them from the command and the project
    /// (`npm install`: the npm registry; `git push`: its remote's host), never from the agent's
    /// words; the box's proxy lets through these alone. Empty: no network.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub reaches: Vec<String>,
    /// Assent's own notes on the call (never the agent's words), such as what the client does
    /// with an edited call.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// A file preview (`file.write`, `file.delete`): the target's figures and a line diff.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FilePreview {
    /// The real, absolute path.
    pub path: String,
    /// Whether the file existed when proposed.
    pub exists: bool,
    /// Its size then.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub current_size: u64,
    /// Its SHA-256 then.
    #[serde(default)]
    pub current_sha256: Option<String>,
    /// The new content's size (writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub new_size: Option<u64>,
    /// The new content's SHA-256 (writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub new_sha256: Option<String>,
    /// Whether the current content is binary (not diffed).
    #[serde(default)]
    pub binary_current: bool,
    /// Hidden characters in the path and the new content.
    #[serde(default)]
    pub invisible_characters: Vec<Found>,
    /// The diff.
    #[serde(flatten)]
    pub diff: Diff,
    /// Set in an agent's view: the diff (what Assent read) is left out.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub content_withheld: bool,
    /// Set when the content was pruned after the retention.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub content_pruned: bool,
}

/// A line diff of current vs proposed, bounded in time and size.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Diff {
    /// Too large to diff: no hunks.
    #[serde(default)]
    pub too_large: bool,
    /// The hunks; left out of the reduced views.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub hunks: Option<Vec<Hunk>>,
    /// Lines added and removed (none when not diffed).
    #[serde(default)]
    pub stats: Option<Stats>,
    /// More lines changed than a preview shows.
    #[serde(default)]
    pub truncated: bool,
    /// What replaced the diff when there is none to show (a binary file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub summary: Option<String>,
}

impl Diff {
    /// No diff: the content was too large (or unreadable).
    pub fn too_large() -> Self {
        Diff { too_large: true, hunks: Some(Vec::new()), ..Default::default() }
    }
    /// No diff, with a sentence saying why.
    pub fn summarized(summary: String) -> Self {
        Diff { hunks: Some(Vec::new()), summary: Some(summary), ..Default::default() }
    }
    /// The hunks, or none in a reduced view.
    pub fn hunks(&self) -> &[Hunk] {
        self.hunks.as_deref().unwrap_or_default()
    }
}

/// Lines added and removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Stats {
    /// Added.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub added: u64,
    /// Removed.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub removed: u64,
}

/// One hunk of a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Hunk {
    /// First line in the current file (1-based).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub old_start: u64,
    /// Lines of the current file it covers.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub old_lines: u64,
    /// First line in the new content (1-based).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub new_start: u64,
    /// Lines of the new content it covers.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub new_lines: u64,
    /// Its lines, in unified order.
    pub lines: Vec<Line>,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Line {
    /// `" "` context, `"-"` removed, `"+"` added.
    pub tag: String,
    /// Its number in the current file.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub old: Option<u64>,
    /// Its number in the new content.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub new: Option<u64>,
    /// The text as shown: no line ending, clipped, hidden characters made visible.
    pub text: String,
    /// Longer than a preview shows.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub clipped: bool,
    /// Has hidden characters.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub flagged: bool,
}

/// One header as an `http.request` preview shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HeaderLine {
    /// The name, hidden characters made visible.
    pub name: String,
    /// The value, hidden characters made visible.
    pub value: String,
    /// A header many servers read as a different method or host.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub changes_meaning: bool,
}

/// An `http.request` preview: exactly what will be sent (never the credential's value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HttpPreview {
    /// The method on the request line.
    pub method: String,
    /// The full URL.
    pub url: String,
    /// Its scheme.
    #[serde(default)]
    pub scheme: Option<String>,
    /// Its host.
    #[serde(default)]
    pub host: Option<String>,
    /// Its port (the scheme's default when none is given).
    #[serde(default)]
    pub port: Option<u16>,
    /// Its path, percent-encoded.
    #[serde(default)]
    pub path: Option<String>,
    /// Its query.
    #[serde(default)]
    pub query: Option<String>,
    /// Header names, lower case.
    #[serde(default)]
    pub header_names: Vec<String>,
    /// Headers as shown.
    #[serde(default)]
    pub headers: Vec<HeaderLine>,
    /// The method a server may act on (an override header wins).
    #[serde(default)]
    pub effective_method: String,
    /// `json`, `text` or `none`.
    #[serde(default)]
    pub body_kind: String,
    /// The body as shown.
    #[serde(default)]
    pub body: String,
    /// The credential Assent injects, by name.
    #[serde(default)]
    pub credential: Option<String>,
    /// How it is injected.
    #[serde(default)]
    pub credential_scheme: Option<String>,
    /// Where it may be sent.
    #[serde(default)]
    pub credential_origins: Option<Vec<String>>,
    /// Hidden characters found anywhere in the payload.
    #[serde(default)]
    pub invisible_characters: Vec<Found>,
    /// A DELETE (by method or override).
    #[serde(default)]
    pub destructive: bool,
    /// Set when the content was pruned after the retention.
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub content_pruned: bool,
}

impl Preview {
    /// Reads a stored (expanded) preview. Never fails: what fits no shape is
    /// [`Preview::Unreadable`].
    pub fn read(v: Value) -> Preview {
        let typed = match v.get("type").and_then(Value::as_str).and_then(KindName::parse) {
            Some(KindName::ToolCall) => ToolPreview::deserialize(&v).map(Preview::ToolCall),
            Some(KindName::FileWrite) => FilePreview::deserialize(&v).map(Preview::FileWrite),
            Some(KindName::FileDelete) => FilePreview::deserialize(&v).map(Preview::FileDelete),
            Some(KindName::HttpRequest) => HttpPreview::deserialize(&v).map(Preview::HttpRequest),
            // One stored as unreadable stays what it held.
            None if v["type"] == "unreadable" && v.get("raw").is_some() => {
                Ok(Preview::Unreadable { raw: v["raw"].clone() })
            }
            None => return Preview::Unreadable { raw: v },
        };
        typed.unwrap_or_else(|_| Preview::Unreadable { raw: v })
    }

    /// The kind it previews (`unreadable` for an unreadable one).
    pub fn kind(&self) -> &'static str {
        match self {
            Preview::ToolCall(_) => KindName::ToolCall.as_str(),
            Preview::FileWrite(_) => KindName::FileWrite.as_str(),
            Preview::FileDelete(_) => KindName::FileDelete.as_str(),
            Preview::HttpRequest(_) => KindName::HttpRequest.as_str(),
            Preview::Unreadable { .. } => "unreadable",
        }
    }

    /// As JSON (for storing).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The hidden characters it found.
    pub fn invisible_characters(&self) -> &[Found] {
        match self {
            Preview::ToolCall(t) => &t.invisible_characters,
            Preview::FileWrite(f) | Preview::FileDelete(f) => &f.invisible_characters,
            Preview::HttpRequest(h) => &h.invisible_characters,
            Preview::Unreadable { .. } => &[],
        }
    }

    /// The preview as an agent sees it. A preview may show what Assent read on the agent's
    /// behalf (the current content of a file it proposes to replace or delete); an agent must
    /// never learn through Assent what it could not read itself. So a file preview keeps its
    /// figures only (sizes, hashes, line counts, flags) and says `content_withheld`. Previews
    /// that only restate the agent's own request (`tool.call`, `http.request`) pass whole; an
    /// unreadable one keeps nothing.
    pub fn for_agent(self) -> Preview {
        match self {
            Preview::FileWrite(f) => Preview::FileWrite(f.withheld()),
            Preview::FileDelete(f) => Preview::FileDelete(f.withheld()),
            Preview::Unreadable { .. } => Preview::Unreadable { raw: Value::Null },
            whole => whole,
        }
    }
}

impl FilePreview {
    fn withheld(mut self) -> FilePreview {
        self.diff.hunks = None;
        self.diff.summary = None;
        self.content_withheld = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn file() -> Preview {
        Preview::FileWrite(FilePreview {
            path: "/w/a.txt".into(),
            exists: true,
            current_size: 4,
            current_sha256: Some("ab".into()),
            new_size: Some(5),
            new_sha256: Some("cd".into()),
            diff: Diff {
                hunks: Some(vec![Hunk {
                    old_start: 1,
                    old_lines: 1,
                    new_start: 1,
                    new_lines: 1,
                    lines: vec![Line {
                        tag: "-".into(),
                        old: Some(1),
                        new: None,
                        text: "secret".into(),
                        clipped: false,
                        flagged: false,
                    }],
                }]),
                stats: Some(Stats { added: 1, removed: 1 }),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    #[test]
    fn previews_are_tagged_by_kind_and_read_back() {
        let v = file().to_value();
        assert_eq!(v["type"], "file.write");
        assert_eq!(v["hunks"][0]["lines"][0]["text"], "secret");
        assert!(v["hunks"][0]["lines"][0].get("clipped").is_none(), "false flags are left out");
        assert_eq!(Preview::read(v), file());
    }

    #[test]
    fn what_fits_no_shape_is_unreadable_not_an_error() {
        let odd = json!({"type": "file.write", "path": 7});
        assert_eq!(Preview::read(odd.clone()), Preview::Unreadable { raw: odd });
        let other = json!({"type": "mail.send", "to": "x"});
        assert_eq!(Preview::read(other.clone()), Preview::Unreadable { raw: other });
        assert_eq!(Preview::read(Value::Null), Preview::Unreadable { raw: Value::Null });
    }

    #[test]
    fn an_agent_gets_figures_of_a_file_never_its_lines() {
        let v = file().for_agent().to_value();
        assert!(v.get("hunks").is_none(), "{v}");
        assert_eq!(v["content_withheld"], true);
        assert_eq!(v["stats"], json!({"added": 1, "removed": 1}));
        assert_eq!(v["current_sha256"], "ab");
        let tool = Preview::ToolCall(ToolPreview {
            tool: "Bash".into(),
            input: json!({"command": "ls"}),
            input_text: "{}".into(),
            ..Default::default()
        });
        assert_eq!(tool.clone().for_agent(), tool, "an agent's own request passes whole");
    }
}
