//! The flags of an all-reduce collective (`--aggregation`, `--latency`,
//! `--bandwidth`, `--buckets`; the gradient's size is `--gradient-size`),
//! shared by `run`, `sweep` and `plan`.

use anyhow::{Result, bail};
use clap::Args;

use gcsim::collective::{Aggregation, Algorithm, Collective, parse_aggregations, parse_bandwidth};
use gcsim::range::{self, IntList};
use gcsim::units::TimeUnit;

use super::flags::{AGGREGATION, BANDWIDTH, BUCKETS, LATENCY};

/// `--aggregation` as given: one name or a list (None is `master`).
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregations(pub Vec<Option<Algorithm>>);

fn parse(text: &str) -> Result<Aggregations, String> {
    parse_aggregations(text).map(Aggregations)
}

/// How gradients are summed.
#[derive(Debug, Clone, Args)]
pub struct CollectiveArgs {
    /// How gradients are summed: master (every worker sends to one master;
    /// the default), or an all-reduce collective among the participants
    /// the scheme's rule selects, started when they are all ready and
    /// lasting its alpha-beta time: ring, tree (binomial reduce and
    /// broadcast), halving-doubling (Rabenseifner) or
    /// hierarchical:gpus-per-node=G,intra-bandwidth=B (ring inside each
    /// node, ring across nodes). A collective needs --bandwidth,
    /// --gradient-size and --time-unit; plan compares a list.
    /// Example: --aggregation ring --bandwidth 25GB/s --gradient-size 1.4GB --time-unit s
    #[arg(long, value_name = "ALGORITHM", value_parser = parse)]
    pub aggregation: Option<Aggregations>,

    /// A collective's latency alpha per message, in seconds [default: 5e-6].
    /// Example: --latency 8e-6
    #[arg(long, value_name = "SECONDS", value_parser = super::number("a number of seconds from 0 to 1e6"), allow_hyphen_values = true)]
    pub latency: Option<f64>,

    /// Each rank's link bandwidth for a collective, in bytes per second, with
    /// a unit of bytes (B/s, kB/s, MB/s, GB/s, KiB/s ... ) or bits (Gbit/s, Gb/s, Gbps).
    /// Example: --bandwidth 100Gbit/s
    #[arg(long, value_name = "BYTES_PER_S", value_parser = parse_bandwidth, allow_hyphen_values = true)]
    pub bandwidth: Option<f64>,

    /// Split a collective's gradient into K equal buckets, each summed once
    /// every participant has done its share j/K of the work (as PyTorch DDP
    /// overlaps its all-reduce with the backward pass) [default: 1]; plan
    /// compares a list. Example: --buckets 25
    #[arg(long, value_name = "K", value_parser = range::parse, allow_negative_numbers = true)]
    pub buckets: Option<IntList>,
}

impl CollectiveArgs {
    /// The aggregations asked for (`master` where none is), each built with
    /// the gradient's size and the time unit: every algorithm with every
    /// bucket count, in the order given.
    pub fn aggregations(&self, gradient_bytes: Option<f64>, unit: Option<TimeUnit>) -> Result<Vec<Aggregation>> {
        let names = match &self.aggregation {
            Some(a) => a.0.clone(),
            None => vec![None],
        };
        if names.iter().all(Option::is_none) {
            for (given, flag) in [
                (self.latency.is_some(), LATENCY),
                (self.bandwidth.is_some(), BANDWIDTH),
                (self.buckets.is_some(), BUCKETS),
            ] {
                if given {
                    bail!(
                        "{flag} describes an all-reduce collective: give {AGGREGATION} ring, tree, halving-doubling or hierarchical (the master is the default)"
                    );
                }
            }
        }
        let buckets = self.buckets.as_ref().map_or(vec![1], |l| l.values.clone());
        let mut out = Vec::new();
        for name in names {
            match name {
                None => out.push(Aggregation::Master),
                Some(algorithm) => {
                    for &k in &buckets {
                        out.push(Aggregation::Collective(Collective::new(
                            algorithm,
                            self.latency,
                            self.bandwidth,
                            gradient_bytes,
                            k,
                            unit,
                        )?));
                    }
                }
            }
        }
        Ok(out)
    }

    /// The one aggregation of `run` and `sweep`.
    pub fn aggregation(&self, gradient_bytes: Option<f64>, unit: Option<TimeUnit>) -> Result<Aggregation> {
        if self.aggregation.as_ref().is_some_and(|a| a.0.len() > 1) {
            bail!("{AGGREGATION} takes one algorithm here; plan compares several (gcsim plan {AGGREGATION} ring,tree)");
        }
        if let Some(l) = self.buckets.as_ref().filter(|l| l.values.len() > 1) {
            bail!(
                "{BUCKETS} {} takes one K here; plan compares several (gcsim plan {BUCKETS} 1,4,16)",
                l.text
            );
        }
        Ok(self.aggregations(gradient_bytes, unit)?.remove(0))
    }
}
