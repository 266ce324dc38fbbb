//! [`run`]: one antrea-controller replica. It waits until it holds the Lease, then watches the
//! cluster, computes the spans and serves them to the agents ([`crate::serve`]) while renewing
//! the Lease every retry period; a follower does not listen. A replica that
//! loses the Lease (another holds it, or no renewal succeeded for a whole Lease duration) stops
//! with an error, so that two replicas never compute and serve at once; its Deployment starts it
//! again as a follower.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use controlplane::Authenticator;

use k8s_openapi::api::coordination::v1::Lease;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};

use crate::error::ControllerError;
use crate::leader::{LeaseElector, LeaseTiming, Round};
use crate::serve::{ServeOptions, compute, lead};

/// What a replica needs to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The kubeconfig; `None`: the Pod's service account.
    pub kubeconfig: Option<PathBuf>,
    /// The Lease's Namespace and name.
    pub lease_namespace: String,
    pub lease_name: String,
    /// This replica's name in the Lease (its Pod's name in a Deployment).
    pub identity: String,
    pub timing: LeaseTiming,
    /// How the leader serves the spans; `None`: it computes them and serves nothing.
    pub serving: Option<Serving>,
}

/// How the leader serves.
#[derive(Debug, Clone)]
pub struct Serving {
    pub options: ServeOptions,
    /// Makes the authenticator of the agents' tokens from the replica's Kubernetes client.
    pub authenticator: fn(Client) -> Arc<dyn Authenticator>,
}

/// Runs until the Lease is lost or serving fails (there is no other way out but the
/// process's end).
pub async fn run(options: &Options) -> Result<(), ControllerError> {
    let client = connect(options).await?;
    let lease = format!("{}/{}", options.lease_namespace, options.lease_name);
    let elector = LeaseElector::new(
        Api::<Lease>::namespaced(client.clone(), &options.lease_namespace),
        &options.lease_name,
        &options.identity,
        options.timing,
    );
    wait_until_leading(&elector, &lease).await;
    tracing::info!("{} leads (Lease {lease})", options.identity);
    let work = async {
        match &options.serving {
            Some(serving) => {
                let address = serving.options.bind_address;
                let listener = tokio::net::TcpListener::bind(address)
                    .await
                    .map_err(|source| ControllerError::Bind { address, source })?;
                let authenticator = (serving.authenticator)(client.clone());
                lead(client, listener, &serving.options, authenticator).await
            }
            None => {
                compute(client).await;
                Ok(())
            }
        }
    };
    tokio::select! {
        lost = keep_leading(&elector, &lease) => Err(lost),
        done = work => done,
    }
}

async fn connect(options: &Options) -> Result<Client, ControllerError> {
    let config = match &options.kubeconfig {
        Some(path) => {
            let wrap = |source| ControllerError::Kubeconfig {
                path: path.clone(),
                source,
            };
            let kubeconfig = Kubeconfig::read_from(path).map_err(wrap)?;
            Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(wrap)?
        }
        None => Config::incluster().map_err(ControllerError::InCluster)?,
    };
    tracing::info!("Kubernetes API server {}", config.cluster_url);
    Client::try_from(config).map_err(ControllerError::Client)
}

/// Tries every retry period until this replica holds the Lease.
async fn wait_until_leading(elector: &LeaseElector, lease: &str) {
    let mut last_holder = None;
    loop {
        match elector.round().await {
            Ok(Round::Leading) => return,
            Ok(Round::Following { holder }) => {
                if !holder.is_empty() && last_holder.as_ref() != Some(&holder) {
                    tracing::info!("Lease {lease} held by {holder}: following");
                    last_holder = Some(holder);
                }
            }
            Err(error) => tracing::warn!("Lease {lease}: {error}; trying again"),
        }
        tokio::time::sleep(elector.timing().retry).await;
    }
}

/// Renews the Lease every retry period; returns why leading ended.
async fn keep_leading(elector: &LeaseElector, lease: &str) -> ControllerError {
    let timing = elector.timing();
    let mut renewed = Instant::now();
    loop {
        tokio::time::sleep(timing.retry).await;
        match elector.round().await {
            Ok(Round::Leading) => renewed = Instant::now(),
            Ok(Round::Following { holder }) => {
                return ControllerError::LostLease {
                    lease: lease.to_owned(),
                    holder,
                };
            }
            Err(error) if renewed.elapsed() >= timing.duration => {
                return ControllerError::RenewalFailed {
                    lease: lease.to_owned(),
                    after: timing.duration,
                    last_error: error.to_string(),
                };
            }
            Err(error) => tracing::warn!("Lease {lease}: renewal failed ({error}); trying again"),
        }
    }
}
