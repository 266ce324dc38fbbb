//! [`TableGraph`]: the declared tables in pipeline order — by stage, then in declaration order —
//! numbered densely from 0, and the goto targets the renderers ask it for. Flows only go forward
//! (`goto_table` must name a later table), which this order makes natural: a flow continues at
//! the next table, or jumps ahead to a named table or to the first table of a later stage.

use std::sync::LazyLock;

use openflow::msg::flow_mod::TABLE_ALL;

use super::{FEATURES, Feature, Stage, Table};

/// Why declarations do not make a pipeline.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GraphError {
    #[error("table {table} is declared twice: by the {first} feature and by the {second} feature")]
    Duplicate {
        table: String,
        first: String,
        second: String,
    },
    #[error("{count} tables declared; OpenFlow table ids end at 254 (255 means every table)")]
    TooMany { count: usize },
}

/// The tables of a pipeline in id order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableGraph {
    tables: Vec<Table>,
}

impl TableGraph {
    /// The pipeline of `features`' tables: ordered by stage, then by the order of `features`,
    /// then by each feature's own order; ids from 0 in that order. Each name must be declared
    /// once.
    pub fn new(features: &[Feature<'_>]) -> Result<TableGraph, GraphError> {
        let mut declared: Vec<(Table, &str)> = Vec::new();
        for feature in features {
            for &table in feature.tables {
                if let Some((_, first)) = declared.iter().find(|(t, _)| t.name() == table.name()) {
                    return Err(GraphError::Duplicate {
                        table: table.name().to_owned(),
                        first: (*first).to_owned(),
                        second: feature.name.to_owned(),
                    });
                }
                declared.push((table, feature.name));
            }
        }
        if declared.len() > usize::from(TABLE_ALL) {
            return Err(GraphError::TooMany {
                count: declared.len(),
            });
        }
        // A stable sort keeps the declaration order within a stage.
        declared.sort_by_key(|(table, _)| table.stage());
        Ok(TableGraph {
            tables: declared.into_iter().map(|(table, _)| table).collect(),
        })
    }

    /// The agent's pipeline: the tables of [`FEATURES`].
    pub fn standard() -> &'static TableGraph {
        static STANDARD: LazyLock<TableGraph> = LazyLock::new(|| {
            TableGraph::new(FEATURES).unwrap_or_else(|e| panic!("the agent's features: {e}"))
        });
        &STANDARD
    }

    fn position(&self, table: Table) -> usize {
        self.tables
            .iter()
            .position(|t| *t == table)
            .unwrap_or_else(|| {
                panic!("table {table} is not declared by a feature of this pipeline")
            })
    }

    /// The OpenFlow id of `table`.
    ///
    /// # Panics
    ///
    /// If no feature of this pipeline declares `table`.
    pub fn id(&self, table: Table) -> u8 {
        // At most 255 tables (checked in `new`): every position fits.
        self.position(table) as u8
    }

    /// The table after `table`: where a flow that goes on in packet order continues.
    ///
    /// # Panics
    ///
    /// If `table` is the last table or not declared.
    pub fn next(&self, table: Table) -> Table {
        *self
            .tables
            .get(self.position(table) + 1)
            .unwrap_or_else(|| panic!("table {table} is the last table: no table follows it"))
    }

    /// The first table of `stage`, or, when `stage` has none, of the next stage that has: where
    /// a flow that jumps to a stage continues.
    ///
    /// # Panics
    ///
    /// If neither `stage` nor a later stage has a table.
    pub fn first(&self, stage: Stage) -> Table {
        *self
            .tables
            .iter()
            .find(|t| t.stage() >= stage)
            .unwrap_or_else(|| panic!("no table in stage {stage} or after it"))
    }

    /// The table with OpenFlow id `id`, if there is one.
    pub fn table(&self, id: u8) -> Option<Table> {
        self.tables.get(usize::from(id)).copied()
    }

