//! TokenRequest (`POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token`, what `kubectl
//! create token` and the kubelet call): a new token of a stored ServiceAccount, bound to a
//! stored Pod when `spec.boundObjectRef` names one, answered as the API server answers it.

use serde_json::{Value, json};

use crate::http::Failure;
use crate::server::Shared;
use http::StatusCode;

/// The token's lifetime when the request gives none (the API server's default).
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// The shortest lifetime the API server grants.
const MIN_EXPIRATION_SECONDS: i64 = 600;

fn bad_request(message: impl Into<String>) -> Failure {
    Failure::new(StatusCode::BAD_REQUEST, "BadRequest", message)
}

/// The TokenRequest answered for `request`, made for ServiceAccount `namespace/name`.
pub fn answer(
    shared: &Shared,
    namespace: &str,
    name: &str,
    request: &Value,
) -> Result<Value, Failure> {
    if shared
        .stored::<k8s_openapi::api::core::v1::ServiceAccount>(namespace, name)
        .is_none()
    {
        return Err(Failure::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("serviceaccounts {name:?} not found"),
        ));
    }
    let spec = request.get("spec").cloned().unwrap_or_else(|| json!({}));
    let expiration = match spec.get("expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_EXPIRATION_SECONDS,
        Some(value) => value
            .as_i64()
            .filter(|s| *s >= MIN_EXPIRATION_SECONDS)
            .ok_or_else(|| {
                bad_request(format!(
                    "spec.expirationSeconds: may not specify a duration less than {MIN_EXPIRATION_SECONDS} seconds, got {value}"
                ))
            })?,
    };
    let token = match spec.get("boundObjectRef").filter(|r| !r.is_null()) {
        None => shared.issue_service_account_token(namespace, name),
        Some(bound) => {
            let kind = bound.get("kind").and_then(Value::as_str).unwrap_or("");
            let pod = bound.get("name").and_then(Value::as_str).unwrap_or("");
            if kind != "Pod" {
                return Err(bad_request(format!(
                    "spec.boundObjectRef.kind: only Pod is served here, not {kind:?}"
                )));
            }
            if pod.is_empty() {
                return Err(bad_request("spec.boundObjectRef.name: Required value"));
            }
            let wanted_uid = bound.get("uid").and_then(Value::as_str).unwrap_or("");
            let uid = shared
                .stored::<k8s_openapi::api::core::v1::Pod>(namespace, pod)
                .and_then(|p| {
                    p.pointer("/metadata/uid")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
            if let Some(uid) = uid.filter(|uid| !wanted_uid.is_empty() && wanted_uid != uid) {
                return Err(Failure::new(
                    StatusCode::CONFLICT,
                    "Conflict",
                    format!(
                        "the UID in the bound object reference ({wanted_uid}) does not match the UID in record ({uid}); the object might have been deleted and then recreated"
                    ),
                ));
            }
            shared.issue_pod_bound_token(namespace, name, pod)?
        }
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    let expires = k8s_openapi::jiff::Timestamp::from_second(now.saturating_add(expiration))
        .unwrap_or_default();
    let mut spec = spec;
    spec["expirationSeconds"] = json!(expiration);
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": null},
        "spec": spec,
        "status": {
            "token": token,
            "expirationTimestamp": k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(expires),
        },
    }))
}
