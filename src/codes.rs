//! `gcsim codes`: build a scheme's encoding matrix, decode every straggler
//! pattern of size ≤ s (or a random sample), and check the decoded gradient
//! of a least-squares problem end to end.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use gcsim::codes::check;
use gcsim::codes::export::{CodesConfig, CodesReport, DEFINITIONS};
use gcsim::codes::matmul::{self, MatmulCode, MatmulReport};
use gcsim::codes::{Code, Generator};
use gcsim::engine::Progress;
use gcsim::export::Format;
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::shard::ShardId;
use gcsim::shard::codes::{CheckedRow, CodesRun, gradient_run, matmul_run};

use super::notes::note;
use super::output::{self, Output};
use super::progress::Bar;
use super::{Status, parse_count};

pub mod shard;

/// Check that a scheme's code decodes from every allowed set of workers, and how stably.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Builds the encoding matrix B of the scheme (frc: Tandon et al. 2017 §4.1;
crc: Tandon et al. 2017 Algorithm 2, random; comm-efficient: Ye & Abbe 2018 in
the form of Kadhe et al. 2020; mds: an n x k generator, Lee et al. 2017). For
every straggler pattern of size <= s (a uniform random sample of --limit of
them when there are more) it solves A*B_F = T by least squares (SVD) for the
finished workers F and reports the fraction decodable (relative residual
below 1e-9), the largest residual and the median and worst condition number
of B_F. It then decodes the gradient of a random least-squares problem from
the workers' real messages for 16 random sets of n-s workers and reports the
largest relative error (must be below 1e-9). Exits 1 if an exact scheme fails.
`ignore` (and uncoded) use B = I: the residual is the approximation error.
With --code FILE (scheme custom) the matrix is the user's (CSV without header,
n rows by P columns) and --s is the tolerance to check it for (default 0).

Examples:
  gcsim codes --scheme crc --n 12 --s 3
  gcsim codes --scheme frc --n 20 --s 4 --format json
  gcsim codes --scheme comm-efficient --n 50 --s 5 --m 2 --limit 2000
  gcsim codes --scheme mds --n 30 --k 27 --generator vandermonde  # exits 1
  gcsim codes --code my-code.csv --s 2      # a user's matrix: any 2 stragglers?
  gcsim codes --scheme crc --n 200 --s 10 --shard 1/4 --out p1.json  # ... 4/4,
  gcsim merge p*.json                       # then: the output without --shard

Matrix multiplication (polynomial, matdot, entangled): the code's evaluation
matrix E = [x_i^e] (n x K, K the recovery threshold) at --generator's points;
every set of k finished workers (or --limit random ones) must decode the pq
blocks of C and some set of k-1 must not (generic points: none does); then
C = A*B is decoded from the workers' real products for 16 random k-sets
(random A, B) and compared with A*B (relative error below 1e-6). Exits 1,
naming the checks, if any of these fails, which the Vandermonde points do
from n of about 30 on, numerically, and the Chebyshev ones from k of about
24 (the gaussian code stays well conditioned).
  gcsim codes --scheme polynomial --n 24 --p 4 --q 5 --generator chebyshev --limit 2000
  gcsim codes --scheme polynomial --n 40 --p 4 --q 8 --generator gaussian --limit 2000
  gcsim codes --scheme matdot --n 12 --p 5
  gcsim codes --scheme entangled --n 20 --p 2 --m 2 --q 2 --generator chebyshev"
)]
pub struct CodesArgs {
    /// The scheme (custom by default with --code; required otherwise).
    #[arg(long, value_name = "SCHEME", value_parser = super::scheme_values())]
    pub scheme: Option<SchemeKind>,

    /// Number of workers (at most 2000: B is dense, and each decoding is an SVD, seconds apiece at n = 2000); a --code file's rows by default.
    #[arg(long, short, value_name = "N", value_parser = parse_count, allow_negative_numbers = true)]
    pub n: Option<usize>,

    /// Straggler tolerance s, 0 <= s < n (mds reads it as k=n-s).
    #[arg(long, value_name = "S", value_parser = parse_count, allow_negative_numbers = true)]
    pub s: Option<usize>,

    /// Message split m >= 1 with s + m <= n (comm-efficient); the inner split of entangled.
    #[arg(long, value_name = "M", value_parser = parse_count, allow_negative_numbers = true)]
    pub m: Option<usize>,

    /// Row blocks p of A (polynomial, entangled), or matdot's inner split.
    #[arg(long, value_name = "P", value_parser = parse_count, allow_negative_numbers = true)]
    pub p: Option<usize>,

    /// Column blocks q of B (polynomial, entangled).
    #[arg(long, value_name = "Q", value_parser = parse_count, allow_negative_numbers = true)]
    pub q: Option<usize>,

