//! Discovery documents: `/version`, `/api`, `/apis` and per-group-version resource lists (with
//! the short names and categories kubectl resolves).

use crate::resource::ResourceType;
use serde_json::{Value, json};

/// The version the fake reports (`/version`, the OpenAPI documents' `info`).
pub const SERVER_VERSION: &str = "v1.33.0-fakeapi";

/// The `/version` document (`version.Info`).
pub fn version() -> Vec<u8> {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": SERVER_VERSION,
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "",
        "compiler": "rustc",
        "platform": "fakeapi",
    })
    .to_string()
    .into_bytes()
}

/// The `/api` document.
pub fn core_versions() -> Vec<u8> {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    })
    .to_string()
    .into_bytes()
}

/// The `/apis` document: every non-core group with its versions.
pub fn groups(resources: &[ResourceType]) -> Vec<u8> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for r in resources.iter().filter(|r| !r.group.is_empty()) {
        match groups.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, versions)) if !versions.contains(&r.version) => {
                versions.push(r.version.clone())
            }
            Some(_) => {}
            None => groups.push((r.group.clone(), vec![r.version.clone()])),
        }
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(name, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
                .collect();
            json!({"name": name, "preferredVersion": versions[0].clone(), "versions": versions})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        .to_string()
        .into_bytes()
}

/// The `APIResourceList` of one group/version, `None` if nothing is served there.
pub fn resources(resources: &[ResourceType], group: &str, version: &str) -> Option<Vec<u8>> {
    let verbs = [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    let mut list = Vec::new();
    for r in resources
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        let singular = r.kind.to_lowercase();
        let mut entry = json!({"name": r.plural, "singularName": singular, "namespaced": r.namespaced, "kind": r.kind, "verbs": verbs});
        if !r.short_names.is_empty() {
            entry["shortNames"] = json!(r.short_names);
        }
        if !r.categories.is_empty() {
            entry["categories"] = json!(r.categories);
        }
        list.push(entry);
        if r.has_status {
            list.push(json!({"name": format!("{}/status", r.plural), "singularName": "", "namespaced": r.namespaced, "kind": r.kind, "verbs": ["get", "patch", "update"]}));
        }
    }
    if list.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": list}).to_string().into_bytes())
}
