//! `gcsim whatif --mitigate`: the job fitted to the hybrid-parallel model
//! ([`HybridFit`]), simulated forward under each mitigation with `gcsim
//! run --parallel`, in process, on the same seed.

use std::io::{self, Write};

use anyhow::{Result, anyhow};
use clap::Parser;
use serde::Serialize;

use gcsim::whatif::HybridFit;

use crate::output::Memory;
use crate::{Cli, Config};

/// Steps (iterations) of a run, over which the GPU-hours are counted,
/// unless `--iterations-per-run` says otherwise.
pub const STEPS: u64 = 1000;

/// One mitigation's simulated step time.
#[derive(Debug, Clone, Serialize)]
pub struct Mitigation {
    /// What is changed.
    pub mitigation: String,
    /// The flags that change it, over the fitted model's.
    pub flags: String,
    /// Mean step time (seconds).
    pub mean: f64,
    /// Its 95% interval.
    pub ci95_low: f64,
    /// Its 95% interval.
    pub ci95_high: f64,
    /// The fitted model's mean over this one's.
    pub speedup: f64,
    /// GPU-hours per run, every GPU of the job counted.
    pub gpu_hours: f64,
    /// The mean share of the data whose gradient is in a step's update:
    /// below 1 where replicas are dropped or cut off by a deadline.
    pub data_fraction: f64,
}

/// The fitted model, its check against the trace, and the mitigations.
#[derive(Debug, Clone, Serialize)]
pub struct Mitigations {
    /// The fitted model.
    pub model: HybridFit,
    /// The `gcsim run` flags of the fitted model.
    pub flags: String,
    /// The trace's mean measured step (seconds).
    pub measured: f64,
    /// The fitted model's simulated mean step, relative to the measured one, minus 1.
    pub fit_error: f64,
    /// Simulated steps per mitigation.
    pub trials: u64,
    /// Steps of one run, over which `gpu_hours` are counted.
    pub iterations_per_run: u64,
    /// The mitigations, the fitted model first.
    pub rows: Vec<Mitigation>,
    /// What could not be simulated, and why.
    pub not_modelled: Vec<String>,
}

/// `x` to 6 significant digits, in its shortest form.
fn num(x: f64) -> String {
    format!("{x:.5e}")
        .parse::<f64>()
        .map_or_else(|_| x.to_string(), |v| v.to_string())
}

fn flag(name: &str, value: impl ToString) -> [String; 2] {
    [format!("--{name}"), value.to_string()]
}

/// The fitted model's flags: `--workers` classes for the ranks (one class
/// per run of equal laws, in rank order), and the rest as fitted.
fn model_flags(fit: &HybridFit, rank_mu: &[f64], stage_work: &[f64], microbatches: bool) -> Vec<String> {
    let mut f: Vec<String> = Vec::new();
    f.extend(flag("parallel", format!("dp={},pp={},tp=1", fit.dp, fit.pp)));
    f.extend(flag("microbatches", fit.microbatches));
    let schedule = if fit.vpp > 1 {
        format!("interleaved:{}", fit.vpp)
    } else {
        "1f1b".into()
    };
    f.extend(flag("schedule", schedule));
    f.extend(flag("backward-ratio", num(fit.backward_ratio)));
    let work: Vec<String> = stage_work.iter().map(|&w| num(w)).collect();
    f.extend(flag("stage-work", work.join(",")));
    if microbatches && fit.microbatch_sigma > 0.0 {
        let s = fit.microbatch_sigma;
        f.extend(flag(
            "microbatch-work",
            format!("lognormal:mu={},sigma={}", num(-s * s / 2.0), num(s)),
        ));
    }
    let mut r = 0;
    while r < rank_mu.len() {
        let run = rank_mu[r..].iter().take_while(|&&m| m == rank_mu[r]).count();
        // The log-normal needs sigma > 0: a spread below 1e-9 is that.
        let sigma = num(fit.sigma.max(1e-9));
        f.extend(flag(
            "workers",
            format!("{run}:lognormal:mu={},sigma={sigma}", num(rank_mu[r])),
        ));
        r += run;
    }
    f.extend(flag("p2p-time", num(fit.p2p_time)));
    f.extend(flag("optimizer-time", num(fit.optimizer_time)));
    f.extend(flag("time-unit", "s"));
    if fit.dp > 1 && fit.collective_time > 0.0 {
        // A ring of the stage's 1/P share of a 1 GB gradient (α = 0) takes
        // 2 (D−1)/D · (1/P) GB / bandwidth: the bandwidth that gives the
        // measured sum.
        let d = f64::from(fit.dp);
        let gbps = 2.0 * (d - 1.0) / d / f64::from(fit.pp) / fit.collective_time;
        f.extend(flag("aggregation", "ring"));
        f.extend(flag("gradient-size", "1GB"));
        f.extend(flag("bandwidth", format!("{}GB/s", num(gbps))));
    }
    f
}

