//! JSON-RPC 1.0 messages (RFC 7047 §4): a request has a method, params and a non-null id; a
//! notification has a null id; a response has `result`, `error` and the request's id.

use serde_json::{Map, Value as Json};

use crate::data::abbreviate;

/// One JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A call that expects a response with the same `id`.
    Request {
        /// Method name.
        method: String,
        /// Positional parameters.
        params: Vec<Json>,
        /// Correlation id (any JSON but `null`).
        id: Json,
    },
    /// A call without a response (`id` is `null`).
    Notification {
        /// Method name.
        method: String,
        /// Positional parameters.
        params: Vec<Json>,
    },
    /// The answer to a request.
    Response {
        /// The request's id.
        id: Json,
        /// `Ok(result)`, or `Err(error)` when the error member is not `null`.
        result: Result<Json, Json>,
    },
}

/// Why a JSON object is not a JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a JSON-RPC message ({reason}): {json}")]
pub struct MessageError {
    /// What is wrong.
    pub reason: &'static str,
    /// The message, abbreviated.
    pub json: String,
}

impl Message {
    /// Classifies a decoded JSON object.
    pub fn parse(json: Json) -> Result<Message, MessageError> {
        let err = |reason, json: &Json| MessageError {
            reason,
            json: abbreviate(json),
        };
        let Json::Object(mut obj) = json else {
            return Err(err("not an object", &json));
        };
        let id = obj.remove("id");
        match obj.remove("method") {
            Some(Json::String(method)) => {
                let params = match obj.remove("params") {
                    Some(Json::Array(params)) => params,
                    Some(other) => return Err(err("params is not an array", &other)),
                    None => return Err(err("request without params", &Json::Object(obj))),
                };
                match id {
                    None | Some(Json::Null) => Ok(Message::Notification { method, params }),
                    Some(id) => Ok(Message::Request { method, params, id }),
                }
            }
            Some(other) => Err(err("method is not a string", &other)),
            None => {
                let Some(id) = id else {
                    return Err(err("response without id", &Json::Object(obj)));
                };
                let result = obj.remove("result").unwrap_or(Json::Null);
                match obj.remove("error").unwrap_or(Json::Null) {
                    Json::Null => Ok(Message::Response {
                        id,
                        result: Ok(result),
                    }),
                    error => Ok(Message::Response {
                        id,
                        result: Err(error),
                    }),
                }
            }
        }
    }

    /// The message as a JSON object.
    pub fn to_json(&self) -> Json {
        let mut obj = Map::new();
        match self {
            Message::Request { method, params, id } => {
                obj.insert("method".into(), Json::String(method.clone()));
                obj.insert("params".into(), Json::Array(params.clone()));
                obj.insert("id".into(), id.clone());
            }
            Message::Notification { method, params } => {
                obj.insert("method".into(), Json::String(method.clone()));
                obj.insert("params".into(), Json::Array(params.clone()));
                obj.insert("id".into(), Json::Null);
            }
            Message::Response { id, result } => {
                let (result, error) = match result {
                    Ok(r) => (r.clone(), Json::Null),
                    Err(e) => (Json::Null, e.clone()),
                };
                obj.insert("result".into(), result);
                obj.insert("error".into(), error);
                obj.insert("id".into(), id.clone());
            }
        }
        Json::Object(obj)
    }

    /// The message's bytes on the wire.
    pub fn emit(&self) -> Vec<u8> {
        self.to_json().to_string().into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_each_kind() {
        assert_eq!(
            Message::parse(json!({"method":"echo","params":[],"id":"echo"})),
            Ok(Message::Request {
                method: "echo".into(),
                params: vec![],
                id: json!("echo")
            })
        );
        assert_eq!(
            Message::parse(json!({"method":"update","params":[1,{}],"id":null})),
            Ok(Message::Notification {
                method: "update".into(),
                params: vec![json!(1), json!({})]
            })
        );
        assert_eq!(
            Message::parse(json!({"result":["a"],"error":null,"id":3})),
            Ok(Message::Response {
                id: json!(3),
                result: Ok(json!(["a"]))
            })
        );
        assert_eq!(
            Message::parse(json!({"result":null,"error":{"error":"x"},"id":3})),
            Ok(Message::Response {
                id: json!(3),
                result: Err(json!({"error":"x"}))
            })
        );
    }

    #[test]
    fn rejects_malformed_messages() {
        for bad in [
            json!([]),
            json!({}),
            json!({"method":1,"params":[],"id":1}),
            json!({"method":"x","params":{},"id":1}),
            json!({"method":"x","id":1}),
            json!({"result":1,"error":null}),
        ] {
            assert!(Message::parse(bad.clone()).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn emit_then_parse_is_identity() {
        for m in [
            Message::Request {
                method: "transact".into(),
                params: vec![json!("db"), json!({"op":"comment"})],
                id: json!(7),
            },
            Message::Notification {
                method: "cancel".into(),
                params: vec![json!(7)],
            },
            Message::Response {
                id: json!("echo"),
                result: Ok(json!([])),
            },
            Message::Response {
                id: json!(1),
                result: Err(json!("unknown method")),
            },
        ] {
            let json: Json = serde_json::from_slice(&m.emit()).unwrap();
            assert_eq!(Message::parse(json), Ok(m));
        }
    }
}
