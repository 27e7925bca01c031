//! The API described: an OpenAPI 3.1 document generated from the types the routes take and
//! answer (the same types serde reads and writes, so the description cannot say one thing while
//! the server does another), served at `GET /v1/openapi.json` and committed as
//! `docs/openapi.json` (a test fails when the committed copy drifts).
//!
//! Every operation lists the errors it can answer, each status with the stable codes it can
//! carry ([`ERROR_CODES`], which the `error_codes` test checks against every place the code
//! raises one).

use assent_core::payloads::KindName;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use std::sync::OnceLock;
use utoipa::OpenApi;
use utoipa::openapi::path::{HttpMethod, Operation};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr};

/// Every error an API request can answer: its status and the stable codes it carries.
pub const ERROR_CODES: &[(u16, &[&str])] = &[
    (400, &["invalid_host", "invalid_query", "invalid_target", "malformed_json"]),
    (401, &["unauthorized"]),
    (403, &["forbidden"]),
    (404, &["not_found", "remote_unavailable", "target_not_found", "unknown_credential", "unknown_supersedes"]),
    (405, &["method_not_allowed"]),
    (
        409,
        &[
            "conflict",
            "idempotency_conflict",
            "invalid_state",
            "not_what_was_shown",
            "remote_disabled",
            "remote_port_busy",
        ],
    ),
    (413, &["payload_too_large"]),
    (415, &["unsupported_media_type"]),
    (
        422,
        &[
            "ambiguous_group",
            "box_unavailable",
            "feedback_required",
            "forbidden_header",
            "host_not_allowed",
            "insecure_url",
            "internal",
            "invalid_agent_name",
            "invalid_allow_similar",
            "invalid_credential_name",
            "invalid_cursor",
            "invalid_device_name",
            "invalid_edits",
            "invalid_expiry",
            "invalid_field",
            "invalid_glob",
            "invalid_header",
            "invalid_host",
            "invalid_hosts",
            "invalid_idempotency_key",
            "invalid_input",
            "invalid_match",
            "invalid_ntfy",
            "invalid_number",
            "invalid_origin",
            "invalid_path",
            "invalid_push_after",
            "invalid_payload",
            "invalid_request",
            "invalid_run",
            "invalid_scheme",
            "invalid_secret",
            "invalid_url",
            "no_similar_rule",
            "not_a_regular_file",
            "outside_allowed_roots",
            "path_is_directory",
            "path_is_symlink",
            "path_not_absolute",
            "protected_path",
            "target_too_large",
            "too_broad",
            "unknown_kind",
            "unreadable_target",
        ],
    ),
    (429, &["storage_quota", "too_many_pending", "too_many_rules", "too_many_waits"]),
    (500, &["internal"]),
    (503, &["keychain_unavailable", "remote_busy", "store_unavailable", "too_many_connections"]),
    (507, &["storage_full"]),
];

/// The codes a failed proposal's `error.code` can carry (the write was tried, or could not be).
pub const FAILURE_CODES: &[&str] = &[
    "credential_unavailable",
    "host_not_allowed",
    "http_status",
    "integrity",
    "not_applicable",
    "outcome_unknown",
    "request_failed",
    "stale",
    "unknown_kind",
    "write_failed",
];

const DESCRIPTION: &str = "Assent's loopback API. Local agents propose writes (`POST /v1/proposals`) and \
learn the outcome by long-polling (`GET /v1/proposals/{id}?wait=SECONDS`), listing or listening to \
`GET /v1/events`. The person decides through the owner routes (the desktop app, the `assent` command). \
Nothing is written without a decision, or a rule the person set. Requests are accepted only from \
loopback, addressed to 127.0.0.1 or localhost on the server's port, and never from web pages \
(a request with an `Origin` header is refused). Errors are `{\"error\": {\"code\", \"message\"}}` \
with a stable `code`.";