/// Runs `gcsim run FLAGS` in process and returns its first row.
fn simulate(flags: &[String]) -> Result<serde_json::Value> {
    let mut argv: Vec<String> = vec!["gcsim".into(), "run".into()];
    argv.extend(flags.iter().cloned());
    argv.extend(["--format", "json", "--quiet"].map(String::from));
    let cli = Cli::try_parse_from(&argv).map_err(|e| anyhow!("the fitted model's flags do not parse: {}", e.kind()))?;
    let Config::Job(mut job) = Config::try_from(cli.command)? else {
        return Err(anyhow!("the fitted model's flags are not a run"));
    };
    let memory = Memory::default();
    job.output.memory = Some(memory.clone());
    job.execute()?;
    let bytes = std::mem::take(&mut *memory.lock().unwrap_or_else(|e| e.into_inner()));
    let mut report: serde_json::Value = serde_json::from_slice(&bytes)?;
    Ok(report["rows"][0].take())
}

/// A mitigation: what it is, the flags that change it, and all its flags.
type Variant = (String, String, Vec<String>);

/// Simulates `variant` over `trials` steps on `seed`: its row of the table
/// and its `gcsim run` row.
fn simulate_variant(
    (mitigation, change, mut flags): Variant,
    (trials, seed, steps): (u64, u64, u64),
    gpus_per_rank: f64,
) -> Result<(Mitigation, serde_json::Value)> {
    flags.extend(flag("trials", trials));
    flags.extend(flag("seed", seed));
    flags.extend(flag("iterations-per-run", steps));
    let row = simulate(&flags)?;
    let value = |k: &str| row[k].as_f64().unwrap_or(f64::NAN);
    let m = Mitigation {
        mitigation,
        flags: change,
        mean: value("mean"),
        ci95_low: value("ci95_low"),
        ci95_high: value("ci95_high"),
        speedup: 0.0,
        // The model has one rank per (replica, stage); each stands for its
        // tensor- and context-parallel peers too.
        gpu_hours: value("gpu_hours") * gpus_per_rank,
        data_fraction: value("data_fraction"),
    };
    Ok((m, row))
}

/// Timeouts across replicas at deadlines by which the fitted job's
/// replicas are all in half and nine tenths of the time: its step's median
/// and 90th percentile (from `fitted`, its row) less what follows the sums'
/// decision (the sum and the optimizer). Deadlines with no time left are
/// added to `not_modelled`.
fn deadlines(
    fit: &HybridFit,
    fitted: &serde_json::Value,
    base: &[String],
    not_modelled: &mut Vec<String>,
) -> Vec<Variant> {
    let after = fit.collective_time + fit.optimizer_time;
    let mut variants = Vec::new();
    for q in ["p50", "p90"] {
        let t = fitted[q].as_f64().unwrap_or(f64::NAN) - after;
        if t.is_nan() || t <= 0.0 {
            not_modelled.push(format!(
                "timeout at the fitted step's {q}: no time is left before its sum"
            ));
            continue;
        }
        let t = num(t);
        let mut flags = base.to_vec();
        flags.extend(["--scheme".into(), "timeout".into(), "--timeout".into(), t.clone()]);
        let what = format!("timeout across replicas, T = {t} s ({q})");
        variants.push((what, format!("--scheme timeout --timeout {t}"), flags));
    }
    variants
}

