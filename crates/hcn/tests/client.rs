//! The real client's constructor on this host. Under Wine (which has no computenetwork.dll) it
//! must be the one `Unavailable` error — the test binary starting at all shows there is no
//! static import of the DLL. On a Windows host with HNS it must enumerate networks.
#![cfg(windows)]

use hcn::schema::{HostComputeQuery, QueryFilter};
use hcn::{HcnApi, HcnClient, HcnError};

/// Wine passes the Unix environment through; its runner (tools/wine/run.sh) sets WINEPREFIX.
fn under_wine() -> bool {
    std::env::var_os("WINEPREFIX").is_some()
}

#[test]
fn constructor_reports_unavailable_or_the_client_works() {
    match HcnClient::new() {
        Err(HcnError::Unavailable { dll, reason }) => {
            assert_eq!(dll, "computenetwork.dll");
            let message = HcnError::Unavailable { dll, reason }.to_string();
            assert!(
                message.starts_with("the Host Compute Network API is unavailable: computenetwork.dll: cannot load it"),
                "{message}"
            );
            eprintln!("{message}");
        }
        Err(other) => panic!("expected Unavailable, got {other}"),
        Ok(client) => {
            assert!(
                !under_wine(),
                "Wine has no HCN, yet computenetwork.dll loaded with every export"
            );
            client
                .enumerate_networks(&HostComputeQuery::new(QueryFilter::All))
                .expect("enumerate networks");
        }
    }
}