/// The document's source.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Assent",
        description = "The approval inbox for AI agents: its loopback API",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    servers((url = "http://127.0.0.1:4517", description = "The default address (`assent serve --port` or the app's settings change it)")),
    paths(
        crate::health,
        crate::hello,
        crate::routes::keys::list,
        crate::routes::keys::rotate,
        serve,
        crate::routes::proposals::create,
        crate::routes::sessions::batch,
        crate::routes::sessions::counts,
        crate::routes::proposals::list,
        crate::routes::proposals::get,
        crate::routes::proposals::withdraw,
        crate::routes::proposals::audit,
        crate::routes::events::events,
        crate::routes::decisions::decide,
        crate::routes::decisions::batch,
        crate::routes::decisions::retry,
        crate::routes::rules::similar,
        crate::routes::rules::list,
        crate::routes::rules::add,
        crate::routes::rules::remove,
        crate::routes::rules::test,
        crate::routes::rules::log,
        crate::routes::admin::list_agents,
        crate::routes::admin::add_agent,
        crate::routes::admin::revoke_agent,
        crate::routes::admin::list_credentials,
        crate::routes::admin::add_credential,
        crate::routes::admin::remove_credential,
        crate::routes::admin::audit,
        crate::routes::remote::status,
        crate::routes::remote::enable,
        crate::routes::remote::disable,
        crate::routes::remote::pair,
        crate::routes::remote::devices,
        crate::routes::remote::revoke,
        crate::routes::remote::log,
    ),
    components(schemas(
        assent_core::payloads::ToolCall,
        assent_core::payloads::FileWrite,
        assent_core::payloads::FileDelete,
        assent_core::payloads::HttpRequest,
    )),
    modifiers(&Described),
    tags(
        (name = "proposals", description = "What agents propose, and how they learn the outcome"),
        (name = "decisions", description = "The person's decisions (owner credential)"),
        (name = "rules", description = "Rules that decide proposals the person chose not to see (owner credential)"),
        (name = "agents", description = "Agents and their tokens (owner credential)"),
        (name = "credentials", description = "Credentials Assent injects into approved HTTP calls; secrets live in the system keychain (owner credential)"),
        (name = "audit", description = "The append-only audit log (owner credential)"),
        (name = "remote", description = "Answering from a phone: the remote listener, pairing and paired devices (owner credential)"),
        (name = "server", description = "Anyone on loopback"),
    ),
)]
pub struct ApiDoc;

/// Adds what the derive cannot say: the long description, the security schemes, and every
/// operation's error answers.
struct Described;

impl utoipa::Modify for Described {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        doc.info.description = Some(DESCRIPTION.to_string());
        doc.info.version = env!("CARGO_PKG_VERSION").to_string();
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "agent",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An agent's token (`assent agent add NAME`; the built-in agent's is in `agent.token` in the home directory)"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "owner",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some(
                "The owner credential (in the system keychain, or `owner.token` in the home directory): the person's, for decisions and administration",
            )).build()),
        );
        // A body that flattens a struct refusing unknown fields is one object with both's fields
        // (an `allOf` would refuse the outer struct's own fields).
        flatten_into(components, "BatchItem", "DecisionRequest", "id", true, "The proposal's id.");
        // "Allow similar" goes with the approval of one proposal: in a batch it is that item's
        // error, whatever it holds.
        if let Some(RefOr::T(utoipa::openapi::schema::Schema::Object(item))) = components.schemas.get_mut("BatchItem") {
            let any = ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::SchemaType::from_iter([Type::Object, Type::Null]))
                .description(Some(
                    "Refused in a batch (that item's error): \"allow similar\" goes with the approval of one proposal.",
                ));
            item.properties
                .insert("allow_similar".into(), RefOr::T(utoipa::openapi::schema::Schema::Object(any.build())));
            // Nor are a reason's or feedback's bounds the batch's: an item past them fails alone.
            for f in ["reason", "feedback"] {
                if let Some(RefOr::T(utoipa::openapi::schema::Schema::Object(o))) = item.properties.get_mut(f) {
                    o.max_length = None;
                }
            }
        }
        flatten_into(
            components,
            "RuleTest",
            "NewProposal",
            "agent",
            false,
            "The agent that would send it (`default` when left out).",
        );
        json_or_body(components);
        // A batch item's faults are that item's result (each stands alone), so its shape stays
        // the loose one the server reads.
        one_shape_per_outcome(components, "DecisionRequest");
        one_shape_per_kind(components, "NewProposal");
        one_shape_per_kind(components, "RuleTest");
        for (status, codes) in ERROR_CODES {
            components.responses.insert(format!("Error{status}"), error_response(*status, codes).into());
        }
        for (path, item) in doc.paths.paths.iter_mut() {
            for (method, op) in [
                (HttpMethod::Get, item.get.as_mut()),
                (HttpMethod::Post, item.post.as_mut()),
                (HttpMethod::Put, item.put.as_mut()),
                (HttpMethod::Delete, item.delete.as_mut()),
            ] {
                if let Some(op) = op {
                    add_errors(path, &method, op);
                }
            }
        }
    }
}

