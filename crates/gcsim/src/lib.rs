//! gcsim: a Monte Carlo straggler-latency simulator for coded distributed
//! computing.
//!
//! One iteration of synchronous distributed gradient descent on n workers
//! ends when the set of finished workers satisfies the scheme's recovery
//! rule. The library draws worker times from a [`dist::Dist`], applies a
//! [`load::LoadModel`] and each [`scheme::Scheme`]'s rule on a per-trial event
//! timeline, and summarises the iteration time over many trials.
#![warn(missing_docs)]

pub mod analytic;
pub mod codes;
pub mod collective;
pub mod comm;
pub mod dist;
pub mod encoding;
pub mod engine;
pub mod export;
pub mod fit;
pub(crate) mod linalg;
pub mod load;
pub mod parallel;
pub mod param;
pub mod plan;
pub mod progress;
pub mod range;
pub mod report;
pub mod rng;
pub mod scheme;
pub mod shard;
pub mod stats;
pub mod study;
pub mod suggest;
pub mod sweep;
pub mod table;
pub mod trace;
pub mod train;
pub mod units;
pub mod verify;
pub mod whatif;
pub mod workers;
