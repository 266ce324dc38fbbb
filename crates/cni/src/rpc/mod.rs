//! Antrea's CNI gRPC protocol (`antrea_io.antrea.pkg.apis.cni.v1beta1.Cni`), our STATUS/GC
//! extension service (`antrea_rs.cni.v1alpha1.CniLifecycle`), the plugin-side client and the
//! agent-side server pieces.

mod client;
mod request;
mod server;

/// Code generated from `proto/` by the build script, one module per protobuf package.
#[allow(missing_docs, missing_debug_implementations, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/protocol.rs"));
}

/// Generated messages and the `Cni` client/server of Antrea's protocol.
pub use generated::antrea_io::antrea::pkg::apis::cni::v1beta1 as pb;

/// Generated `CniLifecycle` client/server (STATUS and GC).
pub use generated::antrea_rs::cni::v1alpha1 as lifecycle;

pub use client::{AgentClient, CallError, Command, DEFAULT_READY_WAIT, DEFAULT_TIMEOUT};
pub use request::{CmdRequest, error_response, result_response};
pub use server::{serve, serve_on};

/// Antrea's CNI gRPC API version, named in incompatible-API errors.
pub const ANTREA_CNI_API_VERSION: &str = "1.0.0-beta.1";

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::pb;
    use crate::spec::code;

    #[test]
    fn service_and_method_paths_are_antreas() {
        assert_eq!(
            pb::cni_server::SERVICE_NAME,
            "antrea_io.antrea.pkg.apis.cni.v1beta1.Cni"
        );
        assert_eq!(
            super::lifecycle::cni_lifecycle_server::SERVICE_NAME,
            "antrea_rs.cni.v1alpha1.CniLifecycle"
        );
    }

    #[test]
    fn messages_use_antreas_field_numbers() {
        let request = pb::CniCmdRequest {
            cni_args: Some(pb::CniCmdArgs {
                container_id: "c".into(),
                netns: "n".into(),
                ifname: "i".into(),
                args: "a".into(),
                path: "p".into(),
                network_configuration: b"{}".to_vec(),
            }),
        };
        let inner = [
            0x0a, 1, b'c', 0x12, 1, b'n', 0x1a, 1, b'i', 0x22, 1, b'a', 0x2a, 1, b'p', 0x32, 2,
            b'{', b'}',
        ];
        let mut expected = vec![0x0a, inner.len() as u8];
        expected.extend_from_slice(&inner);
        assert_eq!(request.encode_to_vec(), expected);
        let response = pb::CniCmdResponse {
            cni_result: b"r".to_vec(),
            error: Some(pb::Error {
                code: pb::ErrorCode::IpamFailure as i32,
                message: "m".into(),
                details: Vec::new(),
            }),
        };
        let bytes = [0x0a, 1, b'r', 0x12, 5, 0x08, 101, 0x12, 1, b'm'];
        assert_eq!(response.encode_to_vec(), bytes);
        assert_eq!(pb::CniCmdResponse::decode(&bytes[..]).unwrap(), response);
    }

    #[test]
    fn error_code_values_are_antreas() {
        use pb::ErrorCode as E;
        let table = [
            (E::Unknown, 0),
            (E::IncompatibleCniVersion, code::INCOMPATIBLE_CNI_VERSION),
            (E::UnsupportedField, code::UNSUPPORTED_FIELD),
            (E::UnknownContainer, code::UNKNOWN_CONTAINER),
            (
                E::InvalidEnvironmentVariables,
                code::INVALID_ENVIRONMENT_VARIABLES,
            ),
            (E::IoFailure, code::IO_FAILURE),
            (E::DecodingFailure, code::DECODING_FAILURE),
            (E::InvalidNetworkConfig, code::INVALID_NETWORK_CONFIG),
            (E::TryAgainLater, code::TRY_AGAIN_LATER),
            (E::IpamFailure, code::IPAM_FAILURE),
            (E::ConfigInterfaceFailure, code::CONFIG_INTERFACE_FAILURE),
            (E::CheckInterfaceFailure, code::CHECK_INTERFACE_FAILURE),
            (E::UnknownRpcError, code::UNKNOWN_RPC_ERROR),
            (E::IncompatibleApiVersion, code::INCOMPATIBLE_API_VERSION),
        ];
        for (variant, value) in table {
            assert_eq!(variant as i32, value as i32, "{variant:?}");
        }
    }
}
