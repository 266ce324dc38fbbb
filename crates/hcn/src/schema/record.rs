//! `ErrorRecord`: the JSON HNS writes to the ErrorRecord output of a failed call,
//! `{"Success":false,"Error":"<message>","ErrorCode":<HRESULT in decimal>}`.

use serde::{Deserialize, Serialize};

use crate::Hresult;

/// An HNS result/error record. The message may be localized: match on the code, not the text.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ErrorRecord {
    /// `Success`.
    pub success: bool,
    /// `Error`: the message (HNS often ends it with a space).
    pub error: String,
    /// `ErrorCode`: the HRESULT as an unsigned number, when HNS gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<u32>,
}

impl ErrorRecord {
    /// The record HNS would write for a failure `code` with `message`.
    pub fn failure(code: Hresult, message: impl Into<String>) -> Self {
        ErrorRecord {
            success: false,
            error: message.into(),
            error_code: Some(code.0),
        }
    }

    /// The record's message without the trailing whitespace HNS adds.
    pub fn message(&self) -> &str {
        self.error.trim_end()
    }
}
