//! SubjectAccessReview: whether a user (name, groups) may do what the review asks, decided from
//! the stored ClusterRoleBindings and the ClusterRoles they name, as Kubernetes' RBAC
//! authorizer does: a binding applies when one of its subjects is the user, one of the user's
//! groups, or the user's ServiceAccount; its role allows when one rule matches the verb and
//! either the non-resource path (`nonResourceURLs`: exact, `*`, or a prefix ending in `*`) or
//! the resource (`apiGroups`, `resources`, `resourceNames`). Namespaced Roles and RoleBindings
//! are not stored by the fake, so they grant nothing.

use serde_json::{Value, json};

use crate::http::Failure;

/// What the review asks.
enum Request<'a> {
    NonResource {
        path: &'a str,
        verb: &'a str,
    },
    Resource {
        group: &'a str,
        resource: String,
        name: &'a str,
        verb: &'a str,
    },
}

/// The SubjectAccessReview answered for the POSTed `review` against `bindings` and `roles`
/// (the stored ClusterRoleBindings and ClusterRoles).
pub fn review(review: &Value, bindings: &[Value], roles: &[Value]) -> Result<Value, Failure> {
    let spec = review.get("spec").cloned().unwrap_or_else(|| json!({}));
    let user = spec.get("user").and_then(Value::as_str).unwrap_or("");
    let groups: Vec<&str> = strings(spec.get("groups"));
    let mut problems = Vec::new();
    if user.is_empty() && groups.is_empty() {
        problems.push("spec.user,spec.groups: Invalid value: null: at least one of user or group must be specified");
    }
    let request = match (
        spec.get("nonResourceAttributes"),
        spec.get("resourceAttributes"),
    ) {
        (Some(attributes), None) => Some(Request::NonResource {
            path: text(attributes, "path"),
            verb: text(attributes, "verb"),
        }),
        (None, Some(attributes)) => {
            let sub = text(attributes, "subresource");
            let resource = text(attributes, "resource");
            Some(Request::Resource {
                group: text(attributes, "group"),
                resource: if sub.is_empty() {
                    resource.to_owned()
                } else {
                    format!("{resource}/{sub}")
                },
                name: text(attributes, "name"),
                verb: text(attributes, "verb"),
            })
        }
        _ => {
            problems.push("spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified");
            None
        }
    };
    let Some(request) = request.filter(|_| problems.is_empty()) else {
        return Err(Failure::new(
            http::StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!(
                "SubjectAccessReview.authorization.k8s.io \"\" is invalid: {}",
                problems.join(", ")
            ),
        ));
    };
    let status = match allowing_binding(&request, user, &groups, bindings, roles) {
        Some(reason) => json!({"allowed": true, "reason": reason}),
        None => json!({"allowed": false}),
    };
    Ok(json!({
        "kind": "SubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": null},
        "spec": spec,
        "status": status,
    }))
}

/// The RBAC reason of the first binding whose role allows `request` to the user.
fn allowing_binding(
    request: &Request<'_>,
    user: &str,
    groups: &[&str],
    bindings: &[Value],
    roles: &[Value],
) -> Option<String> {
    for binding in bindings {
        let role_ref = binding.get("roleRef")?;
        if text(role_ref, "kind") != "ClusterRole" {
            continue;
        }
        let role_name = text(role_ref, "name");
        let Some(subject) = binding
            .get("subjects")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find_map(|s| subject_match(s, user, groups))
        else {
            continue;
        };
        let Some(role) = roles
            .iter()
            .find(|r| r.pointer("/metadata/name").and_then(Value::as_str) == Some(role_name))
        else {
            continue;
        };
        let rules = role.get("rules").and_then(Value::as_array);
        if rules
            .into_iter()
            .flatten()
            .any(|rule| rule_allows(rule, request))
        {
            let binding_name = binding
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            return Some(format!(
                "RBAC: allowed by ClusterRoleBinding {binding_name:?} of ClusterRole {role_name:?} to {subject}"
            ));
        }
    }
    None
}

/// How a binding's `subject` names the user (`User "x"`, `Group "g"`, `ServiceAccount "name/ns"`).
fn subject_match(subject: &Value, user: &str, groups: &[&str]) -> Option<String> {
    let name = text(subject, "name");
    match text(subject, "kind") {
        "User" if name == user => Some(format!("User {name:?}")),
        "Group" if groups.contains(&name) => Some(format!("Group {name:?}")),
        "ServiceAccount" => {
            let namespace = text(subject, "namespace");
            (user == format!("system:serviceaccount:{namespace}:{name}"))
                .then(|| format!("ServiceAccount \"{name}/{namespace}\""))
        }
        _ => None,
    }
}

fn rule_allows(rule: &Value, request: &Request<'_>) -> bool {
    let listed = |key: &str, value: &str| {
        strings(rule.get(key))
            .iter()
            .any(|item| *item == "*" || *item == value)
    };
    match request {
        Request::NonResource { path, verb } => {
            listed("verbs", verb)
                && strings(rule.get("nonResourceURLs")).iter().any(|url| {
                    *url == "*"
                        || url == path
                        || url
                            .strip_suffix('*')
                            .is_some_and(|prefix| path.starts_with(prefix))
                })
        }
        Request::Resource {
            group,
            resource,
            name,
            verb,
        } => {
            let names = strings(rule.get("resourceNames"));
            listed("verbs", verb)
                && listed("apiGroups", group)
                && listed("resources", resource)
                && (names.is_empty() || names.contains(name))
        }
    }
}

fn text<'a>(object: &'a Value, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or("")
}

fn strings(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles() -> Vec<Value> {
        vec![json!({
            "metadata": {"name": "metrics-reader"},
            "rules": [{"nonResourceURLs": ["/metrics", "/v1/*"], "verbs": ["get"]}],
        })]
    }

    fn bindings() -> Vec<Value> {
        vec![json!({
            "metadata": {"name": "prometheus"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "metrics-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}],
        })]
    }

    fn ask(user: &str, path: &str, verb: &str) -> Value {
        let spec = json!({"spec": {"user": user, "groups": ["system:authenticated"], "nonResourceAttributes": {"path": path, "verb": verb}}});
        review(&spec, &bindings(), &roles()).unwrap()["status"].clone()
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_prefix() {
        let sa = "system:serviceaccount:monitoring:prometheus";
        assert_eq!(
            ask(sa, "/metrics", "get"),
            json!({"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"prometheus\" of ClusterRole \"metrics-reader\" to ServiceAccount \"prometheus/monitoring\""})
        );
        assert_eq!(ask(sa, "/v1/pipeline", "get")["allowed"], true);
        assert_eq!(ask(sa, "/metricsx", "get")["allowed"], false);
        assert_eq!(ask(sa, "/metrics", "post")["allowed"], false);
        assert_eq!(
            ask("system:serviceaccount:other:prometheus", "/metrics", "get")["allowed"],
            false
        );
    }

    #[test]
    fn a_review_must_name_a_subject_and_one_kind_of_attributes() {
        let failure = review(
            &json!({"spec": {"nonResourceAttributes": {"path": "/"}}}),
            &[],
            &[],
        )
        .unwrap_err();
        assert_eq!(failure.code, http::StatusCode::UNPROCESSABLE_ENTITY);
        let failure = review(&json!({"spec": {"user": "u"}}), &[], &[]).unwrap_err();
        assert_eq!(failure.code, http::StatusCode::UNPROCESSABLE_ENTITY);
    }
}
