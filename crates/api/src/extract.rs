//! Extractors: the caller's identity, and JSON bodies and queries whose rejections become
//! [`ApiError`]s with stable codes.

use crate::AppState;
use crate::error::ApiError;
use assent_core::Principal;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;

/// The authenticated caller.
pub struct Caller(pub Principal);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let value = parts.headers.get(header::AUTHORIZATION).ok_or_else(ApiError::unauthorized)?;
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty() && t.len() <= 256)
            .ok_or_else(ApiError::unauthorized)?;
        state.engine.authenticate(token).map(Caller).ok_or_else(ApiError::unauthorized)
    }
}

/// The owner, or 403 for an agent.
pub struct Owner;

impl FromRequestParts<AppState> for Owner {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        match Caller::from_request_parts(parts, state).await?.0 {
            Principal::Owner => Ok(Owner),
            Principal::Agent(_) => Err(ApiError::forbidden(
                "agent tokens cannot do this: decisions and administration need the owner credential",
            )),
        }
    }
}

/// The person (the owner credential, or 403 for an agent), with the channel the request came
/// by: the `assent` command says it is the CLI (`Assent-Client: cli`); any other client of the
/// owner API is recorded as `api`.
pub struct Person(pub assent_core::Actor);

impl FromRequestParts<AppState> for Person {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Owner::from_request_parts(parts, state).await?;
        let cli = parts.headers.get("assent-client").is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"cli"));
        let channel = if cli { assent_core::Channel::Cli } else { assent_core::Channel::Api };
        Ok(Person(state.engine.person(channel)))
    }
}

/// The `Assent-Client` header, in the API's description of every route that takes a [`Person`].
impl utoipa::IntoParams for Person {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        let text = utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::schema::Type::String);
        vec![
            utoipa::openapi::path::ParameterBuilder::new()
                .name("Assent-Client")
                .parameter_in(utoipa::openapi::path::ParameterIn::Header)
                .required(utoipa::openapi::Required::False)
                .description(Some(
                    "`cli` from the `assent` command: recorded as the channel of the decision or rule change (`api` otherwise)",
                ))
                .schema(Some(text))
                .build(),
        ]
    }
}

/// A JSON body. Wrong content type: 415; malformed: 400; wrong shape: 422; too large: 413.
/// Read with [`assent_core::strict`]: where an object is documented, only an object will do.
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if !json_content_type(req.headers()) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as JSON with `Content-Type: application/json`",
            ));
        }
        let bytes = axum::body::Bytes::from_request(req, state).await.map_err(|rej| match rej.status() {
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the request body is larger than the limit",
            ),
            status => ApiError::new(status, "bad_request", rej.body_text()),
        })?;
        read_json(&bytes).map(Json)
    }
}

/// `application/json`, or any `application/...+json`, with or without parameters.
fn json_content_type(headers: &axum::http::HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// JSON text as `T`: malformed is 400 `malformed_json`, well-formed but of the wrong shape is
/// 422 `invalid_request`, with where in the body it went wrong.
pub fn read_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    assent_core::strict::from_slice(bytes).map_err(|error| match error.classify() {
        serde_json::error::Category::Data => {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", error.to_string())
        }
        _ => ApiError::new(StatusCode::BAD_REQUEST, "malformed_json", format!("the body is not valid JSON: {error}")),
    })
}

/// A query string. Wrong shape: 400 `invalid_query`.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| Query(q.0))
            .map_err(|rej| ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", rej.body_text()))
    }
}

/// A count in a query (`limit`, `wait`): any whole number of digits, however large (a count
/// larger than the server's maximum means the maximum, so it saturates rather than fail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub u64);

impl<'de> serde::Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Count;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number of 0 or more")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Count, E> {
                Ok(Count(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Count, E> {
                if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(E::custom(format!("`{v}` is not a whole number of 0 or more")));
                }
                Ok(Count(v.parse().unwrap_or(u64::MAX)))
            }
        }
        d.deserialize_str(V)
    }
}

/// How a [`Count`] is described.
pub fn count_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::schema::Type::Integer).minimum(Some(0)).build()
}
