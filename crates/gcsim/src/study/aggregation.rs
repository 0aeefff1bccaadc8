//! A study under an all-reduce collective (see [`crate::collective`]): what
//! goes with it, each scheme's participants, and the cost of its buckets.

use serde::{Deserialize, Serialize};

use super::{Decoder, Study, StudyError};
use crate::collective::{Aggregation, BucketCost, Collective, parse_aggregations};
use crate::comm::Link;
use crate::scheme::{Scheme, SchemeKind};

/// What does not go with a collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    /// A scheme that is not a sum over a participant set.
    Scheme(SchemeKind),
    /// The rank decoder, which decodes at a master.
    RankDecoder,
    /// A transfer time to the master.
    Transfer,
    /// The master's shared link.
    SharedLink,
    /// The master's decoding time.
    DecodeTime,
}

impl Study {
    /// The same study with gradients summed by `aggregation`. Under a
    /// collective every scheme must be a sum over its rule's participants,
    /// with the threshold decoder and no master's communication: give the
    /// communication model and the decoder first.
    pub fn with_aggregation(self, aggregation: Aggregation) -> Result<Self, StudyError> {
        let study = Self { aggregation, ..self };
        study.check_aggregation()?;
        Ok(study)
    }

    /// How gradients are summed.
    pub fn aggregation(&self) -> &Aggregation {
        &self.aggregation
    }

    fn check_aggregation(&self) -> Result<(), StudyError> {
        self.check_parallel()?;
        let Aggregation::Collective(c) = &self.aggregation else {
            return Ok(());
        };
        let conflict = |conflict| StudyError::UnderCollective {
            aggregation: c.algorithm.name(),
            conflict,
        };
        if let Some(s) = self.schemes.iter().find(|s| !summed(s)) {
            return Err(conflict(Conflict::Scheme(s.kind())));
        }
        if self.decoder == Decoder::Rank {
            return Err(conflict(Conflict::RankDecoder));
        }
        if self.comm.transfers() {
            return Err(conflict(Conflict::Transfer));
        }
        if self.comm.link == Link::Shared {
            return Err(conflict(Conflict::SharedLink));
        }
        if self.comm.decode_time != 0.0 {
            return Err(conflict(Conflict::DecodeTime));
        }
        Ok(())
    }

    /// The number of ranks whose messages `scheme`'s collective sums, under
    /// a collective, where it is the same in every trial (not under a
    /// deadline, whose participants are the workers in by it).
    pub fn participants(&self, scheme: &Scheme) -> Option<usize> {
        self.aggregation.collective()?;
        scheme
            .deadline()
            .is_none()
            .then(|| Collective::participants(scheme.rule(), self.scheme_n()))
    }

    /// The cost of one of `scheme`'s buckets, in the study's time unit,
    /// under a collective: the agreement where not every rank takes part,
    /// and the sum of its share of the message. None under a deadline,
    /// whose cost varies with its participants (see [`BucketCost`]).
    pub fn bucket_cost(&self, scheme: &Scheme) -> Option<f64> {
        match self.bucket_cost_of(scheme)? {
            BucketCost::Fixed(cost) => Some(cost),
            BucketCost::Counted { .. } => None,
        }
    }

    /// What one of `scheme`'s buckets costs, under a collective.
    pub(crate) fn bucket_cost_of(&self, scheme: &Scheme) -> Option<BucketCost> {
        let c = self.aggregation.collective()?;
        // Under a layout, each stage's T tensor ranks sum their 1/(P·T)
        // share of the gradient, each in its own communicator of the D
        // replicas, at once.
        let share = self.parallel().map_or(1.0, |l| (l.layout.pp * l.layout.tp) as f64);
        Some(match self.participants(scheme) {
            Some(p) => BucketCost::Fixed(c.bucket_cost(p, self.scheme_n(), scheme.message() / share)),
            None => BucketCost::Counted {
                message: scheme.message() / share,
            },
        })
    }

    /// The gradients (in units of `--gradient-size`) all ranks send in one
    /// iteration of `scheme` under a collective, where its participants are
    /// the same in every trial (see [`Collective::gradients_sent`]).
    pub fn collective_gradients(&self, scheme: &Scheme) -> Option<f64> {
        let c = self.aggregation.collective()?;
        Some(c.gradients_sent(self.participants(scheme)?, scheme.message()))
    }

    /// The collective and each slot's bucket cost (the schemes, then the
    /// uncoded baseline), under a collective.
    pub(crate) fn collective_costs(&self) -> Option<(Collective, Vec<BucketCost>)> {
        let c = *self.aggregation.collective()?;
        let costs = self
            .schemes
            .iter()
            .chain(std::iter::once(&self.baseline()))
            .map(|s| self.bucket_cost_of(s).expect("a collective"))
            .collect();
        Some((c, costs))
    }
}

/// Whether `scheme`'s iteration is a sum over a set of participants that
/// its rule (or its deadline) selects: what a collective can sum.
pub fn summed(scheme: &Scheme) -> bool {
    scheme.strategy().is_none() && scheme.split().is_none() && !scheme.rank_decoded()
}

/// A collective as recorded in shard files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct CollectiveRecord {
    algorithm: String,
    latency: f64,
    bandwidth: f64,
    gradient_bytes: f64,
    buckets: usize,
    units_per_second: f64,
}

impl CollectiveRecord {
    pub(super) fn of(aggregation: &Aggregation) -> Option<Self> {
        let c = aggregation.collective()?;
        Some(Self {
            algorithm: c.algorithm.to_string(),
            latency: c.latency,
            bandwidth: c.bandwidth,
            gradient_bytes: c.gradient_bytes,
            buckets: c.buckets,
            units_per_second: c.units_per_second,
        })
    }

    /// The aggregation, checked as the command line checks it.
    pub(super) fn aggregation(record: Option<&Self>) -> Result<Aggregation, String> {
        let Some(r) = record else {
            return Ok(Aggregation::Master);
        };
        let algorithm = match parse_aggregations(&r.algorithm)?.as_slice() {
            [Some(a)] => *a,
            _ => return Err(format!("aggregation: `{}` is not one collective", r.algorithm)),
        };
        let unit = crate::units::TimeUnit::ALL
            .into_iter()
            .find(|u| u.per_second() == r.units_per_second)
            .ok_or_else(|| {
                format!(
                    "aggregation: {} time units per second is not a unit",
                    r.units_per_second
                )
            })?;
        let c = Collective::new(
            algorithm,
            Some(r.latency),
            Some(r.bandwidth),
            Some(r.gradient_bytes),
            r.buckets,
            Some(unit),
        )
        .map_err(|e| e.to_string())?;
        Ok(Aggregation::Collective(c))
    }
}
