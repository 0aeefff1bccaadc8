//! `gcsim fit --nccl-tests FILE`: the all-reduce latency and bandwidth of a
//! cluster from nccl-tests' `all_reduce_perf` output.

use std::path::PathBuf;

use anyhow::{Result, anyhow};
use clap::Args;

use gcsim::collective::{Algorithm, parse_aggregations};
use gcsim::fit::nccl::{self, NcclFit, NcclOptions};

/// The flags of an all-reduce fit.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "All-reduce latency and bandwidth (--nccl-tests)")]
pub struct NcclArgs {
    /// Fit --latency and --bandwidth to this output of nccl-tests' all_reduce_perf, in place of a trace.
    #[arg(long, value_name = "FILE")]
    pub nccl_tests: Option<PathBuf>,

    /// The all-reduce algorithm whose cost is fitted: ring, tree or halving-doubling [default: ring].
    #[arg(long, value_name = "ALGORITHM", value_parser = flat_algorithm)]
    pub aggregation: Option<Algorithm>,

    /// The ranks of the all-reduce [default: the number of `# Rank` lines in the file].
    #[arg(long, value_name = "P")]
    pub ranks: Option<usize>,

    /// Fit the in-place times [default: the out-of-place ones].
    #[arg(long)]
    pub in_place: bool,

    /// Fit only the sizes of at least this many bytes (K, M, G: powers of 1024) [default: all above 0].
    #[arg(long, value_name = "BYTES", value_parser = nccl::parse_size)]
    pub min_size: Option<u64>,

    /// Fit only the sizes of at most this many bytes (K, M, G: powers of 1024) [default: all].
    #[arg(long, value_name = "BYTES", value_parser = nccl::parse_size)]
    pub max_size: Option<u64>,
}

/// `--aggregation` for a fit: one flat algorithm. The hierarchical
/// all-reduce has two bandwidths, inside and across nodes, which one run's
/// times cannot tell apart; each is the ring bandwidth of a run of its own.
fn flat_algorithm(text: &str) -> Result<Algorithm, String> {
    let accepted = "accepted: ring, tree, halving-doubling";
    match parse_aggregations(text)?.as_slice() {
        [Some(a @ (Algorithm::Ring | Algorithm::Tree | Algorithm::HalvingDoubling))] => Ok(*a),
        [Some(Algorithm::Hierarchical { .. })] => Err(format!(
            "hierarchical has two bandwidths, which one table cannot separate: fit --aggregation ring to a run on one node (intra-bandwidth) and to a run with one rank per node (--bandwidth); {accepted}"
        )),
        [None] => Err(format!("master is not an all-reduce; {accepted}")),
        _ => Err(format!("one algorithm only; {accepted}")),
    }
}

impl NcclArgs {
    /// Refuses the fit's flags beside a trace: they shape an all-reduce fit only.
    pub fn refuse_with_trace(&self) -> Result<()> {
        let given = [
            ("--aggregation", self.aggregation.is_some()),
            ("--ranks", self.ranks.is_some()),
            ("--in-place", self.in_place),
            ("--min-size", self.min_size.is_some()),
            ("--max-size", self.max_size.is_some()),
        ];
        match given.iter().find(|(_, set)| *set) {
            Some((flag, _)) => Err(anyhow!(
                "{flag} applies to an all-reduce fit: give --nccl-tests FILE in place of the trace FILE"
            )),
            None => Ok(()),
        }
    }

    /// Reads the table and fits it.
    pub fn fit(&self) -> Result<NcclFit> {
        let file = self
            .nccl_tests
            .as_ref()
            .ok_or_else(|| anyhow!("give a trace FILE or --nccl-tests FILE"))?;
        super::super::output::names::input("--nccl-tests", file)?;
        let options = NcclOptions {
            algorithm: self.aggregation.unwrap_or(Algorithm::Ring),
            ranks: self.ranks,
            in_place: self.in_place,
            min_size: self.min_size.unwrap_or(0),
            max_size: self.max_size.unwrap_or(u64::MAX),
        };
        if options.min_size > options.max_size {
            return Err(anyhow!(
                "--min-size {} is above --max-size {}: no size can be fitted",
                options.min_size,
                options.max_size
            ));
        }
        Ok(nccl::fit_file(file, &options)?)
    }
}
