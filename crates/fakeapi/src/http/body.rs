//! The response body type: a whole JSON document or a streamed watch.

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};

/// Why a streamed response body stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// `set_available(false)` broke the open watch.
    #[error("the fake API server became unavailable")]
    Unavailable,
}

/// Body of every response the fake sends.
pub type ResponseBody = UnsyncBoxBody<Bytes, BodyError>;

/// A complete body.
pub fn full(bytes: impl Into<Bytes>) -> ResponseBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// A JSON response with `code`.
pub fn json_response(code: StatusCode, json: Vec<u8>) -> Response<ResponseBody> {
    let mut response = Response::new(full(json));
    *response.status_mut() = code;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// An empty body.
pub fn empty() -> ResponseBody {
    full(Bytes::new())
}
