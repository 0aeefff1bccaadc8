//! Strategies beyond coding: the `timeout` deadline, against an independent
//! simulation and closed forms written here, on every engine path.

use assert_cmd::Command;
use predicates::prelude::*;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use rand_xoshiro::Xoshiro256PlusPlus;

use gcsim::comm::{Comm, Link};
use gcsim::dist::Dist;
use gcsim::engine::{self, RulePath, Sampling, Silent, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::report;
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::study::{Study, Workers};

/// Bound on |z| for the checks below: each is one of a handful of fixed-seed
/// checks, so a correct engine passes with probability about 1 − 10⁻⁵ each.
const Z: f64 = 4.5;

/// The timeout scheme on n workers with deadline `t`.
pub(crate) fn timeout(n: usize, t: f64) -> Scheme {
    Scheme::new(
        SchemeKind::Timeout,
        n,
        Params {
            timeout: Some(t),
            ..Params::default()
        },
    )
    .unwrap()
}

/// The iteration time and the share of workers in the update under a
/// deadline, straight from the definition: the master takes arrivals in time
/// order and stops at the last one if every worker is in by `t`, else at
/// `t` if someone is in, else at the first.
fn by_definition(arrivals: &mut [f64], t: f64) -> (f64, f64) {
    arrivals.sort_by(f64::total_cmp);
    let n = arrivals.len();
    let in_by_t = arrivals.iter().filter(|&&a| a <= t).count();
    let (time, count) = match in_by_t {
        c if c == n => (arrivals[n - 1], n),
        0 => (arrivals[0], 1),
        c => (t, c),
    };
    (time, count as f64 / n as f64)
}

fn mean_and_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// Exponential workers of rate 1: the exact law (mean, quantiles at the
/// atom, CDF on both sides of it, data share) against an independent
/// simulation with its own generator, and the closed forms
/// P(Z ≤ z) = (1 − e^(−z))ⁿ below T, 1 − e^(−nz) from T on.
#[test]
fn timeout_law_matches_an_independent_simulation() {
    let n = 12;
    let exp = Exp::new(1.0).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
    for t in [0.05, 0.8, 2.0] {
        let study = Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, vec![timeout(n, t)], 1, 0).unwrap();
        let law = study
            .exact_law(&study.schemes()[0])
            .expect("i.i.d. exponential workers");
        let trials = 200_000;
        let (mut times, mut shares) = (Vec::with_capacity(trials), Vec::with_capacity(trials));
        let mut arrivals = vec![0.0; n];
        for _ in 0..trials {
            arrivals.iter_mut().for_each(|a| *a = exp.sample(&mut rng));
            let (time, share) = by_definition(&mut arrivals, t);
            times.push(time);
            shares.push(share);
        }
        let (m, se) = mean_and_se(&times);
        assert!(
            (m - law.mean()).abs() < Z * se,
            "T={t}: mean {m} ± {se} vs exact {}",
            law.mean()
        );
        let (f, se) = mean_and_se(&shares);
        let share = law.deadline_share().unwrap();
        assert!((f - share).abs() < Z * se, "T={t}: share {f} ± {se} vs exact {share}");
        // The closed forms, on both sides of the deadline.
        let nf = n as f64;
        for z in [0.5 * t, 0.999 * t, t, 1.5 * t, 3.0 * t] {
            let closed = if z < t {
                (1.0 - (-z).exp()).powf(nf)
            } else {
                1.0 - (-nf * z).exp()
            };
            assert!(
                (law.cdf(z) - closed).abs() < 1e-12,
                "T={t}, z={z}: {} vs {closed}",
                law.cdf(z)
            );
            let empirical = times.iter().filter(|&&x| x <= z).count() as f64 / trials as f64;
            let sd = (closed * (1.0 - closed) / trials as f64).sqrt().max(1e-9);
            assert!(
                (empirical - closed).abs() < Z * sd,
                "T={t}, z={z}: {empirical} vs {closed}"
            );
        }
        // A quantile inside the atom is T exactly.
        let (below, at) = ((1.0 - (-t).exp()).powf(nf), 1.0 - (-nf * t).exp());
        let inside = 0.5 * (below + at);
        assert_eq!(law.quantile(inside), t, "T={t}");
        // The share by its closed form: F(T) + S(T)ⁿ/n.
        let closed_share = 1.0 - (-t).exp() + (-nf * t).exp() / nf;
        assert!((share - closed_share).abs() < 1e-14, "T={t}: {share} vs {closed_share}");
    }
}

