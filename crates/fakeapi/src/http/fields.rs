//! `fieldValidation` on writes: an object with fields its kind's schema does not declare is
//! rejected (`Strict`, 400 as the apiserver's strict decoding error) or accepted with one HTTP
//! `Warning` per field (`Warn`); `Ignore` (and no parameter) accepts it silently.

use super::status::Failure;
use crate::openapi::{self, validate::FieldValidation};
use crate::resource::ResourceType;
use http::{HeaderValue, Response, StatusCode};
use serde_json::Value;

/// The warnings to send for `object` under `mode`, or the failure that rejects it.
pub fn check(
    resource: &ResourceType,
    object: &Value,
    mode: FieldValidation,
) -> Result<Vec<String>, Failure> {
    if mode == FieldValidation::Ignore {
        return Ok(Vec::new());
    }
    let Some((root, definitions)) = openapi::kind_schema(resource) else {
        return Ok(Vec::new());
    };
    let problems: Vec<String> = openapi::validate::unknown_fields(object, &root, &definitions)
        .into_iter()
        .map(|path| format!("unknown field \"{path}\""))
        .collect();
    if problems.is_empty() || mode == FieldValidation::Warn {
        return Ok(problems);
    }
    let kind = &resource.kind;
    Err(Failure::new(
        StatusCode::BAD_REQUEST,
        "BadRequest",
        format!(
            "{kind} in version \"{}\" cannot be handled as a {kind}: strict decoding error: {}",
            resource.version,
            problems.join(", ")
        ),
    ))
}

/// Adds one `Warning: 299 - "…"` header per warning.
pub fn add_warnings<B>(response: &mut Response<B>, warnings: &[String]) {
    for warning in warnings {
        let quoted = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = HeaderValue::from_str(&format!("299 - \"{quoted}\"")) {
            response.headers_mut().append(http::header::WARNING, value);
        }
    }
}
