//! A payload as a proposal's record holds it: typed, as its kind reads it, wherever it was read
//! whole and is of its kind's shape; else the JSON as it was stored. The engine files the typed
//! payload its kind prepared and the store reads rows back typed, so from the route to the
//! receipt a payload is a [`Payload`]; the JSON form is what a list row (which reads no
//! payload), a payload pruned after the retention, or a proposal read off the wire (where the
//! kind is a sibling field) holds, and is read typed where it is used ([`Held::of`]).

use crate::payloads::{KindName, Payload};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

/// A proposal's payload, an approved payload or an edit, as a record holds it. Two are equal
/// when their JSON is, however each is held.
#[derive(Debug, Clone)]
pub enum Held {
    /// Of its kind's shape. It serializes to exactly the JSON stored, shown and hashed: a
    /// stored JSON that this version's kind would write back otherwise (a row of an earlier
    /// version) is held as [`Held::Json`], so its hash never changes.
    Typed(Payload),
    /// As stored: not read (null), pruned, read off the wire, or not read back the same.
    Json(Value),
}

impl Held {
    /// The stored JSON `v` of a `kind` payload: typed when it reads as the kind's and writes back
    /// the same.
    pub fn read(kind: KindName, v: Value) -> Held {
        match Payload::read(kind, &v) {
            Ok(p) if p.to_value() == v => Held::Typed(p),
            _ => Held::Json(v),
        }
    }

    /// The payload as `kind`'s, or why it is not one (an integrity failure for a payload
    /// stored whole; a pruned or unread one is not one either).
    pub fn of(&self, kind: KindName) -> Result<Cow<'_, Payload>, String> {
        match self {
            Held::Typed(p) if p.kind() == kind => Ok(Cow::Borrowed(p)),
            Held::Typed(p) => Err(p.not_of(kind)),
            Held::Json(v) => Payload::read(kind, v).map(Cow::Owned),
        }
    }

    /// The typed payload, when it is held typed.
    pub fn typed(&self) -> Option<&Payload> {
        match self {
            Held::Typed(p) => Some(p),
            Held::Json(_) => None,
        }
    }

    /// Its JSON: what is stored, shown and hashed.
    pub fn to_value(&self) -> Cow<'_, Value> {
        match self {
            Held::Typed(p) => Cow::Owned(p.to_value()),
            Held::Json(v) => Cow::Borrowed(v),
        }
    }

    /// Its JSON, taken.
    pub fn into_value(self) -> Value {
        match self {
            Held::Typed(p) => p.to_value(),
            Held::Json(v) => v,
        }
    }

    /// The SHA-256 of its canonical JSON (RFC 8785): what a decision names and a receipt binds.
    pub fn sha256(&self) -> String {
        crate::canonical::canonical_sha256(&self.to_value())
    }
}

impl Default for Held {
    fn default() -> Self {
        Held::Json(Value::Null)
    }
}

impl From<Payload> for Held {
    fn from(p: Payload) -> Self {
        Held::Typed(p)
    }
}

impl PartialEq for Held {
    fn eq(&self, other: &Held) -> bool {
        match (self, other) {
            (Held::Typed(a), Held::Typed(b)) => a == b,
            (Held::Json(a), Held::Json(b)) => a == b,
            _ => self.to_value() == other.to_value(),
        }
    }
}

impl PartialEq<Value> for Held {
    fn eq(&self, other: &Value) -> bool {
        *self.to_value() == *other
    }
}

impl Serialize for Held {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Held::Typed(p) => p.serialize(s),
            Held::Json(v) => v.serialize(s),
        }
    }
}

/// Read as JSON: a payload on the wire comes without its kind (a sibling field), so it is typed
/// where it is used ([`Held::of`]).
impl<'de> Deserialize<'de> for Held {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Held::Json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_payload_is_held_typed_only_when_it_writes_back_the_same() {
        let call = json!({"tool": "Bash", "input": {"command": "ls"}});
        let held = Held::read(KindName::ToolCall, call.clone());
        assert!(matches!(held.typed(), Some(Payload::ToolCall(c)) if c.tool == "Bash"));
        assert_eq!(serde_json::to_value(&held).ok(), Some(call.clone()), "serialized as the stored JSON");
        assert_eq!(held.sha256(), crate::canonical::canonical_sha256(&call));
        // An earlier version's row that omitted a field this version writes (`input`): read
        // typed on demand, held as stored so its hash stays.
        let older = json!({"tool": "Read"});
        let held = Held::read(KindName::ToolCall, older.clone());
        assert!(matches!(&held, Held::Json(v) if *v == older));
        assert_eq!(held.sha256(), crate::canonical::canonical_sha256(&older));
        assert!(matches!(held.of(KindName::ToolCall).as_deref(), Ok(Payload::ToolCall(c)) if c.tool == "Read"));
        // Not of its kind's shape, or of another kind: an error, never a default.
        assert!(Held::Json(json!({"path": "/x"})).of(KindName::FileWrite).is_err());
        let typed = Held::read(KindName::FileDelete, json!({"path": "/x"}));
        assert!(typed.typed().is_some() && typed.of(KindName::FileWrite).is_err());
        // Off the wire it is JSON until typed with its kind.
        let wire: Held = serde_json::from_value(call.clone()).unwrap_or_default();
        assert!(matches!(&wire, Held::Json(v) if *v == call));
        let typed = Held::read(KindName::ToolCall, call.clone());
        assert!(typed.typed().is_some());
        assert_eq!(typed, wire, "equal as JSON, however held");
        assert_ne!(typed, Held::read(KindName::ToolCall, json!({"tool": "Bash", "input": {"command": "ls -a"}})));
        assert_eq!(Held::default(), Value::Null);
    }
}
