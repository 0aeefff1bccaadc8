//! `gcsim run --parallel` against the independent event-queue simulator of
//! `hybrid_reference`, on the same flags: the mean iteration time, the
//! bubble fraction and (for the codes across replicas) the speedup over the
//! uncoded job agree at |z| < 4.5, the two sides on their own generators
//! and fixed seeds. The reference reads the flags the test hands gcsim, so
//! both simulate one job by construction.
//!
//! gcsim's bubble fraction and speedup come without a standard error; the
//! reference's per-trial deviation stands in for gcsim's (the same law's),
//! scaled to gcsim's trials.

use assert_cmd::Command;

use super::hybrid_reference::Job;
use super::hybrid_reference::trial::Estimate;

/// Bound on |z| for each comparison: about 7·10⁻⁶ for a correct pair.
const Z: f64 = 4.5;

/// gcsim's trials (it runs on every core, far faster than the reference).
const GCSIM_TRIALS: usize = 100_000;

/// gcsim's row of `scheme` for `flags`, at `GCSIM_TRIALS` and seed 1.
fn gcsim_row(flags: &[&str], scheme: &str) -> serde_json::Value {
    let trials = GCSIM_TRIALS.to_string();
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .arg("run")
        .args(flags)
        .args(["--trials", &trials, "--seed", "1", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{flags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().expect("rows");
    rows.iter()
        .find(|r| r["scheme"] == scheme)
        .unwrap_or_else(|| panic!("{flags:?}: no {scheme} row in {rows:?}"))
        .clone()
}

fn number(row: &serde_json::Value, column: &str) -> f64 {
    row[column]
        .as_f64()
        .unwrap_or_else(|| panic!("{column} = {}", row[column]))
}

/// gcsim's trials behind the bubble fraction (its first 2 000).
const GCSIM_BUBBLE_TRIALS: usize = 2_000;

/// Asserts |gcsim − reference| < Z·se, where `sd` is the per-trial
/// deviation that stands in for gcsim's (over `gcsim_trials`) and the
/// reference's (over `trials`).
fn close(what: &str, flags: &[&str], (gcsim, gcsim_trials): (f64, usize), reference: f64, sd: f64, trials: usize) {
    let se = sd * (1.0 / trials as f64 + 1.0 / gcsim_trials as f64).sqrt();
    if se == 0.0 {
        // A constant (the uncoded job's speedup over itself): equal values.
        assert!(
            (gcsim - reference).abs() <= 1e-12 * reference.abs(),
            "{what}: gcsim {gcsim}, reference {reference} for {flags:?}"
        );
        return;
    }
    let z = (gcsim - reference) / se;
    assert!(
        z.abs() < Z,
        "{what}: gcsim {gcsim}, reference {reference} ± {se} (z = {z:.2}) for {flags:?}"
    );
}

/// Runs both sides on `flags`, the reference on `trials` trials, and
/// compares the mean, the bubble fraction and the speedup; returns the
/// reference's estimates and gcsim's row.
fn agree(flags: &[&str], trials: usize) -> (Estimate, serde_json::Value) {
    let job = Job::from_flags(flags);
    let reference = job.simulate(trials, 7);
    let row = gcsim_row(flags, job.scheme.name());
    let (mean, se) = (number(&row, "mean"), number(&row, "std_err"));
    let z = (mean - reference.mean) / se.hypot(reference.std_err);
    assert!(
        z.abs() < Z,
        "mean: gcsim {mean} ± {se}, reference {} ± {} (z = {z:.2}) for {flags:?}",
        reference.mean,
        reference.std_err
    );
    let bubble = number(&row, "bubble_fraction");
    close(
        "bubble_fraction",
        flags,
        (bubble, GCSIM_BUBBLE_TRIALS),
        reference.bubble,
        reference.bubble_sd,
        reference.trials,
    );
    let speedup = number(&row, "speedup");
    close(
        "speedup",
        flags,
        (speedup, GCSIM_TRIALS),
        reference.speedup,
        reference.speedup_sd,
        reference.trials,
    );
    (reference, row)
}

/// `flags` with `--scheme scheme`, and `--s 1` unless it is uncoded.
fn with_scheme<'a>(flags: &[&'a str], scheme: &'a str) -> Vec<&'a str> {
    let mut all = flags.to_vec();
    all.extend(["--scheme", scheme]);
    if scheme != "uncoded" {
        all.extend(["--s", "1"]);
    }
    all
}

/// The issue's command as it stands: dp=2, pp=4, 1F1B over 8 microbatches,
/// exponential ranks, uncoded by default.
#[test]
fn the_issue_command_agrees() {
    let flags = [
        "--parallel",
        "dp=2,pp=4,tp=1",
        "--microbatches",
        "8",
        "--schedule",
        "1f1b",
        "--backward-ratio",
        "2",
        "--dist",
        "exp:rate=1",
    ];
    agree(&flags, 100_000);
}

/// GPipe with an activation transfer between stages (τ = 0.1) and a
/// backward ratio of 3.
#[test]
fn gpipe_with_transfers_agrees() {
    let flags = [
        "--parallel",
        "dp=2,pp=4,tp=1",
        "--microbatches",
        "6",
        "--schedule",
        "gpipe",
        "--backward-ratio",
        "3",
        "--p2p-time",
        "0.1",
        "--dist",
        "exp:rate=1",
    ];
    agree(&flags, 100_000);
}

/// Stragglers (5% of ranks 8× slower for the iteration) inside tensor
/// groups of 4: a slow rank holds up its whole stage.
#[test]
fn stragglers_in_tensor_groups_agree() {
    let flags = [
        "--parallel",
        "dp=2,pp=3,tp=4",
        "--microbatches",
        "6",
        "--schedule",
        "1f1b",
        "--dist",
        "exp:rate=1,p_slow=0.05,slowdown=8",
    ];
    agree(&flags, 60_000);
}

/// The causes real jobs show: the last stage 25% heavier and a log-normal
/// work per microbatch (sequence lengths), on log-normal ranks with
/// stragglers, tp = 2.
#[test]
fn stage_and_microbatch_imbalance_agree() {
    let flags = [
        "--parallel",
        "dp=2,pp=4,tp=2",
        "--microbatches",
        "8",
        "--schedule",
        "gpipe",
        "--stage-work",
        "1,1,1,1.25",
        "--microbatch-work",
        "lognormal:mu=0,sigma=0.5",
        "--dist",
        "lognormal:mu=0,sigma=0.5,p_slow=0.05,slowdown=4",
    ];
    agree(&flags, 60_000);
}

/// Codes across four replicas: frc with s = 1 (pairs of replicas, each
/// running 2M microbatches), ignore and crc with s = 1 (the third of four
/// replicas' stages), with stragglers so that the rules matter.
#[test]
fn codes_across_replicas_agree() {
    for scheme in ["frc", "ignore", "crc"] {
        let flags = [
            "--parallel",
            "dp=4,pp=4,tp=1",
            "--microbatches",
            "4",
            "--schedule",
            "1f1b",
            "--dist",
            "exp:rate=1,p_slow=0.1,slowdown=8",
        ];
        agree(&with_scheme(&flags, scheme), 40_000);
    }
}

/// A ring all-reduce per stage among the replicas, latency and bandwidth
/// both large enough to move the mean by many standard errors if wrong
/// (the agreement alone is 0.4 under ignore), and an optimizer step.
#[test]
fn ring_collectives_agree() {
    for scheme in ["uncoded", "ignore", "frc"] {
        let flags = [
            "--parallel",
            "dp=4,pp=2,tp=2",
            "--microbatches",
            "4",
            "--schedule",
            "1f1b",
            "--aggregation",
            "ring",
            "--gradient-size",
            "8e9",
            "--bandwidth",
            "1e9",
            "--latency",
            "0.1",
            "--time-unit",
            "s",
            "--optimizer-time",
            "0.5",
            "--dist",
            "exp:rate=1",
        ];
        agree(&with_scheme(&flags, scheme), 40_000);
    }
}

/// The reference at P = T = M = 1 against today's flat cluster, which runs
/// now: `gcsim run --n 6 --load-model additive` (a load of s + 1 is s + 1
/// draws, as a replica's s + 1 microbatches are), with stragglers and a
/// ring collective, for each rule. This checks the reference's rules,
/// participants, agreement and sampling against the engine as it stands.
#[test]
fn the_reference_at_one_stage_agrees_with_the_flat_cluster() {
    let common = [
        "--dist",
        "exp:rate=1,p_slow=0.1,slowdown=8",
        "--aggregation",
        "ring",
        "--gradient-size",
        "1e9",
        "--bandwidth",
        "1e9",
        "--latency",
        "0.05",
        "--time-unit",
        "s",
    ];
    for scheme in ["uncoded", "ignore", "crc", "frc"] {
        let shared = with_scheme(&common, scheme);
        let flat = [&["--n", "6", "--load-model", "additive"][..], &shared].concat();
        let row = gcsim_row(&flat, scheme);
        let hybrid = [
            &[
                "--parallel",
                "dp=6,pp=1,tp=1",
                "--microbatches",
                "1",
                "--schedule",
                "gpipe",
            ][..],
            &shared,
        ]
        .concat();
        let reference = Job::from_flags(&hybrid).simulate(100_000, 5);
        let (mean, se) = (number(&row, "mean"), number(&row, "std_err"));
        let z = (mean - reference.mean) / se.hypot(reference.std_err);
        assert!(z.abs() < Z, "{scheme}: gcsim {mean} ± {se}, reference {reference:?}");
        let speedup = number(&row, "speedup");
        close(
            "speedup",
            &flat,
            (speedup, GCSIM_TRIALS),
            reference.speedup,
            reference.speedup_sd,
            reference.trials,
        );
    }
}

/// Gradient buckets on the pipeline: each stage's gradient in 4 buckets,
/// the first three overlapping the stage's last backward, summed by a ring
/// one after another (dp=4, pp=3, tp=2: a tensor rank's bucket is
/// 2 GB/24, 0.08 s to 0.13 s of ring at 1 GB/s among 2 to 4 replicas,
/// besides its 1 ms steps). Log-normal ranks with σ = 0.2, 5% of them 2×
/// slower so that the rules matter: the reference's means then have
/// standard errors near 0.006 s, and an engine blind to the buckets
/// (K = 1: 0.25 s to 0.37 s later) fails by some 40 of them.
#[test]
fn buckets_agree() {
    for scheme in ["uncoded", "ignore", "frc"] {
        let flags = [
            "--parallel",
            "dp=4,pp=3,tp=2",
            "--microbatches",
            "3",
            "--schedule",
            "1f1b",
            "--aggregation",
            "ring",
            "--buckets",
            "4",
            "--bandwidth",
            "1GB/s",
            "--gradient-size",
            "2GB",
            "--latency",
            "1e-3",
            "--time-unit",
            "s",
            "--dist",
            "lognormal:mu=0,sigma=0.2,p_slow=0.05,slowdown=2",
        ];
        agree(&with_scheme(&flags, scheme), 40_000);
    }
}

/// Megatron-LM's interleaved schedule, two chunks per stage: stragglers
/// (5% of ranks 8× slower) in tensor groups of 2 and an activation
/// transfer of τ = 0.5 between consecutive virtual stages, which the
/// chunks cross 2P − 1 times per microbatch each way (stage 3 back to
/// stage 0 among them; at τ = 0.1 an engine that skipped that hop passed
/// here, under the stragglers' spread).
#[test]
fn interleaved_with_stragglers_and_transfers_agrees() {
    let flags = [
        "--parallel",
        "dp=2,pp=4,tp=2",
        "--microbatches",
        "8",
        "--schedule",
        "interleaved:2",
        "--p2p-time",
        "0.5",
        "--dist",
        "exp:rate=1,p_slow=0.05,slowdown=8",
    ];
    agree(&flags, 60_000);
}

/// Three chunks per stage under codes across replicas and gradient
/// buckets: a stage's last op, the one its buckets overlap, is its last
/// microbatch's backward of chunk 0, a third of the stage's backward.
#[test]
fn interleaved_codes_and_buckets_agree() {
    for scheme in ["frc", "ignore"] {
        let flags = [
            "--parallel",
            "dp=4,pp=3,tp=1",
            "--microbatches",
            "3",
            "--schedule",
            "interleaved:3",
            "--p2p-time",
            "0.05",
            "--aggregation",
            "ring",
            "--buckets",
            "4",
            "--bandwidth",
            "1GB/s",
            "--gradient-size",
            "2GB",
            "--latency",
            "1e-3",
            "--time-unit",
            "s",
            "--dist",
            "lognormal:mu=0,sigma=0.2,p_slow=0.05,slowdown=2",
        ];
        agree(&with_scheme(&flags, scheme), 40_000);
    }
}

/// `timeout` across replicas: each stage's (each bucket's) sum takes the
/// replicas in by T, its cost and agreement those of the replicas in, and
/// the update holds their share of the data. Two deadlines against an
/// uncoded mean near 10.4 (T = 9 keeps about 84% of the data, T = 5.5
/// about 47%), without a collective and with a ring in four buckets, whose
/// cost then varies with the replicas in.
#[test]
fn timeout_across_replicas_agrees() {
    let pipeline = [
        "--parallel",
        "dp=4,pp=3,tp=2",
        "--microbatches",
        "3",
        "--schedule",
        "1f1b",
        "--dist",
        "lognormal:mu=0,sigma=0.3,p_slow=0.05,slowdown=3",
        "--scheme",
        "timeout",
    ];
    let ring = [
        "--aggregation",
        "ring",
        "--buckets",
        "4",
        "--bandwidth",
        "1GB/s",
        "--gradient-size",
        "4GB",
        "--latency",
        "0.01",
        "--time-unit",
        "s",
    ];
    for (collective, deadlines) in [(&[][..], ["9", "5.5"]), (&ring[..], ["9", "5.5"])] {
        for t in deadlines {
            let flags = [&pipeline[..], collective, &["--timeout", t]].concat();
            let (reference, row) = agree(&flags, 40_000);
            assert!(
                reference.share > 0.3 && reference.share < 0.97,
                "T = {t} should bite: share {}",
                reference.share
            );
            close(
                "data_fraction",
                &flags,
                (number(&row, "data_fraction"), GCSIM_BUBBLE_TRIALS),
                reference.share,
                reference.share_sd,
                reference.trials,
            );
        }
    }
}

/// A deadline across replicas piles the iteration's values on one atom (T
/// with the sums after it), where p999's interval falls here: the bins
/// track their ends, so the first pass resolves it, without a second pass
/// over every trial (which doubled the run's time).
#[test]
fn a_deadline_across_replicas_resolves_its_percentiles_in_one_pass() {
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .args([
            "run",
            "--parallel",
            "dp=4,pp=4,tp=1",
            "--microbatches",
            "8",
            "--schedule",
            "1f1b",
        ])
        .args([
            "--scheme",
            "timeout",
            "--timeout",
            "30",
            "--dist",
            "exp:rate=1,p_slow=0.05,slowdown=8",
        ])
        .args(["--trials", "100000", "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("passes over the trials"), "{stderr}");
}

/// A deadline's limits, exactly: at T = 0 each stage sums its first replica
/// alone (a sum among one costs nothing and sends nothing), and at a T no
/// replica misses the job is the uncoded one, column for column.
#[test]
fn timeout_at_its_limits() {
    let job = [
        "--parallel",
        "dp=4,pp=2,tp=2",
        "--microbatches",
        "3",
        "--schedule",
        "1f1b",
        "--aggregation",
        "ring",
        "--bandwidth",
        "1GB/s",
        "--gradient-size",
        "4GB",
        "--time-unit",
        "s",
        "--dist",
        "exp:rate=1",
        "--scheme",
        "timeout",
    ];
    let first = gcsim_row(&[&job[..], &["--timeout", "0"]].concat(), "timeout");
    for (column, want) in [
        ("data_fraction", 0.25),
        ("participants", 1.0),
        ("collective_time", 0.0),
        ("bytes_per_iteration", 0.0),
    ] {
        assert_eq!(number(&first, column), want, "T = 0: {column}");
    }
    let all = gcsim_row(&[&job[..], &["--timeout", "1e9"]].concat(), "timeout");
    let uncoded = gcsim_row(&job[..job.len() - 2], "uncoded");
    // The deadline's sums are averaged over the pipelines' trials: equal
    // up to the rounding of that mean.
    for column in ["mean", "collective_time", "bytes_per_iteration", "participants"] {
        let (a, u) = (number(&all, column), number(&uncoded, column));
        assert!((a - u).abs() <= 1e-12 * u.abs(), "T = 1e9: {column} {a} against {u}");
    }
    // The same trials' p99, estimated within a twentieth of its standard
    // error as every percentile is: the deadline's study tracks its bins'
    // ends (for the atom at T), the uncoded one does not, so the two
    // estimates of the one order statistic may differ inside that bound.
    let (a, u) = (number(&all, "p99"), number(&uncoded, "p99"));
    let se = (number(&uncoded, "p99_ci95_high") - number(&uncoded, "p99_ci95_low")) / 3.92;
    assert!((a - u).abs() <= 0.05 * se, "T = 1e9: p99 {a} against {u} (se {se})");
    assert_eq!(number(&all, "data_fraction"), 1.0);
    assert_eq!(number(&all, "speedup"), 1.0);
}