/// The engine's mean and data share against the exact law on every path a
/// deadline takes: the closed-form rule path, the event walk, constant
/// transfers (the deadline is on arrivals: T − τ on the computation), and
/// `additive` loads.
#[test]
fn the_engine_meets_the_deadline_law_on_every_path() {
    let n = 16;
    let exp = Dist::exp(1.0).unwrap();
    let shifted = Dist::shifted_exp(0.5, 2.0).unwrap();
    // Transfer time τ, and the rule path (`None`: the plan the command line uses).
    type Case = (&'static str, Dist, LoadModel, Option<f64>, Option<RulePath>);
    let cases: [Case; 6] = [
        ("fixed, default plan", exp, LoadModel::Fixed, None, None),
        ("fixed, rule path", exp, LoadModel::Fixed, None, Some(RulePath::Fast)),
        ("fixed, event walk", exp, LoadModel::Fixed, None, Some(RulePath::Events)),
        ("scaled shifted-exp", shifted, LoadModel::Scaled, None, None),
        ("constant transfer", exp, LoadModel::Fixed, Some(0.5), None),
        ("additive", exp, LoadModel::Additive, None, None),
    ];
    for (what, dist, model, comm, path) in cases {
        // Where each branch is common: at the worker's 95% quantile all 16
        // are in by T in 44% of trials, at its 5% quantile none is in 44%.
        let at = |q: f64| dist.quantile(q) + comm.unwrap_or(0.0);
        let schemes = vec![timeout(n, at(0.95)), timeout(n, at(0.05))];
        let mut study = Study::new(n, dist, model, schemes, 50_000, 3).unwrap();
        if let Some(tau) = comm {
            study = study.with_comm(Comm::new(Some(tau), None, Link::Dedicated, 0.0).unwrap());
        }
        let plan = match path {
            Some(path) => TrialPlan::with(&study, path, Sampling::Draws),
            None => TrialPlan::new(&study),
        };
        let outcome = engine::simulate_with(&plan, &study, &Silent);
        let rows = report::rows(&study, &outcome);
        for (row, scheme) in rows.iter().zip(study.schemes()) {
            let law = study.exact_law(scheme).expect("an exact law");
            let se = row.std_err.unwrap();
            assert!(
                (row.mean - law.mean()).abs() < Z * se,
                "{what}, {scheme}: {} ± {se} vs exact {}",
                row.mean,
                law.mean()
            );
            assert_eq!(row.analytic_mean, Some(law.mean()), "{what}");
            // The exact share, reported as the row's data_fraction.
            assert_eq!(row.data_fraction, law.deadline_share(), "{what}");
            assert!(!row.exact && row.timeout == scheme.deadline(), "{what}");
        }
    }
}

/// Where no exact law exists (a class of workers), the share is simulated
/// from the arrivals; it must agree with the formula for the same workers,
/// at deadlines where every worker is in by T in 60% of trials (T = 3) and
/// where none is in 90% (T = 0.01; the master then takes the first alone).
#[test]
fn a_simulated_data_share_agrees_with_the_formula() {
    let n = 10;
    let workers = Workers::Classes {
        classes: vec![(n, Dist::exp(1.0).unwrap())],
        shuffle: false,
    };
    let schemes = vec![timeout(n, 3.0), timeout(n, 0.01)];
    let study = Study::with_workers(n, workers, LoadModel::Fixed, schemes, 100_000, 5).unwrap();
    assert!(
        study.exact_law(&study.schemes()[0]).is_none(),
        "classes have no deadline law"
    );
    let outcome = engine::simulate(&study, &Silent);
    for (row, t) in report::rows(&study, &outcome).iter().zip([3.0f64, 0.01]) {
        let f = 1.0 - (-t).exp();
        let exact = f + (1.0 - f).powi(n as i32) / n as f64;
        // 20 000 trials of a share of n workers, each in w.p. F(T), with
        // the first added when none is: at most the binomial spread plus 1/n.
        let sd = (f * (1.0 - f) / n as f64).sqrt() + 1.0 / n as f64;
        let se = sd / 20_000f64.sqrt();
        let got = row.data_fraction.unwrap();
        assert!((got - exact).abs() < Z * se, "T={t}: {got} vs {exact} ± {se}");
        let error = row.approx_error.unwrap();
        assert!(
            (error + got - 1.0).abs() < 1e-12,
            "error {error} is 1 - share {got} for B = I"
        );
    }
}

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// The CSV of `args` run as two shards in `dir` and merged.
pub(super) fn merged_halves(dir: &std::path::Path, args: &[&str]) -> String {
    let mut shards = Vec::new();
    for k in 1..=2 {
        let path = dir.join(format!("part{k}.json"));
        gcsim()
            .args(args)
            .args(["--shard", &format!("{k}/2"), "--out"])
            .arg(&path)
            .assert()
            .success();
        shards.push(path);
    }
    let merged = gcsim()
        .arg("merge")
        .args(&shards)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    String::from_utf8(merged.stdout).unwrap()
}

/// `gcsim scenario` on a file `<name>.toml` in `dir` of 10 workers with
/// `studies` appended, writing into `dir`.
pub(super) fn scenario(dir: &std::path::Path, name: &str, studies: &str) -> Command {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, format!("name = \"{name}\"\nn = 10\n{studies}")).unwrap();
    let mut command = gcsim();
    command
        .arg("scenario")
        .arg(&file)
        .arg("--out-dir")
        .arg(dir)
        .arg("--quiet");
    command
}

