//! The lab's Services on the hosts (`up --api fake`): the Service objects in the API server
//! (and the EndpointSlice of `kube-dns`, which has no selector),
//! the DNS answerer (`antrea-lab dns`) with the Services' records in the Pod the `kube-dns`
//! Service selects, and `lab-ext`'s route to the load-balancer IP through Node 1 (what a
//! cloud load balancer or a BGP speaker would give the outside).

use std::fs;

use super::agent::publish_services;
use super::cluster::Cluster;
use super::common::start_answerer;
use crate::dns::Zone;
use crate::error::{LabError, Result};
use crate::host::command::ip;
use crate::layout::Layout;
use crate::plan::EXT_NETNS;
use crate::services::{DNS_PORT, LB_IP, LB_NODE, dns_pod, dns_records, lab_services};
use crate::state::State;

/// Creates the Services, starts the DNS answerer and routes the load-balancer IP.
pub fn set_up(layout: &Layout, cluster: &Cluster, state: &State) -> Result<()> {
    let topology = &state.topology;
    publish_services(cluster, state)?;
    let zone =
        Zone::new(dns_records(&lab_services(topology))).map_err(|message| LabError::Output {
            tool: "antrea-lab dns records",
            message,
        })?;
    let records = layout.dns_records();
    fs::create_dir_all(layout.dns_dir())
        .and_then(|()| fs::write(&records, zone.to_text()))
        .map_err(|source| LabError::File {
            what: "DNS records",
            path: records.clone(),
            source,
        })?;
    start_answerer(
        "dns",
        &layout.dns_dir(),
        &dns_pod(topology).name(),
        &[
            "--port",
            &DNS_PORT.to_string(),
            "--records",
            &records.display().to_string(),
        ],
    )?;
    ip(&[
        "-n",
        EXT_NETNS,
        "route",
        "add",
        &format!("{LB_IP}/32"),
        "via",
        &LB_NODE.ip().to_string(),
    ])
    .map(drop)
}
