//! The status machine. Every status change in Assent goes through [`next`], a pure function
//! over the current status, the action and the kind's class; the store then applies the change
//! only if the row still has the status the decision was computed from (compare-and-set).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Where a proposal is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Status {
    /// Waiting for a person.
    Pending,
    /// A person approved it. For decision-only kinds this is final; for applied kinds Assent
    /// is about to carry the write out.
    Approved,
    /// Assent is carrying out the approved write.
    Applying,
    /// The approved write was carried out.
    Applied,
    /// The approved write could not be carried out (see the proposal's `error`).
    Failed,
    /// A person rejected it.
    Rejected,
    /// A person sent it back with feedback; the agent may answer with a revision.
    Refined,
    /// Nobody decided before `expires_at`.
    Expired,
    /// The agent took it back, or a revision replaced it.
    Withdrawn,
}

impl Status {
    /// Every status, in lifecycle order.
    pub const ALL: [Status; 9] = [
        Status::Pending,
        Status::Approved,
        Status::Applying,
        Status::Applied,
        Status::Failed,
        Status::Rejected,
        Status::Refined,
        Status::Expired,
        Status::Withdrawn,
    ];

    /// The wire and storage name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Applying => "applying",
            Status::Applied => "applied",
            Status::Failed => "failed",
            Status::Rejected => "rejected",
            Status::Refined => "refined",
            Status::Expired => "expired",
            Status::Withdrawn => "withdrawn",
        }
    }

    /// True when nothing more will happen to a proposal of this class in this status: the
    /// moment a waiting agent is answered.
    pub fn is_settled(self, class: KindClass) -> bool {
        match self {
            Status::Pending | Status::Applying => false,
            Status::Approved => class == KindClass::DecisionOnly,
            _ => true,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Status::ALL.into_iter().find(|st| st.as_str() == s).ok_or_else(|| format!("unknown status `{s}`"))
    }
}

/// Whether Assent carries the write out itself or only records the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum KindClass {
    /// The agent acts after approval (e.g. `tool.call`): `approved` is final.
    #[default]
    DecisionOnly,
    /// Assent applies the write: `approved -> applying -> applied | failed`.
    Applied,
}

/// Something that can happen to a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A person approves (possibly with edits).
    Approve,
    /// A person rejects.
    Reject,
    /// A person sends it back with feedback.
    Refine,
    /// `expires_at` passed without a decision.
    Expire,
    /// The agent withdraws it, or a revision supersedes it.
    Withdraw,
    /// Assent starts carrying out the approved write.
    StartApply,
    /// The write was carried out.
    FinishApply,
    /// The write could not be carried out (before or while applying).
    Fail,
}

/// A transition that the status machine does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot {action:?} a proposal that is {from}")]
pub struct TransitionError {
    /// The status the proposal is in.
    pub from: Status,
    /// The action that was refused.
    pub action: Action,
}

/// The status machine: the status a proposal moves to when `action` happens in `from`.
pub fn next(from: Status, action: Action, class: KindClass) -> Result<Status, TransitionError> {
    use Action as A;
    use Status as S;
    let to = match (from, action, class) {
        (S::Pending, A::Approve, _) => S::Approved,
        (S::Pending, A::Reject, _) => S::Rejected,
        (S::Pending, A::Refine, _) => S::Refined,
        (S::Pending, A::Expire, _) => S::Expired,
        (S::Pending, A::Withdraw, _) => S::Withdrawn,
        (S::Approved, A::StartApply, KindClass::Applied) => S::Applying,
        (S::Approved, A::Fail, KindClass::Applied) => S::Failed,
        (S::Applying, A::FinishApply, KindClass::Applied) => S::Applied,
        (S::Applying, A::Fail, KindClass::Applied) => S::Failed,
        _ => return Err(TransitionError { from, action }),
    };
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACTIONS: [Action; 8] = [
        Action::Approve,
        Action::Reject,
        Action::Refine,
        Action::Expire,
        Action::Withdraw,
        Action::StartApply,
        Action::FinishApply,
        Action::Fail,
    ];

    #[test]
    fn only_pending_can_be_decided() {
        for class in [KindClass::DecisionOnly, KindClass::Applied] {
            for from in Status::ALL {
                for action in [Action::Approve, Action::Reject, Action::Refine] {
                    let r = next(from, action, class);
                    assert_eq!(r.is_ok(), from == Status::Pending, "{from} {action:?} {class:?}");
                }
            }
        }
    }

    #[test]
    fn decisions_land_where_expected() {
        for (action, to) in [
            (Action::Approve, Status::Approved),
            (Action::Reject, Status::Rejected),
            (Action::Refine, Status::Refined),
            (Action::Expire, Status::Expired),
            (Action::Withdraw, Status::Withdrawn),
        ] {
            assert_eq!(next(Status::Pending, action, KindClass::DecisionOnly), Ok(to), "{action:?}");
        }
    }

    #[test]
    fn decision_only_kinds_are_never_applied() {
        for from in Status::ALL {
            for action in [Action::StartApply, Action::FinishApply, Action::Fail] {
                assert!(next(from, action, KindClass::DecisionOnly).is_err());
            }
        }
    }

    #[test]
    fn applied_kinds_run_approved_applying_applied() {
        let c = KindClass::Applied;
        for (from, action, to) in [
            (Status::Approved, Action::StartApply, Ok(Status::Applying)),
            (Status::Applying, Action::FinishApply, Ok(Status::Applied)),
            (Status::Applying, Action::Fail, Ok(Status::Failed)),
            (Status::Approved, Action::Fail, Ok(Status::Failed)),
        ] {
            assert_eq!(next(from, action, c), to, "{from} {action:?}");
        }
        assert!(next(Status::Approved, Action::FinishApply, c).is_err());
        assert!(next(Status::Applied, Action::StartApply, c).is_err());
    }

    #[test]
    fn settled_statuses_accept_nothing() {
        for class in [KindClass::DecisionOnly, KindClass::Applied] {
            for from in Status::ALL.into_iter().filter(|s| s.is_settled(class)) {
                for action in ACTIONS {
                    assert!(next(from, action, class).is_err(), "{from} {action:?} {class:?}");
                }
            }
        }
    }

    #[test]
    fn settledness_depends_on_class() {
        assert!(Status::Approved.is_settled(KindClass::DecisionOnly));
        assert!(!Status::Approved.is_settled(KindClass::Applied));
        assert!(!Status::Pending.is_settled(KindClass::DecisionOnly));
        assert!(Status::Applied.is_settled(KindClass::Applied));
    }

    #[test]
    fn names_round_trip() {
        for s in Status::ALL {
            assert_eq!(s.as_str().parse::<Status>(), Ok(s));
            assert_eq!(serde_json::to_value(s).ok(), Some(serde_json::json!(s.as_str())));
        }
        assert!("done".parse::<Status>().is_err());
    }
}
