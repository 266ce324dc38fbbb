//! The columns of each printed kind and the cells of one object, as the upstream apiserver's
//! printers define them (names, types, which are `-o wide` only — priority 1 — and how each
//! value is derived). Kinds without a printer of their own get NAME and AGE.

use super::age;
use serde_json::{Value, json};

/// One column of a Table (`metav1.TableColumnDefinition`).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Header as sent; kubectl prints it upper-cased.
    pub name: &'static str,
    /// The cell type (`string` for every column here).
    pub kind: &'static str,
    /// `name` for the object's name column, else empty.
    pub format: &'static str,
    /// What the column shows.
    pub description: &'static str,
    /// 0: always shown; 1: only with `-o wide`.
    pub priority: u8,
}

impl Column {
    const fn new(name: &'static str, description: &'static str) -> Self {
        Self {
            name,
            kind: "string",
            format: "",
            description,
            priority: 0,
        }
    }

    const fn wide(self) -> Self {
        Self {
            priority: 1,
            ..self
        }
    }

    /// The `columnDefinitions` entry.
    pub fn definition(&self) -> Value {
        json!({"name": self.name, "type": self.kind, "format": self.format, "description": self.description, "priority": self.priority})
    }
}

const NAME: Column = Column {
    name: "Name",
    kind: "string",
    format: "name",
    description: "Name must be unique within a namespace.",
    priority: 0,
};
const AGE: Column = Column::new(
    "Age",
    "CreationTimestamp is the time the object was created.",
);

/// How objects of one kind are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Printer {
    /// core/v1 Pods.
    Pod,
    /// core/v1 Nodes.
    Node,
    /// core/v1 Services.
    Service,
    /// core/v1 Namespaces.
    Namespace,
    /// discovery.k8s.io/v1 EndpointSlices.
    EndpointSlice,
    /// networking.k8s.io/v1 NetworkPolicies.
    NetworkPolicy,
    /// coordination.k8s.io/v1 Leases.
    Lease,
    /// Every other kind: NAME and AGE.
    Generic,
}

impl Printer {
    /// The printer of `group`'s `kind`.
    pub fn of(group: &str, kind: &str) -> Self {
        match (group, kind) {
            ("", "Pod") => Self::Pod,
            ("", "Node") => Self::Node,
            ("", "Service") => Self::Service,
            ("", "Namespace") => Self::Namespace,
            ("discovery.k8s.io", "EndpointSlice") => Self::EndpointSlice,
            ("networking.k8s.io", "NetworkPolicy") => Self::NetworkPolicy,
            ("coordination.k8s.io", "Lease") => Self::Lease,
            _ => Self::Generic,
        }
    }

