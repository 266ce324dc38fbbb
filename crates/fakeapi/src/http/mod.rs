//! The Kubernetes REST API over the store: one request in, one response out.

mod body;
mod discovery;
mod fields;
mod query;
mod route;
mod status;
mod watch;

pub use body::{ResponseBody, empty};
pub use discovery::SERVER_VERSION;

use crate::error::Unavailable;
use crate::openapi;
use crate::patch::PatchType;
use crate::resource::ResourceType;
use crate::server::{RecordedRequest, Shared};
use crate::store::{ContinueToken, UpdateScope, WatchStart};
use crate::table::{self, TableFormat};
use body::json_response;
use bytes::Bytes;
use http::{Method, Response, StatusCode, header, request::Parts};
use query::Query;
use route::Route;
use serde_json::{Value, json};
pub(crate) use status::Failure;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Answers one request (recorded in the request log even when the server is unavailable).
pub fn handle(
    shared: &Arc<Shared>,
    parts: &Parts,
    body: Bytes,
) -> Result<Response<ResponseBody>, Unavailable> {
    let header_text = |name: header::HeaderName| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let request = RecordedRequest {
        method: parts.method.clone(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or("").to_owned(),
        content_type: header_text(header::CONTENT_TYPE),
        accept: header_text(header::ACCEPT),
        body,
    };
    tracing::debug!(method = %request.method, path = %request.path, query = %request.query, "fakeapi request");
    shared.record(request.clone());
    if !shared.available.load(Ordering::SeqCst) {
        return Err(Unavailable);
    }
    Ok(dispatch(shared, &request).unwrap_or_else(failure))
}

fn failure(f: Failure) -> Response<ResponseBody> {
    json_response(f.code, f.to_status().to_string().into_bytes())
}

fn ok_object(code: StatusCode, object: &Arc<Value>) -> Result<Response<ResponseBody>, Failure> {
    Ok(json_response(code, object.to_string().into_bytes()))
}

/// One object addressed by a request.
struct Target {
    resource: ResourceType,
    namespace: String,
    name: String,
    scope: UpdateScope,
}

fn dispatch(
    shared: &Arc<Shared>,
    request: &RecordedRequest,
) -> Result<Response<ResponseBody>, Failure> {
    let (method, path, body) = (&request.method, request.path.as_str(), &request.body);
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
    if request
        .content_type
        .starts_with("application/vnd.kubernetes.protobuf")
    {
        return Err(Failure::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format ({}); this server reads JSON only",
                request.content_type
            ),
        ));
    }
    let query = Query::parse(&request.query)?;
    let table = |resource: &ResourceType| {
        table::requested(&request.accept).map(|version| {
            TableFormat::new(&resource.group, &resource.kind, version, query.row_object)
        })
    };
    match (method, route) {
        (&Method::GET, Route::Version) => Ok(json_response(StatusCode::OK, discovery::version())),
        (&Method::GET, Route::CoreVersions) => {
            Ok(json_response(StatusCode::OK, discovery::core_versions()))
        }
        (&Method::GET, Route::Groups) => Ok(json_response(
            StatusCode::OK,
            discovery::groups(shared.store().resources()),
        )),
        (&Method::GET, Route::OpenApiV3Index) => Ok(json_response(
            StatusCode::OK,
            openapi::v3_index(shared.store().resources())
                .to_string()
                .into_bytes(),
        )),
        (&Method::GET, Route::OpenApiV3 { group, version }) => {
            openapi::v3(shared.store().resources(), &group, &version)
                .map(|doc| json_response(StatusCode::OK, doc.to_string().into_bytes()))
                .ok_or_else(not_found)
        }
        (&Method::GET, Route::OpenApiV2) => {
            let accept = request.accept.as_str();
            let json = accept.is_empty()
                || accept.split(',').any(|media| {
                    let media = media.split(';').next().unwrap_or("").trim();
                    matches!(media, "application/json" | "*/*" | "application/*")
                });
            if !json {
                return Err(Failure::new(
                    StatusCode::NOT_ACCEPTABLE,
                    "NotAcceptable",
                    format!("only application/json is served here, not {accept:?}"),
                ));
            }
            Ok(json_response(
                StatusCode::OK,
                openapi::v2(shared.store().resources())
                    .to_string()
                    .into_bytes(),
            ))
        }
        (&Method::POST, Route::TokenReviews) => {
            let review = parse_body(body)?;
            let answer = shared.tokens().review(&review, |namespace, name| {
                let pod = shared.stored::<k8s_openapi::api::core::v1::Pod>(namespace, name)?;
                pod.pointer("/metadata/uid")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })?;
            Ok(json_response(
                StatusCode::CREATED,
                answer.to_string().into_bytes(),
            ))
        }
        (&Method::POST, Route::SubjectAccessReviews) => {
            let review = parse_body(body)?;
            let (bindings, roles) = {
                let store = shared.store();
                let all = |kind: &str| -> Result<Vec<Value>, Failure> {
                    let resource =
                        store.resource(&format!("rbac.authorization.k8s.io/v1/{kind}"))?;
                    let page =
                        store.list(resource, &crate::selector::ObjectFilter::default(), 0, None)?;
                    Ok(page.items.iter().map(|o| o.as_ref().clone()).collect())
                };
                (all("clusterrolebindings")?, all("clusterroles")?)
            };
            let answer = crate::review::access::review(&review, &bindings, &roles)?;
            Ok(json_response(
                StatusCode::CREATED,
                answer.to_string().into_bytes(),
            ))
        }
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
        ) if query.watch => {
            let table = table(&resource);
            watch::open(shared, &resource, namespace, &query, table)
        }
        (
            &Method::GET,
            Route::Collection {
                resource,
                namespace,
            },
        ) => list(shared, &resource, namespace, &query, table(&resource)),
        (
            &Method::POST,
            Route::Collection {
                resource,
                namespace,
            },
        ) => {
            let object = parse_body(body)?;
            let warnings = fields::check(&resource, &object, query.field_validation)?;
            let created = shared
                .store()
                .create(&resource, namespace.as_deref(), object)?;
            let mut response = ok_object(StatusCode::CREATED, &created)?;
            fields::add_warnings(&mut response, &warnings);
            Ok(response)
        }
        (
            &Method::DELETE,
            Route::Collection {
                resource,
                namespace,
            },
        ) => delete_collection(shared, &resource, namespace, &query),
        (
            &Method::POST,
            Route::Object {
                resource,
                namespace: Some(namespace),
                name,
                subresource: Some(subresource),
            },
        ) if resource.group.is_empty()
            && resource.plural == "serviceaccounts"
            && subresource == "token" =>
        {
            let request = parse_body(body)?;
            let answer = crate::review::token_request::answer(shared, &namespace, &name, &request)?;
            Ok(json_response(
                StatusCode::CREATED,
                answer.to_string().into_bytes(),
            ))
        }
        (
            _,
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
            let table = table(&resource);
            let target = Target {
                resource,
                namespace,
                name,
                scope,
            };
            object_request(shared, request, &target, table, &query)
        }
        _ => Err(Failure::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("{method} is not supported on {path}"),
        )),
    }
}