impl Mitigations {
    /// Simulates the fitted model and each mitigation, `trials` steps each
    /// on `seed`; GPU-hours count `gpus_per_rank` GPUs for each modelled
    /// rank, over runs of `steps` steps.
    pub fn run(
        fit: &HybridFit,
        measured: f64,
        gpus_per_rank: f64,
        (trials, seed, steps): (u64, u64, u64),
    ) -> Result<Self> {
        let mean_work = fit.stage_work.iter().sum::<f64>() / fit.stage_work.len() as f64;
        let balanced = vec![mean_work; fit.stage_work.len()];
        let worst = (0..fit.rank_mu.len())
            .max_by(|&a, &b| fit.rank_mu[a].total_cmp(&fit.rank_mu[b]))
            .unwrap_or(0);
        let mut fixed = fit.rank_mu.clone();
        let stage = worst % fit.pp as usize;
        // The slowest rank at its stage's median rank.
        let mut peers: Vec<f64> = fit
            .rank_mu
            .iter()
            .skip(stage)
            .step_by(fit.pp as usize)
            .copied()
            .collect();
        peers.sort_by(f64::total_cmp);
        fixed[worst] = peers[peers.len() / 2];
        let base = model_flags(fit, &fit.rank_mu, &fit.stage_work, true);
        let mut variants: Vec<Variant> = vec![
            ("as fitted (uncoded)".into(), String::new(), base.clone()),
            (
                format!(
                    "fix the slowest rank (dp rank {}, stage {stage})",
                    worst / fit.pp as usize
                ),
                "its --workers class at its stage's median".into(),
                model_flags(fit, &fixed, &fit.stage_work, true),
            ),
            (
                "rebalance the stages".into(),
                format!("--stage-work {} on every stage", num(mean_work)),
                model_flags(fit, &fit.rank_mu, &balanced, true),
            ),
        ];
        if fit.microbatch_sigma > 0.0 {
            variants.push((
                "balance the microbatches".into(),
                "no --microbatch-work".into(),
                model_flags(fit, &fit.rank_mu, &fit.stage_work, false),
            ));
        }
        let mut not_modelled = Vec::new();
        for (scheme, what) in [
            ("frc", "frc s=1 across replicas"),
            ("crc", "crc s=1 across replicas"),
            ("ignore", "drop the slowest replica of each stage"),
        ] {
            if scheme == "frc" && !fit.dp.is_multiple_of(2) {
                not_modelled.push(format!(
                    "{what}: frc needs an even number of replicas, the job has {}",
                    fit.dp
                ));
                continue;
            }
            if fit.dp < 2 {
                not_modelled.push(format!("{what}: the job has one replica"));
                continue;
            }
            let mut flags = base.clone();
            flags.extend(["--scheme".into(), scheme.into(), "--s".into(), "1".into()]);
            variants.push((what.into(), format!("--scheme {scheme} --s 1"), flags));
        }
        let run = |variant| simulate_variant(variant, (trials, seed, steps), gpus_per_rank);
        let mut rows = Vec::new();
        let mut fitted = serde_json::Value::Null;
        for variant in variants {
            let (m, row) = run(variant)?;
            if rows.is_empty() {
                fitted = row;
            }
            rows.push(m);
        }
        if fit.dp < 2 {
            not_modelled.push("timeout across replicas: the job has one replica".into());
        } else {
            for variant in deadlines(fit, &fitted, &base, &mut not_modelled) {
                rows.push(run(variant)?.0);
            }
        }
        let reference = rows[0].mean;
        for r in &mut rows {
            r.speedup = reference / r.mean;
        }
        Ok(Mitigations {
            model: fit.clone(),
            flags: base.join(" "),
            measured,
            fit_error: reference / measured - 1.0,
            trials,
            iterations_per_run: steps,
            rows,
            not_modelled,
        })
    }

    /// The table after the analysis's.
    pub fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out)?;
        writeln!(
            out,
            "# mitigations: the job fitted to the hybrid model, {} simulated steps each; GPU-hours per run of {} steps; data: the share of the data in a step's update",
            self.trials, self.iterations_per_run
        )?;
        writeln!(out, "# fitted: gcsim run {}", self.flags)?;
        writeln!(
            out,
            "# check: the fitted model's mean step {:.4} s against the measured {:.4} s ({:+.1}%)",
            self.rows[0].mean,
            self.measured,
            100.0 * self.fit_error
        )?;
        writeln!(
            out,
            "{:<52} {:>8} {:>19} {:>8} {:>10} {:>5}",
            "mitigation", "mean_s", "ci95", "speedup", "gpu_hours", "data"
        )?;
        for r in &self.rows {
            writeln!(
                out,
                "{:<52} {:>8.4} {:>19} {:>8.4} {:>10.2} {:>5.3}",
                r.mitigation,
                r.mean,
                format!("{:.4}–{:.4}", r.ci95_low, r.ci95_high),
                r.speedup,
                r.gpu_hours,
                r.data_fraction
            )?;
        }
        for n in &self.not_modelled {
            writeln!(out, "not simulated: {n}")?;
        }
        Ok(())
    }
}
