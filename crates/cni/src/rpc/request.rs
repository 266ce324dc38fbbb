//! Agent side: decoding a `CniCmdRequest` into checked CNI inputs, and building responses.

use super::pb;
use crate::spec::{CniArgs, CniError, CniResult, CniVersion, K8sArgs, NetConf, code};

/// A decoded CNI command as the agent sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct CmdRequest {
    /// `CNI_CONTAINERID`.
    pub container_id: String,
    /// `CNI_NETNS` (a netns path on Linux, an HCN namespace GUID on Windows; may be empty on DEL).
    pub netns: String,
    /// `CNI_IFNAME`.
    pub ifname: String,
    /// `CNI_ARGS`, parsed.
    pub args: CniArgs,
    /// The Kubernetes keys of `CNI_ARGS`.
    pub k8s: K8sArgs,
    /// `CNI_PATH`.
    pub path: String,
    /// The decoded network configuration.
    pub conf: NetConf,
    /// Its version.
    pub version: CniVersion,
    /// The configuration bytes as received (to pass to an IPAM plugin unchanged).
    pub raw_conf: Vec<u8>,
}

impl CmdRequest {
    /// Decodes and checks a request: missing `cni_args` or bad `CNI_ARGS` → code 4, malformed
    /// JSON → 6, unsupported `cniVersion` → 1.
    pub fn decode(request: pb::CniCmdRequest) -> Result<CmdRequest, CniError> {
        let a = request.cni_args.ok_or_else(|| {
            CniError::new(
                code::INVALID_ENVIRONMENT_VARIABLES,
                "request has no cni_args",
            )
        })?;
        let args = CniArgs::parse(&a.args)?;
        let conf = NetConf::parse(&a.network_configuration)?;
        let version = conf.version()?;
        Ok(CmdRequest {
            container_id: a.container_id,
            netns: a.netns,
            ifname: a.ifname,
            k8s: args.k8s(),
            args,
            path: a.path,
            conf,
            version,
            raw_conf: a.network_configuration,
        })
    }

    /// The `prevResult`, decoded (CHECK). Absent → code 2 ("prevResult" unsupported), malformed → 6.
    pub fn prev_result(&self) -> Result<CniResult, CniError> {
        let prev = self.conf.prev_result.as_ref().ok_or_else(|| {
            CniError::new(
                code::UNSUPPORTED_FIELD,
                "Network configuration does not support prevResult=<missing>",
            )
        })?;
        CniResult::from_json(prev)
    }
}

/// A success response carrying `result` converted to `version`.
pub fn result_response(result: &CniResult, version: CniVersion) -> pb::CniCmdResponse {
    pb::CniCmdResponse {
        cni_result: result.to_bytes(version),
        error: None,
    }
}

/// A failure response carrying `error` (its details go into the message, since the wire's
/// `details` are `Any` values).
pub fn error_response(error: &CniError) -> pb::CniCmdResponse {
    let message = if error.details.is_empty() {
        error.msg.clone()
    } else {
        format!("{}: {}", error.msg, error.details)
    };
    pb::CniCmdResponse {
        cni_result: Vec::new(),
        error: Some(pb::Error {
            code: i32::try_from(error.code).unwrap_or(0),
            message,
            details: Vec::new(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(conf: &str, args: &str) -> pb::CniCmdRequest {
        pb::CniCmdRequest {
            cni_args: Some(pb::CniCmdArgs {
                container_id: "c1".into(),
                netns: "/var/run/netns/x".into(),
                ifname: "eth0".into(),
                args: args.into(),
                path: "/opt/cni/bin".into(),
                network_configuration: conf.as_bytes().to_vec(),
            }),
        }
    }

    #[test]
    fn decodes_a_kubelet_request() {
        let r = CmdRequest::decode(req(
            r#"{"cniVersion":"0.4.0","name":"antrea","type":"antrea","ipam":{"type":"host-local"},"prevResult":{"ips":[{"version":"4","address":"10.1.0.5/24"}]}}"#,
            "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=c1",
        ))
        .unwrap();
        assert_eq!(r.version, CniVersion::V0_4_0);
        assert_eq!(
            (r.k8s.pod_name.as_str(), r.k8s.pod_namespace.as_str()),
            ("p", "ns")
        );
        assert_eq!(r.conf.ipam_type(), "host-local");
        assert_eq!(
            r.prev_result().unwrap().ips[0].address.to_string(),
            "10.1.0.5/24"
        );
    }

    #[test]
    fn decoding_errors_carry_spec_codes() {
        let code_of = |r| CmdRequest::decode(r).unwrap_err().code;
        assert_eq!(
            code_of(pb::CniCmdRequest { cni_args: None }),
            code::INVALID_ENVIRONMENT_VARIABLES
        );
        assert_eq!(code_of(req("{", "")), code::DECODING_FAILURE);
        assert_eq!(
            code_of(req(r#"{"cniVersion":"0.2.0"}"#, "")),
            code::INCOMPATIBLE_CNI_VERSION
        );
        assert_eq!(
            code_of(req(r#"{"cniVersion":"1.0.0"}"#, "bad")),
            code::INVALID_ENVIRONMENT_VARIABLES
        );
        let no_prev = CmdRequest::decode(req(r#"{"cniVersion":"1.0.0"}"#, "")).unwrap();
        assert_eq!(
            no_prev.prev_result().unwrap_err().code,
            code::UNSUPPORTED_FIELD
        );
    }

    #[test]
    fn responses_carry_result_or_error() {
        let ok = result_response(&CniResult::default(), CniVersion::V0_3_0);
        assert_eq!(ok.cni_result, br#"{"cniVersion":"0.3.0","dns":{}}"#);
        let err =
            error_response(&CniError::new(code::IPAM_FAILURE, "no IPs").with_details("range 0"));
        let e = err.error.unwrap();
        assert_eq!((e.code, e.message.as_str()), (101, "no IPs: range 0"));
        assert_eq!(
            pb::ErrorCode::try_from(e.code),
            Ok(pb::ErrorCode::IpamFailure)
        );
    }
}
