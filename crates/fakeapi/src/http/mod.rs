//! The Kubernetes REST API over the store: one request in, one response out.

mod body;
mod discovery;
mod query;
mod route;
mod status;
mod watch;

pub use body::{BodyError, ResponseBody, empty};

use crate::patch::PatchType;
use crate::resource::ResourceType;
use crate::server::{RecordedRequest, Shared};
use crate::store::{ContinueToken, UpdateScope, WatchStart};
use body::json_response;
use bytes::Bytes;
use http::{Method, Response, StatusCode, header, request::Parts};
use query::Query;
use route::Route;
use serde_json::Value;
use status::Failure;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Answers one request.
pub fn handle(shared: &Arc<Shared>, parts: &Parts, body: Bytes) -> Response<ResponseBody> {
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let path = parts.uri.path().to_owned();
    let raw_query = parts.uri.query().unwrap_or("").to_owned();
    tracing::debug!(method = %parts.method, %path, query = %raw_query, "fakeapi request");
    shared.record(RecordedRequest {
        method: parts.method.clone(),
        path: path.clone(),
        query: raw_query.clone(),
        content_type: content_type.clone(),
        body: body.clone(),
    });
    if !shared.available.load(Ordering::SeqCst) {
        return failure(Failure::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            "the fake API server is unavailable",
        ));
    }
    match dispatch(
        shared,
        &parts.method,
        &path,
        &raw_query,
        &content_type,
        &body,
    ) {
        Ok(response) => response,
        Err(f) => failure(f),
    }
}

fn failure(f: Failure) -> Response<ResponseBody> {
    json_response(f.code, f.to_status().to_string().into_bytes())
}

fn ok_object(code: StatusCode, object: &Arc<Value>) -> Result<Response<ResponseBody>, Failure> {
    Ok(json_response(code, object.to_string().into_bytes()))
}

fn dispatch(
    shared: &Arc<Shared>,
    method: &Method,
    path: &str,
    raw_query: &str,
    content_type: &str,
    body: &Bytes,
) -> Result<Response<ResponseBody>, Failure> {
    let route = {
        let store = shared.store();
        route::parse(path, store.resources())
    };
    let not_found = || {
        Failure::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("the server could not find the requested resource ({path})"),
        )
    };
    let route = route.ok_or_else(not_found)?;
    let query = Query::parse(raw_query)?;
    match (method, route) {
        (&Method::GET, Route::Version) => Ok(json_response(StatusCode::OK, discovery::version())),
        (&Method::GET, Route::CoreVersions) => {
            Ok(json_response(StatusCode::OK, discovery::core_versions()))
        }
        (&Method::GET, Route::Groups) => Ok(json_response(
            StatusCode::OK,
            discovery::groups(shared.store().resources()),
        )),
        (&Method::GET, Route::Resources { group, version }) => {
            discovery::resources(shared.store().resources(), &group, &version)
                .map(|j| json_response(StatusCode::OK, j))
                .ok_or_else(not_found)
        }
        (
            &Method::GET,
            Route::Collection {
                resource,
                namespace,
            },
        ) if query.watch => watch::open(shared, &resource, namespace, &query),
        (
            &Method::GET,
            Route::Collection {
                resource,
                namespace,
            },
        ) => list(shared, &resource, namespace, &query),
        (
            &Method::POST,
            Route::Collection {
                resource,
                namespace,
            },
        ) => {
            let object = parse_body(body)?;
            let created = shared
                .store()
                .create(&resource, namespace.as_deref(), object)?;
            ok_object(StatusCode::CREATED, &created)
        }
        (
            &Method::DELETE,
            Route::Collection {
                resource,
                namespace,
            },
        ) => delete_collection(shared, &resource, namespace, &query),
        (
            method,
            Route::Object {
                resource,
                namespace,
                name,
                subresource,
            },
        ) => {
            let scope = match subresource.as_deref() {
                None => UpdateScope::Main,
                Some("status") if resource.has_status => UpdateScope::Status,
                Some(_) => return Err(not_found()),
            };
            let namespace = namespace.unwrap_or_default();
            if resource.namespaced && namespace.is_empty() {
                return Err(not_found());
            }
            object_request(
                shared,
                method,
                &resource,
                &namespace,
                &name,
                scope,
                content_type,
                body,
            )
        }
        _ => Err(Failure::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("{method} is not supported on {path}"),
        )),
    }
}

