//! The NetworkPolicy truth-table lab shared by the tests that check policy: the cluster model
//! (Namespaces x, y, z with Pods a, b, c each; x and y on Node n1, z on n2; TCP and UDP ports 80
//! and 81), the scenarios (policies and label changes, each with what Kubernetes allows), and
//! the reachability matrices with their printer, and the verdict over probes of a table (a denied
//! cell that connects fails at once, a probe that could not run fails, only allowed cells are
//! re-probed, and those re-probes are counted). The tests drive the same scenarios
//! through `ofproto/trace` (`pipeline`) and through real packets between real Pods (`agent`).

pub mod catalog;
pub mod model;
pub mod observation;
pub mod reachability;
pub mod scenario;
pub mod verdict;

pub use catalog::scenarios;
pub use model::{Cluster, LabelChange, NAMESPACES, POD_NAMES, PORTS, Pod, Port, Protocol};
pub use observation::{Cell, Observation, cell_name};
pub use reachability::Reachability;
pub use scenario::{Policy, Rule, Scenario};
pub use verdict::{Verdict, judge};