/// From the command line: a sweep over deadlines, its shards merged, and a
/// scenario file give the same rows; bad deadlines are refused.
#[test]
fn timeout_from_the_command_line_shards_and_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "sweep",
        "--n",
        "10",
        "--scheme",
        "uncoded,timeout",
        "--timeout",
        "0.5,2",
        // Two blocks of 2^20 trials, one per shard.
        "--trials",
        "1100000",
    ];
    let whole = gcsim().args(args).args(["--format", "csv"]).output().unwrap();
    assert!(whole.status.success());
    let csv = String::from_utf8(whole.stdout).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(
        rows[1].starts_with("timeout,10,0,,10,") && rows[1].contains(",0.5,,,,1,,,"),
        "{csv}"
    );
    assert!(rows[2].contains(",2.0,,,,1,,,"), "{csv}");
    assert_eq!(merged_halves(dir.path(), &args), csv);
    scenario(
        dir.path(),
        "deadlines",
        "trials = 1100000\n[[study]]\nlabel = \"t\"\nschemes = [\"uncoded\", \"timeout\"]\ntimeout = [0.5, 2]\n",
    )
    .assert()
    .success();
    let from_scenario = std::fs::read_to_string(dir.path().join("deadlines/t.csv")).unwrap();
    assert_eq!(from_scenario, csv);
    for (extra, expected) in [
        (&["--scheme", "timeout"][..], "timeout needs --timeout"),
        (
            &["--scheme", "timeout", "--timeout", "-1"],
            "--timeout -1 is out of range",
        ),
        (
            &["--scheme", "timeout", "--timeout", "inf"],
            "accepted: a finite number >= 0",
        ),
        (
            &["--scheme", "crc", "--s", "1", "--timeout", "1"],
            "--timeout applies only to --scheme timeout",
        ),
        (
            &["--scheme", "timeout", "--timeout", "1", "--s", "1"],
            "--s does not apply to timeout",
        ),
    ] {
        gcsim()
            .args(["run", "--n", "10"])
            .args(extra)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected).and(predicate::str::contains("\n").count(1)));
    }
    gcsim()
        .args(["sweep", "--n", "10", "--scheme", "timeout", "--timeout", "1,-2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`-2` is out of range"));
    gcsim()
        .args(["plan", "--n", "10", "--scheme", "timeout"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--scheme timeout needs --timeout, the deadlines to try",
        ));
    // plan searches each deadline given; a deadline below the uncoded mean
    // wins on time, and the recommendation says it is inexact.
    let out = gcsim()
        .args([
            "plan",
            "--n",
            "10",
            "--scheme",
            "uncoded,timeout",
            "--timeout",
            "1,50",
            "--format",
            "table",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_whitespace().collect())
        .collect();
    let schemes: Vec<(&str, &str)> = rows.iter().map(|r| (r[2], *r.last().unwrap())).collect();
    // T = 50 is later than every iteration but with probability about
    // 10e^-50: the same mean as uncoded, and ties rank the exact first.
    assert_eq!(
        schemes,
        [("timeout", "1.000"), ("uncoded", "-"), ("timeout", "50.00")],
        "{text}"
    );
    assert!(
        text.contains("recommend: n=10 timeout T=1 (inexact: proceeds at T with the workers that have arrived"),
        "{text}"
    );
}