    /// Recovery threshold k, 1 <= k <= n (mds).
    #[arg(long, value_name = "K", value_parser = parse_count, allow_negative_numbers = true)]
    pub k: Option<usize>,

    /// Degree d of approx-regular's random regular graph.
    #[arg(long, value_name = "D", value_parser = parse_count, allow_negative_numbers = true)]
    pub d: Option<usize>,

    /// A user's encoding matrix to check (scheme custom; see `gcsim run --help`).
    #[arg(long, value_name = "FILE")]
    pub code: Option<PathBuf>,

    /// Generator of comm-efficient and mds [default: gaussian]; the points of
    /// polynomial, matdot and entangled [default: vandermonde; gaussian is
    /// the random Khatri-Rao code, polynomial only].
    #[arg(long, value_name = "GENERATOR", value_parser = super::generator_values())]
    pub generator: Option<Generator>,

    /// Decode every straggler pattern while there are at most this many, else
    /// this many uniform random ones.
    #[arg(long, default_value_t = 1_000_000, value_name = "N", value_parser = super::parse_count_u64, allow_negative_numbers = true)]
    pub limit: u64,

    /// Seed of the random matrices, the pattern sample and the test problem.
    #[arg(long, default_value_t = 0, value_name = "SEED", value_parser = super::parse_count_u64, allow_negative_numbers = true)]
    pub seed: u64,

    /// Worker threads, 1 to 1024 [default: all cores]; the result does not depend on it.
    #[arg(long, short = 'j', value_name = "N", value_parser = super::parse_threads, allow_negative_numbers = true)]
    pub threads: Option<usize>,

    /// No progress bar (shown on a terminal after the first second, counting
    /// the decodings: each is an SVD, seconds apiece at n = 2000) and no
    /// notes on stderr; warnings and errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,

    /// Decode only shard I of K of the straggler patterns (or worker sets)
    /// and write them as a partial result to --out FILE.json; `gcsim merge`
    /// of all K writes what codes without --shard writes, byte for byte.
    /// `slurm` takes I and K from a Slurm job array's task. Example:
    /// --shard 2/4 --out part2.json
    #[arg(long, value_name = "I/K", value_parser = super::common::parse_shard, allow_hyphen_values = true)]
    pub shard: Option<ShardId>,

    /// Output format [default: from --out's extension; else table on a terminal, csv otherwise].
    #[arg(long, value_name = "FORMAT", value_parser = output::format_parser(output::format_help))]
    pub format: Option<Format>,

    /// Write the results to FILE (.csv, .json, .txt, .md or .tex), atomically.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// The code a `gcsim codes` run checks.
enum Checked {
    /// A gradient (or matrix-vector) code.
    Gradient(Code),
    /// A matrix-multiplication code.
    Matmul(MatmulCode),
}

impl Checked {
    /// What identifies the run that checks this code with `limit` and `seed`.
    fn run(&self, limit: u64, seed: u64) -> CodesRun {
        match self {
            Checked::Gradient(code) => gradient_run(code, limit, seed),
            Checked::Matmul(code) => matmul_run(code, limit, seed),
        }
    }
}

/// A validated `gcsim codes` run.
pub struct CodesJob {
    code: Checked,
    limit: u64,
    seed: u64,
    threads: Option<usize>,
    quiet: bool,
    output: Output,
    /// With `--shard I/K`: which sets to decode, to a partial result.
    shard: Option<ShardId>,
}

impl TryFrom<CodesArgs> for CodesJob {
    type Error = anyhow::Error;