/// Replaces schema `name` by `base` with one more string property.
fn flatten_into(
    components: &mut utoipa::openapi::Components,
    name: &str,
    base: &str,
    property: &str,
    required: bool,
    about: &str,
) {
    use utoipa::openapi::schema::Schema;
    let Some(RefOr::T(Schema::Object(mut object))) = components.schemas.get(base).cloned() else { return };
    let description = match components.schemas.get(name) {
        Some(RefOr::T(Schema::AllOf(all))) => all.description.clone(),
        _ => None,
    };
    let mut kind = ObjectBuilder::new().description(Some(about));
    kind = if required {
        kind.schema_type(Type::String)
    } else {
        kind.schema_type(utoipa::openapi::schema::SchemaType::from_iter([Type::String, Type::Null]))
    };
    object.properties.insert(property.to_string(), kind.into());
    if required {
        object.required.push(property.to_string());
    }
    object.description = description;
    components.schemas.insert(name.to_string(), RefOr::T(Schema::Object(object)));
}

/// The statuses an operation can answer besides its successes.
fn add_errors(path: &str, method: &HttpMethod, op: &mut Operation) {
    let secured = op.security.as_ref().is_some_and(|s| !s.is_empty());
    let has_id = path.contains('{');
    let has_query = op.parameters.as_ref().is_some_and(|ps| {
        ps.iter()
            .any(|p| matches!(p, RefOr::T(p) if matches!(p.parameter_in, utoipa::openapi::path::ParameterIn::Query)))
    });
    // The guard (a foreign Host, a browser) and the server's own limits, for every route.
    let mut statuses = vec![400, 403, 500, 503];
    if secured {
        statuses.push(401);
    }
    // A server without a remote listener to manage answers its routes `remote_unavailable`.
    if has_id || path == "/v1/hello" || path.starts_with("/v1/remote") {
        statuses.push(404);
    }
    if has_query {
        statuses.push(422);
    }
    match method {
        HttpMethod::Get if path == "/v1/proposals/{id}" => statuses.push(429),
        HttpMethod::Post => statuses.extend([404, 409, 413, 415, 422, 429, 507]),
        HttpMethod::Put => statuses.extend([409, 413, 415, 422, 507]),
        HttpMethod::Delete => statuses.extend([409, 507]),
        _ => {}
    }
    statuses.sort_unstable();
    statuses.dedup();
    for status in statuses {
        op.responses
            .responses
            .insert(status.to_string(), Ref::new(format!("#/components/responses/Error{status}")).into());
    }
}

/// An error answer with the codes its status carries.
fn error_response(status: u16, codes: &[&str]) -> utoipa::openapi::Response {
    let detail = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "code",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(codes.iter().copied()))
                .description(Some("Stable: match on it")),
        )
        .required("code")
        .property("message", ObjectBuilder::new().schema_type(Type::String).description(Some("For people; may change")))
        .required("message");
    let body = ObjectBuilder::new().schema_type(Type::Object).property("error", detail).required("error");
    let what = match status {
        400 => "The request could not be read",
        401 => "No token, or not a valid one",
        403 => {
            "Not for this caller (an agent token where the owner's is needed, another agent's proposal, a request not addressed to loopback or from a web page)"
        }
        404 => "No such proposal, agent, credential or rule (or not the caller's)",
        405 => "The endpoint does not take that method",
        409 => "Not in a state that allows it (already decided, an idempotency key reused with another body)",
        413 => "The body is larger than the limit (4 MiB)",
        415 => "The body is not sent as JSON",
        422 => "The body or the query is not valid for this endpoint",
        429 => "Over a limit (pending proposals, open waits, storage quota, rules); try again later",
        500 => "A fault of the server (details in its log, never in the answer)",
        503 => "The system keychain is unavailable, or too many connections are open",
        507 => "The disk is full; nothing was stored",
        _ => "An error",
    };
    let list: Vec<String> = codes.iter().map(|c| format!("`{c}`")).collect();
    ResponseBuilder::new()
        .description(format!("{what}. Codes: {}.", list.join(", ")))
        .content("application/json", ContentBuilder::new().schema(Some(body)).build())
        .build()
}

/// The document, as served (built once).
pub fn document() -> &'static str {
    static DOC: OnceLock<String> = OnceLock::new();
    DOC.get_or_init(|| {
        let mut text = ApiDoc::openapi().to_pretty_json().unwrap_or_else(|_| "{}".to_string());
        text.push('\n');
        text
    })
}