#[allow(clippy::too_many_arguments)]
fn object_request(
    shared: &Arc<Shared>,
    method: &Method,
    resource: &ResourceType,
    namespace: &str,
    name: &str,
    scope: UpdateScope,
    content_type: &str,
    body: &Bytes,
) -> Result<Response<ResponseBody>, Failure> {
    let mut store = shared.store();
    match *method {
        Method::GET => {
            let object = store.get(resource, namespace, name).ok_or_else(|| {
                crate::StoreError::NotFound {
                    kind: resource.plural.clone(),
                    name: name.to_owned(),
                }
            })?;
            ok_object(StatusCode::OK, &object)
        }
        Method::PUT => {
            let object = parse_body(body)?;
            ok_object(
                StatusCode::OK,
                &store.replace(resource, namespace, name, object, scope)?,
            )
        }
        Method::PATCH => {
            let patch_type = PatchType::from_content_type(content_type).ok_or_else(|| {
                Failure::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "UnsupportedMediaType",
                    format!("the body of the request was in an unknown format ({content_type:?}); accepted: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json"),
                )
            })?;
            let patched = store.modify(resource, namespace, name, scope, |stored| {
                let mut object = stored.clone();
                // The stored resourceVersion is no precondition of a patch; only one the patch sets is.
                if let Ok(meta) = crate::store::meta::metadata_mut(&mut object) {
                    meta.remove("resourceVersion");
                }
                patch_type.apply(&mut object, body)?;
                Ok(object)
            })?;
            ok_object(StatusCode::OK, &patched)
        }
        Method::DELETE => {
            let expected_rv = delete_precondition(body)?;
            let deleted = store.delete(resource, namespace, name, expected_rv.as_deref())?;
            ok_object(StatusCode::OK, &deleted)
        }
        _ => Err(Failure::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("{method} is not supported on objects"),
        )),
    }
}

fn parse_body(body: &Bytes) -> Result<Value, Failure> {
    serde_json::from_slice(body).map_err(|e| {
        Failure::new(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            format!("request body is not a JSON object: {e}"),
        )
    })
}

/// `preconditions.resourceVersion` of a DeleteOptions body (empty body: none).
fn delete_precondition(body: &Bytes) -> Result<Option<String>, Failure> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let options = parse_body(body)?;
    Ok(options
        .pointer("/preconditions/resourceVersion")
        .and_then(Value::as_str)
        .map(str::to_owned))
}

fn list(
    shared: &Arc<Shared>,
    resource: &ResourceType,
    namespace: Option<String>,
    query: &Query,
) -> Result<Response<ResponseBody>, Failure> {
    let filter = query.filter(namespace)?;
    let token = query
        .continue_token
        .as_deref()
        .map(ContinueToken::decode)
        .transpose()?;
    let page = shared
        .store()
        .list(resource, &filter, query.limit, token.as_ref())?;
    Ok(json_response(
        StatusCode::OK,
        list_json(resource, page.rv, page.next.as_ref(), &page.items),
    ))
}

fn delete_collection(
    shared: &Arc<Shared>,
    resource: &ResourceType,
    namespace: Option<String>,
    query: &Query,
) -> Result<Response<ResponseBody>, Failure> {
    let filter = query.filter(namespace)?;
    let mut store = shared.store();
    let page = store.list(resource, &filter, 0, None)?;
    let mut deleted = Vec::with_capacity(page.items.len());
    for object in page.items {
        let meta = |f: &str| {
            object
                .pointer(&format!("/metadata/{f}"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        deleted.push(store.delete(resource, &meta("namespace"), &meta("name"), None)?);
    }
    Ok(json_response(
        StatusCode::OK,
        list_json(resource, store.resource_version(), None, &deleted),
    ))
}

/// A `<Kind>List` document, written item by item.
fn list_json(
    resource: &ResourceType,
    rv: u64,
    next: Option<&ContinueToken>,
    items: &[Arc<Value>],
) -> Vec<u8> {
    let mut meta = serde_json::json!({"resourceVersion": rv.to_string()});
    if let Some(next) = next {
        meta["continue"] = Value::String(next.encode());
    }
    let head = serde_json::json!({"kind": format!("{}List", resource.kind), "apiVersion": resource.api_version(), "metadata": meta});
    let mut out = head.to_string().into_bytes();
    out.pop();
    out.extend_from_slice(b",\"items\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing a Value into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut out, item.as_ref());
    }
    out.extend_from_slice(b"]}");
    out
}

/// Where a watch with these query parameters starts.
fn watch_start(query: &Query) -> Result<WatchStart, Failure> {
    match query.resource_version.as_deref() {
        None | Some("") | Some("0") => Ok(WatchStart::InitialState {
            end_bookmark: query.send_initial_events && query.bookmarks,
        }),
        Some(rv) => rv.parse().map(WatchStart::From).map_err(|_| {
            Failure::new(
                StatusCode::BAD_REQUEST,
                "BadRequest",
                format!("resourceVersion {rv:?} is not a valid version"),
            )
        }),
    }
}
