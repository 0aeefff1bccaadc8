//! Building a collective from its flags, each checked, and what is missing
//! named.

use thiserror::Error;

use super::{Algorithm, Collective, MAX_BUCKETS};
use crate::param::{Described, Naming, Param, keys};
use crate::units::TimeUnit;

/// Why a collective cannot be built.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{}", self.describe(&keys))]
pub enum CollectiveError {
    /// A quantity the collective's cost needs was not given.
    Missing {
        /// The algorithm.
        algorithm: String,
        /// The parameter that is missing.
        param: Param,
    },
    /// A value out of its range.
    OutOfRange {
        /// The parameter.
        param: Param,
        /// The value given.
        value: f64,
        /// What is accepted.
        accepted: &'static str,
    },
    /// Buckets without a collective.
    BucketsWithoutCollective,
}

impl Described for CollectiveError {
    fn describe(&self, name: Naming) -> String {
        match self {
            CollectiveError::Missing { algorithm, param } => {
                let what = match param {
                    Param::Bandwidth => "each rank's link bandwidth (e.g. 25GB/s or 100Gbit/s)",
                    Param::GradientSize => "the size of one full gradient in bytes (e.g. 1.4GB)",
                    Param::TimeUnit => {
                        "the unit of the worker times, to add the collective's seconds to them (s, ms or us)"
                    }
                    _ => "a value",
                };
                format!(
                    "{} {algorithm} sums gradients in real time: give {} ({what})",
                    name(Param::Aggregation),
                    name(*param)
                )
            }
            CollectiveError::OutOfRange { param, value, accepted } => format!(
                "{} {} is out of range; accepted: {accepted}",
                name(*param),
                crate::param::plain(*value)
            ),
            CollectiveError::BucketsWithoutCollective => format!(
                "{} splits a collective's gradient: give {} ring, tree, halving-doubling or hierarchical",
                name(Param::Buckets),
                name(Param::Aggregation)
            ),
        }
    }
}

impl Collective {
    /// The collective `algorithm` with latency α in seconds (5 µs where
    /// none is given), each rank's `bandwidth` in bytes per second, the
    /// gradient's size in bytes, `buckets` equal buckets, and the study's
    /// time unit; each checked, the missing ones named.
    pub fn new(
        algorithm: Algorithm,
        latency: Option<f64>,
        bandwidth: Option<f64>,
        gradient_bytes: Option<f64>,
        buckets: usize,
        unit: Option<TimeUnit>,
    ) -> Result<Self, CollectiveError> {
        let missing = |param| CollectiveError::Missing {
            algorithm: algorithm.name().to_string(),
            param,
        };
        let bandwidth = bandwidth.ok_or_else(|| missing(Param::Bandwidth))?;
        let gradient_bytes = gradient_bytes.ok_or_else(|| missing(Param::GradientSize))?;
        let unit = unit.ok_or_else(|| missing(Param::TimeUnit))?;
        let latency = latency.unwrap_or(super::DEFAULT_LATENCY);
        if !(0.0..=1e6).contains(&latency) {
            return Err(CollectiveError::OutOfRange {
                param: Param::Latency,
                value: latency,
                accepted: "a number of seconds from 0 to 1e6",
            });
        }
        for (param, value) in [(Param::Bandwidth, bandwidth), (Param::GradientSize, gradient_bytes)] {
            if !(value.is_finite() && value > 0.0 && value <= 1e30) {
                return Err(CollectiveError::OutOfRange {
                    param,
                    value,
                    accepted: "a number > 0 and at most 1e30",
                });
            }
        }
        if let Algorithm::Hierarchical { intra_bandwidth, .. } = algorithm
            && !(intra_bandwidth.is_finite() && intra_bandwidth > 0.0 && intra_bandwidth <= 1e30)
        {
            return Err(CollectiveError::OutOfRange {
                param: Param::Aggregation,
                value: intra_bandwidth,
                accepted: "an intra-bandwidth > 0 and at most 1e30 bytes per second",
            });
        }
        if !(1..=MAX_BUCKETS).contains(&buckets) {
            return Err(CollectiveError::OutOfRange {
                param: Param::Buckets,
                value: buckets as f64,
                accepted: "a whole number from 1 to 100000",
            });
        }
        Ok(Self {
            algorithm,
            latency,
            bandwidth,
            gradient_bytes,
            buckets,
            units_per_second: unit.per_second(),
        })
    }
}
