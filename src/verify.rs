//! `gcsim verify`: Monte Carlo against every closed form; exit 1 on a mismatch.

use std::io::{self, Write};

use anyhow::{Result, bail};
use clap::Args;

use gcsim::engine::{self, Silent};
use gcsim::verify::{self, Verdicts};

use super::Status;

/// Check the simulator against the exact order-statistic formulas.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Runs a built-in grid (exp, shifted-exp, two Pareto laws and a straggler
mixture; fixed, scaled, additive and affine loads; uncoded, ignore, frc, crc,
comm-efficient, mds and the timeout deadline; K-batch-sync, K-async and
K-batch-async on exponential workers; correlated group slowdowns; and crc on
n=100 exponential workers at s = 0, 20, 50) and compares each Monte Carlo mean, p50
and p99 with its exact value by a z-score; it also checks the exact means of
n=100 exponential workers against their worked values (5.187 uncoded, 1.590
at s=20, 0.688 at s=50). The threshold is set so that a correct
engine fails the whole grid with probability below 0.001. Prints a table and
`N passed, M failed`; exits 1 if anything failed.

Examples:
  gcsim verify
  gcsim verify --trials 1000000 --seed 7"
)]
pub struct VerifyArgs {
    /// Monte Carlo trials per configuration.
    #[arg(long, default_value_t = 200_000, value_name = "N", value_parser = super::parse_trials, allow_negative_numbers = true)]
    pub trials: u64,

    /// Master seed.
    #[arg(long, default_value_t = 0, value_name = "SEED", value_parser = super::parse_count_u64, allow_negative_numbers = true)]
    pub seed: u64,

    /// Worker threads, 1 to 1024 [default: all cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = super::parse_threads, allow_negative_numbers = true)]
    pub threads: Option<usize>,

    /// Print only the failed checks and the summary.
    #[arg(long)]
    pub failures_only: bool,
}

/// A checked `gcsim verify` run.
pub struct VerifyJob {
    trials: u64,
    seed: u64,
    threads: Option<usize>,
    failures_only: bool,
}

impl TryFrom<VerifyArgs> for VerifyJob {
    type Error = anyhow::Error;

    fn try_from(args: VerifyArgs) -> Result<Self> {
        if args.trials < 1000 {
            bail!(
                "--trials {} is too few for the z-tests; accepted: 1000 or more",
                args.trials
            );
        }
        verify::admits(&verify::grid(), args.trials)?;
        Ok(Self {
            trials: args.trials,
            seed: args.seed,
            threads: args.threads,
            failures_only: args.failures_only,
        })
    }
}

impl VerifyJob {
    /// Runs the grid and prints it; [`Status::ChecksFailed`] if any check failed.
    pub fn execute(self) -> Result<Status> {
        let pool = super::job::thread_pool(self.threads)?;
        let verdicts = pool.install(|| {
            verify::run(&verify::grid(), self.trials, self.seed, &|study| {
                engine::simulate(study, &Silent)
            })
        });
        let mut out = io::BufWriter::new(io::stdout().lock());
        print(&verdicts, self.failures_only, &mut out)?;
        out.flush()?;
        Ok(if verdicts.failed() == 0 {
            Status::Success
        } else {
            Status::ChecksFailed
        })
    }
}

fn print(v: &Verdicts, failures_only: bool, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "# gcsim verify  trials={}  |z| threshold={:.3} (family-wise alpha 0.001)",
        v.trials, v.threshold
    )?;
    let width = v.checks.iter().map(|c| c.config.len()).max().unwrap_or(6).max(6);
    writeln!(
        out,
        "{:<width$}  {:<4}  {:>12}  {:>12}  {:>7}  result",
        "config", "stat", "exact", "monte_carlo", "z"
    )?;
    for c in v.checks.iter().filter(|c| !failures_only || !c.pass) {
        let z = c.z.map_or("-".to_string(), |z| format!("{z:.2}"));
        let result = if c.pass { "ok" } else { "FAIL" };
        writeln!(
            out,
            "{:<width$}  {:<4}  {:>12.6}  {:>12.6}  {z:>7}  {result}",
            c.config, c.stat, c.exact, c.estimate
        )?;
    }
    for (p, ok) in v.printed.iter().filter(|p| !failures_only || !p.1) {
        let result = if *ok { "ok" } else { "FAIL" };
        let digits = (-(2.0 * p.tolerance).log10()).round().max(0.0) as usize;
        writeln!(
            out,
            "{:<width$}  {:>12.6} exact vs {:.digits$} as printed (±{})  {result}",
            p.what, p.exact, p.printed, p.tolerance
        )?;
    }
    writeln!(out, "{} passed, {} failed", v.passed(), v.failed())
}