/// A sweep over deadlines is drawn against T with the deadline's line
/// dotted as inexact; deadlines beside tolerances are refused before any
/// work, from the command line and from a scenario file.
#[test]
fn deadline_figures_have_their_own_axis() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("t.svg");
    gcsim()
        .args([
            "sweep",
            "--n",
            "10",
            "--scheme",
            "uncoded,timeout",
            "--timeout",
            "0.5,1,2",
        ])
        .args(["--trials", "2000", "--quiet", "--plot"])
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("deadline T (unit of --dist)") && text.contains("against T"),
        "{text}"
    );
    assert!(text.contains("inexact gradient (simulated)") && text.contains("timeout (inexact)"));
    // The deadline's points sit at T = 0.5, 1, 2: the second gap twice the
    // first. They are timeout's hollow triangles (closed outlines of four
    // points in its colour); the last one is the legend's.
    let timeout = gcsim_figures::plot::style::hex(
        gcsim_figures::plot::style::scheme_style(gcsim::scheme::SchemeKind::Timeout).color,
    );
    let mut xs: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with("<polyline") && l.contains(&format!("stroke=\"{timeout}\"")))
        .filter_map(|l| {
            let points = &l[l.find("points=\"")? + 8..];
            let xy: Vec<f64> = points[..points.find('"')?]
                .split_whitespace()
                .map(|p| p.split(',').next().unwrap().parse().unwrap())
                .collect();
            (xy.len() == 4).then(|| (xy[1] + xy[2]) / 2.0)
        })
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.pop();
    assert_eq!(xs.len(), 3, "{xs:?}");
    let (a, b) = (xs[1] - xs[0], xs[2] - xs[1]);
    assert!(a > 50.0 && (b - 2.0 * a).abs() <= 2.0, "{xs:?}");
    let exact_only = dir.path().join("s.svg");
    gcsim()
        .args(["sweep", "--n", "10", "--scheme", "uncoded,crc", "--s", "0..2"])
        .args(["--trials", "2000", "--quiet", "--plot"])
        .arg(&exact_only)
        .assert()
        .success();
    let text = std::fs::read_to_string(&exact_only).unwrap();
    assert!(!text.contains("inexact") && text.contains("straggler tolerance s"));
    // Several deadlines and a tolerance share no axis; one deadline is a
    // horizontal line on the axis of s.
    let mixed = dir.path().join("m.svg");
    gcsim()
        .args([
            "sweep",
            "--n",
            "10",
            "--scheme",
            "crc,timeout",
            "--s",
            "1",
            "--timeout",
            "1,2",
        ])
        .args(["--trials", "2000", "--plot"])
        .arg(&mixed)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--plot: a sweep figure has one x axis"));
    assert!(!mixed.exists());
    let one = dir.path().join("one.svg");
    gcsim()
        .args(["sweep", "--n", "10", "--scheme", "crc,timeout", "--s", "0..3"])
        .args(["--timeout", "1", "--trials", "2000", "--quiet", "--plot"])
        .arg(&one)
        .assert()
        .success();
    let text = std::fs::read_to_string(&one).unwrap();
    assert!(
        text.contains("straggler tolerance s") && text.contains("timeout"),
        "{text}"
    );
    // crc's four points are marked (and its legend entry); the deadline's
    // one value is a line, unmarked.
    let crc =
        gcsim_figures::plot::style::hex(gcsim_figures::plot::style::scheme_style(gcsim::scheme::SchemeKind::Crc).color);
    let marked = |fill: &str| {
        text.lines()
            .filter(|l| l.starts_with("<circle") && l.contains(&format!("fill=\"{fill}\"")))
            .count()
    };
    assert_eq!(marked(&crc), 4 + 1, "{text}");
    let timeout = gcsim_figures::plot::style::hex(
        gcsim_figures::plot::style::scheme_style(gcsim::scheme::SchemeKind::Timeout).color,
    );
    let outlines = text
        .lines()
        .filter(|l| {
            l.starts_with("<polyline") && l.contains(&format!("stroke=\"{timeout}\"")) && l.matches(',').count() == 4
        })
        .count();
    assert_eq!(outlines, 0, "the flat deadline has no markers");
    scenario(
        dir.path(),
        "m",
        "[[study]]\nlabel = \"t\"\nschemes = [\"crc\", \"timeout\"]\ns = 1\ntimeout = [1, 2]\nfigures = [{ file = \"a.png\" }]\n",
    )
    .assert()
    .code(2)
    .stderr(predicate::str::contains("m.toml:8: study `t`: a sweep figure has one x axis"));
    assert!(!dir.path().join("m").exists());
}