    /// The columns, in order.
    pub fn columns(self) -> Vec<Column> {
        let mut columns = vec![NAME];
        columns.extend(match self {
            Self::Pod => vec![
                Column::new("Ready", "The aggregate readiness state of this pod for accepting traffic."),
                Column::new("Status", "The aggregate status of the containers in this pod."),
                Column::new("Restarts", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
                AGE,
                Column::new("IP", "IP address allocated to the pod.").wide(),
                Column::new("Node", "Name of the node the pod is assigned to.").wide(),
                Column::new("Nominated Node", "Name of the node the scheduler nominated for the pod.").wide(),
                Column::new("Readiness Gates", "The readiness gates of the pod that are true, of all of them.").wide(),
            ],
            Self::Node => vec![
                Column::new("Status", "The status of the node."),
                Column::new("Roles", "The roles of the node."),
                AGE,
                Column::new("Version", "Kubelet version reported by the node."),
                Column::new("Internal-IP", "The first internal IP of the node.").wide(),
                Column::new("External-IP", "The first external IP of the node.").wide(),
                Column::new("OS-Image", "OS image reported by the node.").wide(),
                Column::new("Kernel-Version", "Kernel version reported by the node.").wide(),
                Column::new("Container-Runtime", "Container runtime and version reported by the node.").wide(),
            ],
            Self::Service => vec![
                Column::new("Type", "The type of the service."),
                Column::new("Cluster-IP", "The cluster IP of the service."),
                Column::new("External-IP", "The external IPs of the service."),
                Column::new("Port(s)", "The ports of the service."),
                AGE,
                Column::new("Selector", "Pods with labels matching this selector are the service's endpoints.").wide(),
            ],
            Self::Namespace => vec![
                Column::new("Status", "The phase of the namespace."),
                AGE,
            ],
            Self::EndpointSlice => vec![
                Column::new("AddressType", "The type of address held by the slice."),
                Column::new("Ports", "The ports of the slice."),
                Column::new("Endpoints", "The addresses of the slice's endpoints."),
                AGE,
            ],
            Self::NetworkPolicy => vec![
                Column::new("Pod-Selector", "The pods the policy applies to."),
                AGE,
            ],
            Self::Lease => vec![
                Column::new("Holder", "The holder of the lease."),
                AGE,
            ],
            Self::Generic => vec![AGE],
        });
        columns
    }

    /// The cells of `object` at `now` (seconds since the Unix epoch), one per column.
    pub fn cells(self, object: &Value, now: i64) -> Vec<Value> {
        let name = text(object, "/metadata/name");
        let age = age::since(
            object
                .pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now,
        );
        let mut cells = vec![json!(name)];
        let rest: Vec<String> = match self {
            Self::Pod => return pod(object, name, age),
            Self::Node => node(object, age),
            Self::Service => service(object, age),
            Self::Namespace => vec![text(object, "/status/phase"), age],
            Self::EndpointSlice => endpoint_slice(object, age),
            Self::NetworkPolicy => vec![
                label_selector(object.pointer("/spec/podSelector").unwrap_or(&Value::Null)),
                age,
            ],
            Self::Lease => vec![or_none(text(object, "/spec/holderIdentity")), age],
            Self::Generic => vec![age],
        };
        cells.extend(rest.into_iter().map(Value::String));
        cells
    }
}

/// The string at `pointer`, "" if absent.
fn text(object: &Value, pointer: &str) -> String {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

fn items<'a>(object: &'a Value, pointer: &str) -> &'a [Value] {
    object
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn or_none(value: String) -> String {
    if value.is_empty() {
        "<none>".to_owned()
    } else {
        value
    }
}

fn pod(object: &Value, name: String, age: String) -> Vec<Value> {
    let statuses = items(object, "/status/containerStatuses");
    let total = items(object, "/spec/containers").len();
    let mut ready = 0;
    let mut restarts = 0;
    let mut reason = text(object, "/status/phase");
    let status_reason = text(object, "/status/reason");
    if !status_reason.is_empty() {
        reason = status_reason;
    }
    let mut running = false;
    for status in statuses.iter().rev() {
        restarts += status
            .get("restartCount")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let waiting = text(status, "/state/waiting/reason");
        let terminated = status.pointer("/state/terminated");
        if !waiting.is_empty() {
            reason = waiting;
        } else if let Some(terminated) = terminated {
            let why = text(terminated, "/reason");
            let code = terminated
                .get("exitCode")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let signal = terminated
                .get("signal")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            reason = match (why.is_empty(), signal) {
                (false, _) => why,
                (true, 0) => format!("ExitCode:{code}"),
                (true, signal) => format!("Signal:{signal}"),
            };
        } else if status.pointer("/state/running").is_some()
            && status.get("ready").and_then(Value::as_bool) == Some(true)
        {
            running = true;
            ready += 1;
        }
    }
    if reason == "Completed" && running {
        reason = "Running".to_owned();
    }
    if object.pointer("/metadata/deletionTimestamp").is_some() {
        reason = "Terminating".to_owned();
    }
    let gates = items(object, "/spec/readinessGates");
    let readiness_gates = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let conditions = items(object, "/status/conditions");
        let met = gates
            .iter()
            .filter(|gate| {
                let kind = text(gate, "/conditionType");
                conditions
                    .iter()
                    .any(|c| text(c, "/type") == kind && text(c, "/status") == "True")
            })
            .count();
        format!("{met}/{}", gates.len())
    };
    vec![
        json!(name),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts.to_string()),
        json!(age),
        json!(or_none(text(object, "/status/podIP"))),
        json!(or_none(text(object, "/spec/nodeName"))),
        json!(or_none(text(object, "/status/nominatedNodeName"))),
        json!(readiness_gates),
    ]
}