    fn try_from(args: CodesArgs) -> Result<Self> {
        let code = checked_code(&args)?;
        let output = match args.shard {
            Some(id) => shard::shard_output(&code.run(args.limit, args.seed), id, &args)?,
            None => Output::resolve(args.format, args.out.as_deref())?,
        };
        Ok(Self {
            code,
            limit: args.limit,
            seed: args.seed,
            threads: args.threads,
            quiet: args.quiet,
            output,
            shard: args.shard,
        })
    }
}

/// The code `gcsim codes` checks, from its flags.
fn checked_code(args: &CodesArgs) -> Result<Checked> {
    let custom = super::custom_code(args.code.as_deref(), args.n)?;
    let n = match (args.n, &custom) {
        (Some(n), _) => n,
        (None, Some(m)) => m.b.nrows(),
        (None, None) => bail!("give --n N (the number of workers)"),
    };
    if n == 0 {
        bail!("--n 0 is out of range; accepted: a whole number >= 1");
    }
    if args.limit == 0 {
        bail!("--limit 0 is out of range; accepted: a whole number >= 1");
    }
    let kind: SchemeKind = match (args.scheme, &custom) {
        (Some(s), _) => s,
        (None, Some(_)) => SchemeKind::Custom,
        (None, None) => bail!("give --scheme SCHEME (or --code FILE for a user's matrix)"),
    };
    if custom.is_some() && kind != SchemeKind::Custom {
        bail!("--code applies only to --scheme custom, not to --scheme {kind}");
    }
    if kind.is_matmul() {
        return matmul_code(args, kind, n);
    }
    if let Some(e) = gcsim::codes::CodeError::not_a_code(kind) {
        return Err(e.into());
    }
    if args.p.is_some() || args.q.is_some() {
        bail!("--p and --q apply only to --scheme polynomial, matdot and entangled, not to --scheme {kind}");
    }
    let params = Params {
        s: args.s,
        m: args.m,
        k: args.k,
        d: args.d,
        ..Params::default()
    };
    let code = match custom {
        Some(m) => {
            let scheme = Scheme::custom(m.shape(), args.s).context("invalid configuration")?;
            if args.generator.is_some() {
                bail!("--generator applies to comm-efficient and mds, not to a --code matrix");
            }
            Code::custom(&scheme, m.b)
        }
        None => {
            let scheme = Scheme::new(kind, n, params).context("invalid configuration")?;
            match args.generator {
                Some(g) => Code::with_generator(&scheme, g, args.seed),
                None => Code::new(&scheme, args.seed),
            }?
        }
    };
    Ok(Checked::Gradient(code))
}

impl CodesJob {
    /// Runs the checks and writes the report (or, with `--shard`, this
    /// shard's partial result); [`Status::ChecksFailed`] if an exact scheme
    /// failed them.
    pub fn execute(self) -> Result<Status> {
        let pool = super::job::thread_pool(self.threads)?;
        if let Some(id) = self.shard {
            return shard::write_shard(&self, &pool, id);
        }
        let (limit, seed) = (self.limit, self.seed);
        let row = match &self.code {
            Checked::Gradient(code) => {
                let decodings = check::decodings(code, limit);
                let bar = Bar::counting(self.quiet, decodings, "decoding", "straggler sets");
                bar.pass(1, decodings);
                let row = pool.install(|| check::check(code, limit, seed, &|| bar.advance(1)));
                bar.finish();
                CheckedRow::Gradient(row)
            }
            Checked::Matmul(code) => {
                let decodings = matmul::decodings(code, limit);
                let bar = Bar::counting(self.quiet, decodings, "decoding", "worker sets");
                bar.pass(1, decodings);
                let row = pool.install(|| matmul::check(code, limit, seed, &|| bar.advance(1)));
                bar.finish();
                CheckedRow::Matmul(row)
            }
        };
        write_result(row, &self.code.run(limit, seed).code, limit, seed, &self.output)
    }
}

/// Writes the report of the checks of `code` (its row, `--limit` and
/// `--seed`); [`Status::ChecksFailed`] if it failed checks it must pass
/// (for a gradient code, if it is exact; for a matmul code, always).
pub(crate) fn write_result(row: CheckedRow, code: &str, limit: u64, seed: u64, output: &Output) -> Result<Status> {
    let config = |definitions| CodesConfig {
        gcsim: env!("CARGO_PKG_VERSION"),
        command: "codes",
        limit,
        seed,
        definitions,
    };
    let (written, failure) = match row {
        CheckedRow::Gradient(row) => {
            let failure = row.failure();
            let report = CodesReport {
                config: config(DEFINITIONS),
                rows: vec![row],
            };
            (output.write(&report)?, failure)
        }
        CheckedRow::Matmul(row) => {
            let failure = row.failure();
            let report = MatmulReport {
                config: config(matmul::MATMUL_DEFINITIONS),
                rows: vec![row],
            };
            (output.write(&report)?, failure)
        }
    };
    if let Some(path) = written {
        note!("wrote 1 row to {}", path.display());
    }
    if let Some(what) = &failure {
        eprintln!("Error: {code} failed its checks: {what}");
    }
    Ok(if failure.is_some() {
        Status::ChecksFailed
    } else {
        Status::Success
    })
}

/// A matmul code from its flags and its points (vandermonde by default, the
/// papers' real points).
fn matmul_code(args: &CodesArgs, kind: SchemeKind, n: usize) -> Result<Checked> {
    for (given, flag) in [
        (args.s.is_some(), "--s"),
        (args.k.is_some(), "--k"),
        (args.d.is_some(), "--d"),
    ] {
        if given {
            bail!("{flag} does not apply to --scheme {kind}: give its split with --p, --q (and --m for entangled)");
        }
    }
    let params = Params {
        m: args.m,
        p: args.p,
        q: args.q,
        ..Params::default()
    };
    let scheme = Scheme::new(kind, n, params).context("invalid configuration")?;
    let code = MatmulCode::new(&scheme, args.generator.unwrap_or(Generator::Vandermonde), args.seed)?;
    Ok(Checked::Matmul(code))
}