/// The asynchronous strategies and a partial code from the command line: a
/// sweep, its shards merged and a scenario file give the same bytes (the
/// staleness is recounted the same way at the merge), with the staleness
/// and partitions columns filled for their rows only.
#[test]
fn asynchronous_and_partial_from_the_command_line_shards_and_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "sweep",
        "--n",
        "4",
        "--scheme",
        "k-async,k-batch-async,partial-crc",
        "--s",
        "2",
        "--parts",
        "4",
        "--load-model",
        "scaled",
        "--trials",
        "1100000",
    ];
    let whole = gcsim().args(args).args(["--format", "csv"]).output().unwrap();
    assert!(whole.status.success());
    let csv = String::from_utf8(whole.stdout).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for r in &rows[..2] {
        let staleness: f64 = r[col("staleness")].parse().unwrap();
        assert!(staleness > 0.0, "{csv}");
        assert_eq!(r[col("parts")], "", "{csv}");
        assert_eq!(r[col("k")], "2", "{csv}");
    }
    assert_eq!(rows[2][col("staleness")], "", "{csv}");
    assert_eq!(rows[2][col("parts")], "4", "{csv}");
    assert_eq!(rows[2][col("load")], "2.0", "{csv}");
    assert_eq!(merged_halves(dir.path(), &args), csv);
    std::fs::write(
        dir.path().join("async.toml"),
        "name = \"async\"\nn = 4\nload_model = \"scaled\"\ntrials = 1100000\n[[study]]\nlabel = \"a\"\nschemes = [\"k-async\", \"k-batch-async\", \"partial-crc\"]\ns = 2\nparts = 4\n",
    )
    .unwrap();
    gcsim()
        .arg("scenario")
        .arg(dir.path().join("async.toml"))
        .arg("--out-dir")
        .arg(dir.path())
        .arg("--quiet")
        .assert()
        .success();
    let from_scenario = std::fs::read_to_string(dir.path().join("async/a.csv")).unwrap();
    assert_eq!(from_scenario, csv);
    // A scenario's `parts` beside no partial code is refused at the key.
    let bad = scenario(
        dir.path(),
        "bad",
        "[[study]]\nlabel = \"b\"\nschemes = [\"crc\"]\ns = 1\nparts = 4\n",
    )
    .output()
    .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("parts applies only to schemes partial-frc and partial-crc"),
        "{stderr}"
    );
}
