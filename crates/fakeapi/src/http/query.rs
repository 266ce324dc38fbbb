//! Query parameters of list, watch, write and delete requests.

use super::status::Failure;
use crate::openapi::validate::FieldValidation;
use crate::selector::{FieldSelector, LabelSelector, ObjectFilter};
use crate::table::RowObject;
use http::StatusCode;
use std::time::Duration;

/// The query parameters the fake honours.
#[derive(Debug, Default)]
pub struct Query {
    /// `watch=true|1`.
    pub watch: bool,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `limit` (0: none).
    pub limit: usize,
    /// `continue`.
    pub continue_token: Option<String>,
    /// `labelSelector` text.
    pub label_selector: String,
    /// `fieldSelector` text.
    pub field_selector: String,
    /// `allowWatchBookmarks=true`.
    pub bookmarks: bool,
    /// `sendInitialEvents=true`.
    pub send_initial_events: bool,
    /// `timeoutSeconds`.
    pub timeout: Option<Duration>,
    /// `includeObject` of a Table request.
    pub row_object: RowObject,
    /// `fieldValidation` of a create, update or patch.
    pub field_validation: FieldValidation,
}

impl Query {
    /// Parses a raw query string.
    pub fn parse(raw: &str) -> Result<Self, Failure> {
        let mut q = Self::default();
        let truthy = |v: &str| v == "true" || v == "1";
        let number = |key: &str, v: &str| {
            v.parse::<u64>().map_err(|_| {
                Failure::new(
                    StatusCode::BAD_REQUEST,
                    "BadRequest",
                    format!("{key}={v:?} is not a number"),
                )
            })
        };
        for (key, value) in form_urlencoded::parse(raw.as_bytes()) {
            match key.as_ref() {
                "watch" => q.watch = truthy(&value),
                "resourceVersion" => q.resource_version = Some(value.into_owned()),
                "limit" => {
                    q.limit = usize::try_from(number("limit", &value)?).unwrap_or(usize::MAX)
                }
                "continue" if !value.is_empty() => q.continue_token = Some(value.into_owned()),
                "labelSelector" => q.label_selector = value.into_owned(),
                "fieldSelector" => q.field_selector = value.into_owned(),
                "allowWatchBookmarks" => q.bookmarks = truthy(&value),
                "sendInitialEvents" => q.send_initial_events = truthy(&value),
                "timeoutSeconds" => {
                    q.timeout = Some(Duration::from_secs(number("timeoutSeconds", &value)?))
                }
                "includeObject" => {
                    q.row_object = RowObject::parse(&value).ok_or_else(|| {
                        Failure::new(
                            StatusCode::BAD_REQUEST,
                            "BadRequest",
                            format!("includeObject={value:?} is not one of None, Metadata, Object"),
                        )
                    })?
                }
                "fieldValidation" => {
                    q.field_validation = FieldValidation::parse(&value).ok_or_else(|| {
                        Failure::new(
                            StatusCode::BAD_REQUEST,
                            "BadRequest",
                            format!("fieldValidation={value:?} is not one of Ignore, Warn, Strict"),
                        )
                    })?
                }
                _ => {}
            }
        }
        Ok(q)
    }

    /// The object filter of a list/watch in `namespace`.
    pub fn filter(&self, namespace: Option<String>) -> Result<ObjectFilter, Failure> {
        Ok(ObjectFilter {
            namespace,
            labels: LabelSelector::parse(&self.label_selector)?,
            fields: FieldSelector::parse(&self.field_selector)?,
        })
    }
}