fn object_request(
    shared: &Arc<Shared>,
    request: &RecordedRequest,
    target: &Target,
    table: Option<TableFormat>,
    query: &Query,
) -> Result<Response<ResponseBody>, Failure> {
    let (content_type, body) = (request.content_type.as_str(), &request.body);
    let Target {
        resource,
        namespace,
        name,
        scope,
    } = target;
    let (namespace, name, scope) = (namespace.as_str(), name.as_str(), *scope);
    let mut store = shared.store();
    match request.method {
        Method::GET => {
            let object = store.require(resource, namespace, name)?;
            match table {
                Some(table) => {
                    let rv = object.pointer("/metadata/resourceVersion").cloned();
                    let printed = table.table([object.as_ref()], json!({"resourceVersion": rv}));
                    Ok(json_response(
                        StatusCode::OK,
                        printed.to_string().into_bytes(),
                    ))
                }
                None => ok_object(StatusCode::OK, &object),
            }
        }
        Method::PUT => {
            let object = parse_body(body)?;
            let warnings = fields::check(resource, &object, query.field_validation)?;
            let mut response = ok_object(
                StatusCode::OK,
                &store.replace(resource, namespace, name, object, scope)?,
            )?;
            fields::add_warnings(&mut response, &warnings);
            Ok(response)
        }
        Method::PATCH => {
            let patch_type = PatchType::from_content_type(content_type).ok_or_else(|| {
                Failure::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "UnsupportedMediaType",
                    format!("the body of the request was in an unknown format ({content_type:?}); accepted: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json"),
                )
            })?;
            // The patched object is computed and checked first; the store stays locked, so the
            // change below starts from the same stored object.
            let mut object = store.require(resource, namespace, name)?.as_ref().clone();
            // The stored resourceVersion is no precondition of a patch; only one the patch sets is.
            if let Ok(meta) = crate::store::meta::metadata_mut(&mut object) {
                meta.remove("resourceVersion");
            }
            patch_type.apply(&mut object, body)?;
            let warnings = fields::check(resource, &object, query.field_validation)?;
            let patched = store.modify(resource, namespace, name, scope, |_| Ok(object))?;
            let mut response = ok_object(StatusCode::OK, &patched)?;
            fields::add_warnings(&mut response, &warnings);
            Ok(response)
        }
        Method::DELETE => {
            let expected_rv = delete_precondition(body)?;
            let deleted = store.delete(resource, namespace, name, expected_rv.as_deref())?;
            ok_object(StatusCode::OK, &deleted)
        }
        _ => Err(Failure::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("{} is not supported on objects", request.method),
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
    table: Option<TableFormat>,
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
    if let Some(table) = table {
        let mut metadata = json!({"resourceVersion": page.rv.to_string()});
        if let Some(next) = &page.next {
            metadata["continue"] = Value::String(next.encode());
        }
        let printed = table.table(page.items.iter().map(AsRef::as_ref), metadata);
        return Ok(json_response(
            StatusCode::OK,
            printed.to_string().into_bytes(),
        ));
    }
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