fn node(object: &Value, age: String) -> Vec<String> {
    let ready = items(object, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == "Ready")
        .map(|c| match text(c, "/status").as_str() {
            "True" => "Ready",
            "False" => "NotReady",
            _ => "Unknown",
        })
        .unwrap_or("Unknown");
    let mut status = ready.to_owned();
    if object
        .pointer("/spec/unschedulable")
        .and_then(Value::as_bool)
        == Some(true)
    {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<String> = object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(key, value)| {
                    if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
                        (!role.is_empty()).then(|| role.to_owned())
                    } else if key == "kubernetes.io/role" {
                        value.as_str().map(str::to_owned)
                    } else {
                        None
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    roles.dedup();
    let address = |kind: &str| {
        or_none(
            items(object, "/status/addresses")
                .iter()
                .find(|a| text(a, "/type") == kind)
                .map(|a| text(a, "/address"))
                .unwrap_or_default(),
        )
    };
    let info = |field: &str| or_none(text(object, &format!("/status/nodeInfo/{field}")));
    vec![
        status,
        or_none(roles.join(",")),
        age,
        text(object, "/status/nodeInfo/kubeletVersion"),
        address("InternalIP"),
        address("ExternalIP"),
        info("osImage"),
        info("kernelVersion"),
        info("containerRuntimeVersion"),
    ]
}

fn service(object: &Value, age: String) -> Vec<String> {
    let kind = match text(object, "/spec/type") {
        kind if kind.is_empty() => "ClusterIP".to_owned(),
        kind => kind,
    };
    let external_ips: Vec<String> = items(object, "/spec/externalIPs")
        .iter()
        .filter_map(|ip| ip.as_str().map(str::to_owned))
        .collect();
    let external = match kind.as_str() {
        "ExternalName" => text(object, "/spec/externalName"),
        "LoadBalancer" => {
            let mut ips: Vec<String> = items(object, "/status/loadBalancer/ingress")
                .iter()
                .map(|i| match text(i, "/ip") {
                    ip if ip.is_empty() => text(i, "/hostname"),
                    ip => ip,
                })
                .filter(|ip| !ip.is_empty())
                .collect();
            ips.extend(external_ips);
            if ips.is_empty() {
                "<pending>".to_owned()
            } else {
                ips.join(",")
            }
        }
        _ => or_none(external_ips.join(",")),
    };
    let ports: Vec<String> = items(object, "/spec/ports")
        .iter()
        .map(|p| {
            let number = |f: &str| p.get(f).and_then(Value::as_i64).unwrap_or(0);
            let protocol = match text(p, "/protocol") {
                protocol if protocol.is_empty() => "TCP".to_owned(),
                protocol => protocol,
            };
            match number("nodePort") {
                0 => format!("{}/{protocol}", number("port")),
                node_port => format!("{}:{node_port}/{protocol}", number("port")),
            }
        })
        .collect();
    let selector = object
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .map(|s| {
            let mut pairs: Vec<String> = s
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect();
            pairs.sort();
            pairs.join(",")
        })
        .unwrap_or_default();
    vec![
        kind,
        or_none(text(object, "/spec/clusterIP")),
        external,
        or_none(ports.join(",")),
        age,
        or_none(selector),
    ]
}

fn endpoint_slice(object: &Value, age: String) -> Vec<String> {
    let ports: Vec<String> = items(object, "/ports")
        .iter()
        .map(|p| match p.get("port").and_then(Value::as_i64) {
            Some(port) => port.to_string(),
            None => "<unset>".to_owned(),
        })
        .collect();
    let addresses: Vec<&str> = items(object, "/endpoints")
        .iter()
        .flat_map(|e| items(e, "/addresses"))
        .filter_map(Value::as_str)
        .collect();
    let endpoints = match addresses.len() {
        0 => "<unset>".to_owned(),
        n if n <= 3 => addresses.join(","),
        n => format!("{} + {} more...", addresses[..3].join(","), n - 3),
    };
    let ports = if ports.is_empty() {
        "<unset>".to_owned()
    } else {
        ports.join(",")
    };
    vec![text(object, "/addressType"), ports, endpoints, age]
}

/// A `metav1.LabelSelector` in the text form (`app=web,tier in (a,b)`); `<none>` when it selects
/// everything.
fn label_selector(selector: &Value) -> String {
    let mut parts: Vec<String> = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    for expression in items(selector, "/matchExpressions") {
        let key = text(expression, "/key");
        let values: Vec<&str> = items(expression, "/values")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        parts.push(match text(expression, "/operator").as_str() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key,
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other} ({})", values.join(",")),
        });
    }
    or_none(parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(printer: Printer, object: Value) -> Vec<Value> {
        let now = "2026-01-01T00:10:00Z"
            .parse::<k8s_openapi::jiff::Timestamp>()
            .unwrap()
            .as_second();
        let cells = printer.cells(&object, now);
        assert_eq!(cells.len(), printer.columns().len());
        cells
    }

    #[test]
    fn a_running_pod_prints_like_kubectl_against_a_real_server() {
        let pod = json!({
            "metadata": {"name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"nodeName": "n1", "containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "podIP": "10.0.0.5", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}}},
                {"name": "b", "ready": false, "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
            ]},
        });
        assert_eq!(
            cells(Printer::Pod, pod),
            vec![
                json!("web"),
                json!("1/2"),
                json!("CrashLoopBackOff"),
                json!("3"),
                json!("10m"),
                json!("10.0.0.5"),
                json!("n1"),
                json!("<none>"),
                json!("<none>"),
            ]
        );
    }

    #[test]
    fn node_service_slice_and_policy_cells() {
        let node = json!({"metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.10.0.11"}],
                "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Debian", "kernelVersion": "6.1", "containerRuntimeVersion": "containerd://1.7"}}});
        let node = cells(Printer::Node, node);
        assert_eq!(node[1], json!("Ready,SchedulingDisabled"));
        assert_eq!(node[2], json!("control-plane"));
        assert_eq!(node[3], json!("<unknown>"));
        assert_eq!(node[5..7], [json!("10.10.0.11"), json!("<none>")]);
        let service = json!({"metadata": {"name": "s"}, "spec": {"type": "NodePort", "clusterIP": "10.96.0.9",
            "selector": {"b": "2", "a": "1"},
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}});
        assert_eq!(
            cells(Printer::Service, service)[1..7],
            [
                json!("NodePort"),
                json!("10.96.0.9"),
                json!("<none>"),
                json!("80:30080/TCP,53/UDP"),
                json!("<unknown>"),
                json!("a=1,b=2")
            ]
        );
        let slice = json!({"metadata": {"name": "s-1"}, "addressType": "IPv4", "ports": [{"port": 80}, {}],
            "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}, {"addresses": ["10.0.0.3"]}, {"addresses": ["10.0.0.4"]}]});
        assert_eq!(
            cells(Printer::EndpointSlice, slice)[1..4],
            [
                json!("IPv4"),
                json!("80,<unset>"),
                json!("10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...")
            ]
        );
        let policy = json!({"metadata": {"name": "p"}, "spec": {"podSelector": {"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}, {"key": "x", "operator": "DoesNotExist"}]}}});
        assert_eq!(
            cells(Printer::NetworkPolicy, policy)[1],
            json!("app=web,tier in (a,b),!x")
        );
        let everything = json!({"metadata": {"name": "p"}, "spec": {"podSelector": {}}});
        assert_eq!(
            cells(Printer::NetworkPolicy, everything)[1],
            json!("<none>")
        );
    }
}
