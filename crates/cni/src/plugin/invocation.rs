//! The `CNI_*` environment of one plugin invocation, checked per command as libcni's skeleton
//! does: a missing or malformed variable is error code 4 naming the variable.

use crate::spec::{CniError, code};

/// A CNI command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `ADD`.
    Add,
    /// `DEL`.
    Del,
    /// `CHECK` (0.4.0+).
    Check,
    /// `VERSION`.
    Version,
    /// `STATUS` (1.1.0+).
    Status,
    /// `GC` (1.1.0+).
    Gc,
}

impl Operation {
    /// The `CNI_COMMAND` value.
    pub fn env_name(self) -> &'static str {
        match self {
            Operation::Add => "ADD",
            Operation::Del => "DEL",
            Operation::Check => "CHECK",
            Operation::Version => "VERSION",
            Operation::Status => "STATUS",
            Operation::Gc => "GC",
        }
    }

    fn parse(text: &str) -> Option<Operation> {
        [
            Operation::Add,
            Operation::Del,
            Operation::Check,
            Operation::Version,
            Operation::Status,
            Operation::Gc,
        ]
        .into_iter()
        .find(|o| o.env_name() == text)
    }

    /// Whether the command concerns one attachment (needs container ID and interface name).
    fn per_attachment(self) -> bool {
        matches!(self, Operation::Add | Operation::Del | Operation::Check)
    }
}

/// The checked environment. Variables a command does not need are empty when absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// `CNI_COMMAND`.
    pub operation: Operation,
    /// `CNI_CONTAINERID`.
    pub container_id: String,
    /// `CNI_NETNS` (optional for DEL).
    pub netns: String,
    /// `CNI_IFNAME`.
    pub ifname: String,
    /// `CNI_ARGS`, unparsed (the agent parses it).
    pub args: String,
    /// `CNI_PATH`.
    pub path: String,
}

impl Invocation {
    /// Reads and checks the environment.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Invocation, CniError> {
        let command = env("CNI_COMMAND")
            .filter(|c| !c.is_empty())
            .ok_or_else(|| missing(&["CNI_COMMAND"]))?;
        let operation = Operation::parse(&command).ok_or_else(|| {
            CniError::new(
                code::INVALID_ENVIRONMENT_VARIABLES,
                format!("unknown CNI_COMMAND: {command}"),
            )
        })?;
        let get = |name| env(name).unwrap_or_default();
        let invocation = Invocation {
            operation,
            container_id: get("CNI_CONTAINERID"),
            netns: get("CNI_NETNS"),
            ifname: get("CNI_IFNAME"),
            args: get("CNI_ARGS"),
            path: get("CNI_PATH"),
        };
        if operation.per_attachment() {
            let mut absent = Vec::new();
            let required = [
                ("CNI_CONTAINERID", &invocation.container_id),
                ("CNI_NETNS", &invocation.netns),
                ("CNI_IFNAME", &invocation.ifname),
                ("CNI_PATH", &invocation.path),
            ];
            for (name, value) in required {
                let optional = name == "CNI_NETNS" && operation == Operation::Del;
                if value.is_empty() && !optional {
                    absent.push(name);
                }
            }
            if !absent.is_empty() {
                return Err(missing(&absent));
            }
            check_container_id(&invocation.container_id)?;
            check_ifname(&invocation.ifname)?;
        }
        Ok(invocation)
    }
}

fn missing(names: &[&str]) -> CniError {
    CniError::new(
        code::INVALID_ENVIRONMENT_VARIABLES,
        format!("required env variables [{}] missing", names.join(",")),
    )
}

/// A container ID starts with an alphanumeric and continues with alphanumerics, `_`, `.`, `-`.
fn check_container_id(id: &str) -> Result<(), CniError> {
    let valid = id.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if valid {
        Ok(())
    } else {
        Err(CniError::new(
            code::INVALID_ENVIRONMENT_VARIABLES,
            "invalid characters in CNI_CONTAINERID",
        )
        .with_details(id.to_owned()))
    }
}

/// An interface name is at most 15 bytes, not `.`/`..`, without `/`, `:` or whitespace.
fn check_ifname(name: &str) -> Result<(), CniError> {
    let reason = if name.len() > 15 {
        Some("longer than 15 characters")
    } else if name == "." || name == ".." {
        Some("is . or ..")
    } else if name
        .chars()
        .any(|c| c == '/' || c == ':' || c.is_whitespace())
    {
        Some("contains '/', ':' or whitespace")
    } else {
        None
    };
    match reason {
        None => Ok(()),
        Some(r) => Err(CniError::new(
            code::INVALID_ENVIRONMENT_VARIABLES,
            format!("invalid CNI_IFNAME {name:?}: {r}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    const FULL: [(&str, &str); 6] = [
        ("CNI_COMMAND", "ADD"),
        ("CNI_CONTAINERID", "abc-1.2_3"),
        ("CNI_NETNS", "/var/run/netns/x"),
        ("CNI_IFNAME", "eth0"),
        ("CNI_ARGS", "K8S_POD_NAME=p"),
        ("CNI_PATH", "/opt/cni/bin"),
    ];

    #[test]
    fn reads_a_complete_environment() {
        let i = Invocation::from_env(&env_of(&FULL)).unwrap();
        assert_eq!(
            (i.operation, i.container_id.as_str(), i.ifname.as_str()),
            (Operation::Add, "abc-1.2_3", "eth0")
        );
        assert_eq!(i.args, "K8S_POD_NAME=p");
    }

    #[test]
    fn each_missing_variable_is_named() {
        for drop in ["CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_PATH"] {
            let vars: Vec<_> = FULL.iter().copied().filter(|(k, _)| *k != drop).collect();
            let e = Invocation::from_env(&env_of(&vars)).unwrap_err();
            assert_eq!(e.code, code::INVALID_ENVIRONMENT_VARIABLES);
            assert_eq!(e.msg, format!("required env variables [{drop}] missing"));
        }
        let e = Invocation::from_env(&env_of(&[])).unwrap_err();
        assert_eq!(e.msg, "required env variables [CNI_COMMAND] missing");
    }

    #[test]
    fn del_does_not_need_a_netns_and_version_needs_nothing() {
        let vars: Vec<_> = FULL
            .iter()
            .copied()
            .filter(|(k, _)| *k != "CNI_NETNS")
            .map(|(k, v)| (k, if k == "CNI_COMMAND" { "DEL" } else { v }))
            .collect();
        assert_eq!(Invocation::from_env(&env_of(&vars)).unwrap().netns, "");
        for cmd in ["VERSION", "STATUS", "GC"] {
            assert!(
                Invocation::from_env(&env_of(&[("CNI_COMMAND", cmd)])).is_ok(),
                "{cmd}"
            );
        }
    }

    #[test]
    fn rejects_bad_values() {
        for (k, v) in [
            ("CNI_COMMAND", "FOO"),
            ("CNI_CONTAINERID", "-abc"),
            ("CNI_CONTAINERID", "a/b"),
            ("CNI_IFNAME", "a-very-long-ifname0"),
            ("CNI_IFNAME", ".."),
            ("CNI_IFNAME", "eth 0"),
        ] {
            let vars: Vec<_> = FULL
                .iter()
                .map(|&(n, x)| (n, if n == k { v } else { x }))
                .collect();
            let e = Invocation::from_env(&env_of(&vars)).unwrap_err();
            assert_eq!(e.code, code::INVALID_ENVIRONMENT_VARIABLES, "{k}={v}");
        }
    }
}
