//! The real client's constructor on this host. Under Wine (which has no computenetwork.dll) it
//! must be the one `Unavailable` error — the test binary starting at all shows there is no
//! static import of the DLL. On a Windows host with HNS it must enumerate networks.
#![cfg(windows)]

use hcn::schema::{HostComputeQuery, QueryFilter};
use hcn::{HcnApi, HcnClient, HcnError};

#[test]
fn constructor_reports_unavailable_or_the_client_works() {
    match HcnClient::new() {
        Err(HcnError::Unavailable { dll, reason }) => {
            assert_eq!(dll, "computenetwork.dll");
            assert!(!reason.is_empty());
            let message = HcnError::Unavailable { dll, reason }.to_string();
            assert!(
                message.starts_with(
                    "the Host Compute Network API is unavailable: computenetwork.dll: "
                ),
                "{message}"
            );
        }
        Err(other) => panic!("expected Unavailable, got {other}"),
        Ok(client) => {
            client
                .enumerate_networks(&HostComputeQuery::new(QueryFilter::All))
                .expect("enumerate networks");
        }
    }
}
