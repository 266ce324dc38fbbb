//! The kubeconfig document for a fake reached over TCP.

/// A kubeconfig with one cluster/context/user named `fakeapi` for `server_url` (no credentials).
pub fn render(server_url: &str) -> String {
    format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: fakeapi\n  cluster:\n    server: {server_url}\n\
         contexts:\n\
         - name: fakeapi\n  context:\n    cluster: fakeapi\n    user: fakeapi\n    namespace: default\n\
         current-context: fakeapi\n\
         users:\n\
         - name: fakeapi\n  user: {{}}\n"
    )
}
