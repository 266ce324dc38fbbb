//! The one error type of every call in this crate, fake or native. Windows error codes that a
//! caller branches on (already exists, not found, function missing) get their own variants so the
//! caller's idempotency logic does not compare numbers.

/// What went wrong in a Windows OS call (or in its fake).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WinOsError {
    /// The function is not exported by this system (for example Wine 8's `iphlpapi.dll` has no
    /// `CreateIpForwardEntry2`), or the WMI namespace/class it needs does not exist.
    #[error("{function} is not available on this system")]
    Unsupported {
        /// The Windows function, WMI namespace or COM class that is missing.
        function: &'static str,
    },
    /// The object the call names does not exist (`ERROR_NOT_FOUND`, `ERROR_FILE_NOT_FOUND`).
    #[error("{function}: {what} not found")]
    NotFound {
        /// The call that failed.
        function: &'static str,
        /// What was looked for, in words.
        what: String,
    },
    /// The object the call creates exists already (`ERROR_OBJECT_ALREADY_EXISTS`).
    #[error("{function}: {what} already exists")]
    AlreadyExists {
        /// The call that failed.
        function: &'static str,
        /// What exists already, in words.
        what: String,
    },
    /// The caller passed a value Windows cannot take (for example an IPv6 next hop on an IPv4
    /// route).
    #[error("{function}: invalid argument: {detail}")]
    InvalidArgument {
        /// The call that refused the value.
        function: &'static str,
        /// Which value and why.
        detail: String,
    },
    /// Any other Windows error: a Win32 error code or an `HRESULT` (shown in hex).
    #[error("{function} failed with code {code:#010x}: {message}")]
    Os {
        /// The call that failed.
        function: &'static str,
        /// The Win32 error code or `HRESULT` bits.
        code: u32,
        /// The system's text for the code, when it has one.
        message: String,
    },
    /// Windows answered with data this crate cannot read (for example a WMI property of an
    /// unexpected type).
    #[error("{function} returned unexpected data: {detail}")]
    Malformed {
        /// The call whose answer was unreadable.
        function: &'static str,
        /// What was wrong with it.
        detail: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, WinOsError>;

/// Win32 `ERROR_FILE_NOT_FOUND`: some IP Helper calls use it for "no such row".
pub const ERROR_FILE_NOT_FOUND: u32 = 2;
/// Win32 `ERROR_NOT_FOUND`.
pub const ERROR_NOT_FOUND: u32 = 1168;
/// Win32 `ERROR_OBJECT_ALREADY_EXISTS`.
pub const ERROR_OBJECT_ALREADY_EXISTS: u32 = 5010;

impl WinOsError {
    /// Maps a Win32 error code of `function` to an error, turning the codes callers branch on
    /// into [`WinOsError::NotFound`] and [`WinOsError::AlreadyExists`]; `what` names the object.
    pub fn from_win32(function: &'static str, code: u32, what: impl FnOnce() -> String) -> Self {
        match code {
            ERROR_FILE_NOT_FOUND | ERROR_NOT_FOUND => WinOsError::NotFound {
                function,
                what: what(),
            },
            ERROR_OBJECT_ALREADY_EXISTS => WinOsError::AlreadyExists {
                function,
                what: what(),
            },
            _ => WinOsError::Os {
                function,
                code,
                message: String::new(),
            },
        }
    }

    /// Whether this is [`WinOsError::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, WinOsError::NotFound { .. })
    }

    /// Whether this is [`WinOsError::AlreadyExists`].
    pub fn is_already_exists(&self) -> bool {
        matches!(self, WinOsError::AlreadyExists { .. })
    }
}