/// An HTTP request carries `json` or `body`, never both: two shapes, either of which a
/// request may have (one with neither has both).
fn json_or_body(components: &mut utoipa::openapi::Components) {
    use utoipa::openapi::{RefOr, Schema};
    let Some(RefOr::T(Schema::Object(base))) = components.schemas.get("HttpRequest").cloned() else { return };
    let mut any_of = utoipa::openapi::schema::AnyOfBuilder::new().description(base.description.clone());
    for (drop, title) in [("body", "with a JSON body (or none)"), ("json", "with a text body (or none)")] {
        let mut v = base.clone();
        v.description = None;
        v.title = Some(format!("An HTTP request {title}"));
        v.properties.shift_remove(drop);
        any_of = any_of.item(RefOr::T(Schema::Object(v)));
    }
    components.schemas.insert("HttpRequest".to_string(), RefOr::T(Schema::AnyOf(any_of.build())));
}

/// A decision's fields depend on its outcome: edits and "allow similar" go with an approval,
/// and a refinement needs feedback. One shape per outcome says so.
fn one_shape_per_outcome(components: &mut utoipa::openapi::Components, name: &str) {
    use utoipa::openapi::{RefOr, Schema};
    let Some(RefOr::T(Schema::Object(base))) = components.schemas.get(name).cloned() else { return };
    let mut one_of = utoipa::openapi::schema::OneOfBuilder::new().description(base.description.clone());
    for (outcome, drop, needs) in [
        ("approve", &[][..], None),
        ("reject", &["edits", "allow_similar"][..], None),
        ("refine", &["edits", "allow_similar"][..], Some("feedback")),
    ] {
        let mut v = base.clone();
        v.description = None;
        v.title = Some(format!("{name}: {outcome}"));
        for d in drop {
            v.properties.shift_remove(*d);
        }
        let o = ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some([outcome]))
            .description(Some("The outcome."));
        v.properties.insert("outcome".into(), RefOr::T(Schema::Object(o.build())));
        if let Some(field) = needs {
            let f = ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(r"\S"))
                .max_length(Some(assent_core::engine::REASON_MAX))
                .description(Some("What the agent should change (not blank)."));
            v.properties.insert(field.into(), RefOr::T(Schema::Object(f.build())));
            v.required.push(field.to_string());
        }
        one_of = one_of.item(RefOr::T(Schema::Object(v)));
    }
    components.schemas.insert(name.to_string(), RefOr::T(Schema::OneOf(one_of.build())));
}

/// The kinds and the schema of each one's payload.
const KINDS: [(&str, &str); 4] = [
    (KindName::ToolCall.as_str(), "ToolCall"),
    (KindName::FileWrite.as_str(), "FileWrite"),
    (KindName::FileDelete.as_str(), "FileDelete"),
    (KindName::HttpRequest.as_str(), "HttpRequest"),
];

/// A proposal body names its kind and gives that kind's payload: described as one shape per
/// kind (`kind` that one value, `payload` that kind's schema), so that a body the document
/// allows has a payload its kind accepts.
fn one_shape_per_kind(components: &mut utoipa::openapi::Components, name: &str) {
    use utoipa::openapi::{RefOr, Schema};
    let Some(RefOr::T(Schema::Object(base))) = components.schemas.get(name).cloned() else { return };
    let mut one_of = utoipa::openapi::schema::OneOfBuilder::new().description(base.description.clone());
    for (kind, payload) in KINDS {
        let mut v = base.clone();
        v.description = None;
        v.title = Some(format!("{name} of a {kind}"));
        let k = ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some([kind]))
            .description(Some("The kind of write."));
        v.properties.insert("kind".into(), RefOr::T(Schema::Object(k.build())));
        let mut p = utoipa::openapi::Ref::from_schema_name(payload);
        p.description = format!("The {kind} payload.");
        v.properties.insert("payload".into(), RefOr::Ref(p));
        one_of = one_of.item(RefOr::T(Schema::Object(v)));
    }
    components.schemas.insert(name.to_string(), RefOr::T(Schema::OneOf(one_of.build())));
}

/// This document.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "server", operation_id = "openapi",
    responses((status = 200, description = "The OpenAPI 3.1 description of this API", content_type = "application/json")))]
pub async fn serve() -> Response {
    let mut res = document().into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    res
}