    /// Every table with its id, in id order.
    pub fn tables(&self) -> impl Iterator<Item = (u8, Table)> + '_ {
        // At most 255 tables (checked in `new`): every index fits.
        self.tables.iter().enumerate().map(|(i, t)| (i as u8, *t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tables::{
        ARP_RESPONDER, CLASSIFIER, CONNTRACK_COMMIT, OUTPUT, PRE_ROUTING_CLASSIFIER, SNAT_MARK,
        SPOOF_GUARD,
    };

    #[test]
    fn the_agent_s_tables_in_id_order() {
        let g = TableGraph::standard();
        let listed: Vec<String> = g
            .tables()
            .map(|(id, t)| format!("{id} {t} {}", t.stage()))
            .collect();
        assert_eq!(
            listed,
            [
                "0 Classifier Classifier",
                "1 SpoofGuard Validation",
                "2 UnSNAT ConntrackState",
                "3 ConntrackZone ConntrackState",
                "4 ConntrackState ConntrackState",
                "5 PreRoutingClassifier PreRouting",
                "6 SessionAffinity PreRouting",
                "7 ServiceLB PreRouting",
                "8 EndpointDNAT PreRouting",
                "9 EgressRule EgressSecurity",
                "10 EgressDefaultRule EgressSecurity",
                "11 L3Forwarding Routing",
                "12 L3DecTTL Routing",
                "13 SNATMark PostRouting",
                "14 SNAT PostRouting",
                "15 L2ForwardingCalc Switching",
                "16 IngressRule IngressSecurity",
                "17 IngressDefaultRule IngressSecurity",
                "18 ConntrackCommit Conntrack",
                "19 Output Output",
                "20 ARPResponder Output",
            ]
        );
        for (id, t) in g.tables() {
            assert_eq!((g.id(t), g.table(id)), (id, Some(t)));
        }
        assert_eq!(g.table(21), None);
    }

    #[test]
    fn next_and_first_of_a_stage() {
        let g = TableGraph::standard();
        assert_eq!(g.next(CLASSIFIER), SPOOF_GUARD);
        assert_eq!(g.next(CONNTRACK_COMMIT), OUTPUT);
        assert_eq!(g.next(OUTPUT), ARP_RESPONDER);
        assert_eq!(g.first(Stage::Classifier), CLASSIFIER);
        assert_eq!(g.first(Stage::Output), OUTPUT);
        assert_eq!(g.first(Stage::PreRouting), PRE_ROUTING_CLASSIFIER);
        assert_eq!(g.first(Stage::PostRouting), SNAT_MARK);
        // A stage without tables: a jump there lands on the next stage's first table.
        let (routing, switching) = (
            Table::new("R", Stage::Routing),
            Table::new("S", Stage::Switching),
        );
        let sparse = TableGraph::new(&[Feature {
            name: "sparse",
            tables: &[routing, switching],
        }])
        .unwrap();
        assert_eq!(sparse.first(Stage::PostRouting), switching);
    }

    #[test]
    fn a_stage_s_tables_keep_the_order_of_their_features() {
        let (a, b, c) = (
            Table::new("A", Stage::Routing),
            Table::new("B", Stage::Classifier),
            Table::new("C", Stage::Routing),
        );
        let g = TableGraph::new(&[
            Feature {
                name: "first",
                tables: &[c, b],
            },
            Feature {
                name: "second",
                tables: &[a],
            },
        ])
        .unwrap();
        assert_eq!(g.tables().map(|(_, t)| t).collect::<Vec<_>>(), [b, c, a]);
    }

    #[test]
    fn a_name_is_declared_once_and_ids_end_at_254() {
        let twice = TableGraph::new(&[
            Feature {
                name: "classifier",
                tables: &[CLASSIFIER],
            },
            Feature {
                name: "other",
                tables: &[Table::new("Classifier", Stage::Output)],
            },
        ]);
        assert_eq!(
            twice.unwrap_err().to_string(),
            "table Classifier is declared twice: by the classifier feature and by the other feature"
        );
        let many: Vec<Table> = (0..256)
            .map(|i| Table::new(Box::leak(format!("T{i}").into_boxed_str()), Stage::Routing))
            .collect();
        let features = |n: usize| {
            [Feature {
                name: "many",
                tables: &many[..n],
            }]
        };
        assert_eq!(TableGraph::new(&features(255)).unwrap().id(many[254]), 254);
        assert_eq!(
            TableGraph::new(&features(256)),
            Err(GraphError::TooMany { count: 256 })
        );
    }
}
