//! Why an object could not be taken into the computation.

/// An object the API server should have refused, or a field this Node cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error(
        "{object}: label selector operator {operator:?} is not In, NotIn, Exists or DoesNotExist"
    )]
    BadOperator { object: String, operator: String },
    #[error("{object}: label selector operator {operator} needs {expected}")]
    BadValues {
        object: String,
        operator: String,
        expected: &'static str,
    },
    #[error("{object}: protocol {protocol:?} is not TCP, UDP or SCTP")]
    BadProtocol { object: String, protocol: String },
    #[error("{object}: port {port} is outside 1..65535")]
    BadPort { object: String, port: i32 },
    #[error("{object}: endPort {end} is below port {start} or used without a numeric port")]
    BadEndPort {
        object: String,
        start: i32,
        end: i32,
    },
    #[error("{object}: ipBlock {text:?} is not a CIDR")]
    BadCidr { object: String, text: String },
    #[error("{object}: a peer needs a podSelector, a namespaceSelector or an ipBlock")]
    EmptyPeer { object: String },
    #[error("{object}: policyTypes entry {value:?} is not Ingress or Egress")]
    BadPolicyType { object: String, value: String },
    #[error("a {kind} without metadata.name")]
    Unnamed { kind: &'static str },
}
