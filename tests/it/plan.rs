//! `gcsim plan` recommends the exact optimum where one can be computed.

use assert_cmd::Command;
use predicates::prelude::*;

use gcsim::dist::Dist;
use gcsim::engine::{self, Silent};
use gcsim::load::LoadModel;
use gcsim::plan::{Objective, PlanRequest, plan};
use gcsim::scheme::SchemeKind;
use gcsim::study::Workers;

fn harmonic(n: usize) -> f64 {
    (1..=n).map(|j| 1.0 / j as f64).sum()
}

/// A plan of `schemes` at n with the defaults of these tests (40 000
/// trials, exact laws where they exist).
pub(crate) fn request(
    n: usize,
    workers: Workers,
    model: LoadModel,
    schemes: Vec<SchemeKind>,
    objective: Objective,
) -> PlanRequest {
    PlanRequest {
        ns: vec![n],
        workers,
        load_model: model,
        ref_n: None,
        objective,
        max_load: None,
        schemes,
        m: vec![1],
        parts: Vec::new(),
        timeouts: Vec::new(),
        trials: 40_000,
        seed: 1,
        iterations: 1,
        comm: gcsim::comm::Comm::default(),
        aggregations: vec![gcsim::collective::Aggregation::Master],
        decoder: gcsim::comm::Decoder::Threshold,
        generator: None,
        exact: true,
        time_unit: None,
        costs: Default::default(),
        data_replicates: 0,
        parallel: None,
    }
}

fn simulate(study: &gcsim::study::Study, options: &engine::Options) -> engine::Outcome {
    engine::simulate_full(&engine::TrialPlan::new(study), study, &Silent, options)
}

/// Lee et al. 2017: MDS on n shifted-exponential workers with load-scaled
/// times, E[T_k] = (n/k)·(shift + (H_n − H_{n−k})/μ); the plan's first row is
/// the k that minimises it, for several clusters.
#[test]
fn mds_optimum_of_lee_et_al() {
    for (n, shift, rate) in [(50, 1.0, 1.0), (20, 0.5, 2.0), (100, 2.0, 0.5), (12, 0.1, 10.0)] {
        let dist = Dist::shifted_exp(shift, rate).unwrap();
        let req = request(
            n,
            Workers::Iid(dist),
            LoadModel::Scaled,
            vec![SchemeKind::Mds],
            Objective::Mean,
        );
        let rows = plan(&req, &simulate).unwrap();
        let exact = |k: usize| (n as f64 / k as f64) * (shift + (harmonic(n) - harmonic(n - k)) / rate);
        let best_k = (1..=n).min_by(|&a, &b| exact(a).total_cmp(&exact(b))).unwrap();
        assert_eq!(rows[0].k, best_k, "n={n} shift={shift} rate={rate}");
        assert!((rows[0].objective - exact(best_k)).abs() < 1e-9 * exact(best_k));
        assert_eq!(rows.len(), n);
        assert!(rows.windows(2).all(|w| w[0].objective <= w[1].objective), "ranked");
        assert_eq!(rows[0].method, "exact");
    }
}

/// The same question answered by simulation (exact values switched off):
/// the chosen k's exact mean is within the simulation's resolution of the
/// optimum.
#[test]
fn simulated_plan_finds_the_optimum_within_its_intervals() {
    let (n, shift, rate) = (20, 0.5, 2.0);
    let dist = Dist::shifted_exp(shift, rate).unwrap();
    let mut req = request(
        n,
        Workers::Iid(dist),
        LoadModel::Scaled,
        vec![SchemeKind::Mds],
        Objective::Mean,
    );
    req.exact = false;
    let rows = plan(&req, &simulate).unwrap();
    assert_eq!(rows[0].method, "simulated");
    let exact = |k: usize| (n as f64 / k as f64) * (shift + (harmonic(n) - harmonic(n - k)) / rate);
    let optimum = (1..=n).map(exact).fold(f64::INFINITY, f64::min);
    let (lo, hi) = (rows[0].objective_low.unwrap(), rows[0].objective_high.unwrap());
    let half = (hi - lo) / 2.0;
    // The chosen configuration is truly near-optimal: its exact mean is within
    // 4 of its own interval half-widths of the best exact mean.
    assert!(
        exact(rows[0].k) - optimum < 4.0 * half,
        "k={} exact {} vs optimum {optimum}",
        rows[0].k,
        exact(rows[0].k)
    );
    // And the interval covers that exact mean (to 4.5 standard errors).
    assert!((rows[0].objective - exact(rows[0].k)).abs() < 4.5 * half / 1.96);
}

/// A deadline: the exact probability P(T ≤ t) of crc s under fixed
/// exponential workers is the binomial tail; the plan maximises it within the
/// load bound.
#[test]
fn deadline_objective_with_a_load_bound() {
    let n = 30;
    let mut req = request(
        n,
        Workers::Iid(Dist::exp(1.0).unwrap()),
        LoadModel::Fixed,
        vec![SchemeKind::Crc],
        Objective::Deadline(1.0),
    );
    req.max_load = Some(5.0);
    let rows = plan(&req, &simulate).unwrap();
    assert_eq!(rows.len(), 5, "crc with load s+1 <= 5");
    // Under fixed load, more tolerance always helps: s = 4 is best.
    assert_eq!(rows[0].s, 4);
    let p = 1.0 - (-1.0f64).exp();
    let tail: f64 = (n - 4..=n)
        .map(|j| {
            let c = (0..j).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64);
            c * p.powi(j as i32) * (1.0 - p).powi((n - j) as i32)
        })
        .sum();
    assert!(
        (rows[0].objective - tail).abs() < 1e-9,
        "{} vs {tail}",
        rows[0].objective
    );
}

#[test]
fn cli_plan_recommends_and_rejects_bad_input() {
    let g = || Command::cargo_bin("gcsim").unwrap();
    g().args([
        "plan",
        "--n",
        "50",
        "--dist",
        "shifted-exp:shift=1,rate=1",
        "--load-model",
        "scaled",
        "--scheme",
        "mds",
        "--linear",
        "--format",
        "table",
    ])
    .assert()
    .success()
    .stdout(predicate::str::contains("recommend: n=50 mds k=34"));
    let json = g().args(["plan", "--n", "12", "--format", "json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(v["recommendation"].as_str().unwrap().starts_with("recommend:"));
    assert_eq!(v["rows"][0]["rank"], 1);
    g().args(["plan", "--n", "10", "--format", "csv"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "rank,n,scheme,s,m,k,objective,objective_low,objective_high,mean,p99,speedup",
        ));
    g().args([
        "plan",
        "--n",
        "16,32",
        "--ref-n",
        "16",
        "--dist",
        "exp:rate=1",
        "--load-model",
        "scaled",
        "--format",
        "csv",
    ])
    .assert()
    .success();
    // The largest --ref-n is a cluster of one trial's most draws, 2^24;
    // one more is refused.
    g().args([
        "plan",
        "--n",
        "10",
        "--scheme",
        "crc",
        "--ref-n",
        "16777216",
        "--max-load",
        "inf",
    ])
    .assert()
    .success();
    g().args(["plan", "--n", "10", "--scheme", "crc", "--ref-n", "16777217"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--ref-n 16777217 is out of range"));
    let cases: &[(&[&str], &str)] = &[
        (
            &["plan", "--n", "10", "--max-load", "0.5"],
            "--max-load 0.5 is out of range",
        ),
        (&["plan", "--n", "10", "--objective", "p42"], "unknown objective `p42`"),
        (
            &["plan", "--n", "10", "--objective", "deadline:-1"],
            "finite number > 0",
        ),
        (
            &["plan", "--n", "10,20", "--ref-n", "10", "--load-model", "additive"],
            "--ref-n rescales the work",
        ),
        (
            &["plan", "--n", "10,20", "--workers", "10:exp:rate=1"],
            "--workers fixes n=10",
        ),
        (
            &["plan", "--n", "10", "--analytic"],
            "plan chooses exact values itself: drop --analytic",
        ),
        (
            &["plan", "--n", "10", "--shard", "1/2"],
            "--shard 1/2 writes a partial result file: give --out FILE.json",
        ),
        (
            &["plan", "--n", "10", "--shard", "1/2", "--out", "x.csv"],
            "give --out a .json file (not x.csv)",
        ),
    ];
    for (args, expected) in cases {
        let out = g().args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// `--ref-n N0`: the law is the uncoded share at N0, so at n workers each
/// share is N0/n of it. Under `scaled` the uncoded mean at n = 16 with
/// N0 = 64 is 4·H₁₆ for unit exponentials; under `affine` the unit time
/// is scaled instead (C·(N0/n)·ℓ + X, so uncoded has mean 4C + H₁₆); the
/// load column is the reference share's, ℓ·N0/n; `--max-load` bounds that
/// same quantity.
#[test]
fn ref_n_rescales_the_work_per_worker() {
    let exp = || Workers::Iid(Dist::exp(1.0).unwrap());
    let at = |model, max_load: Option<f64>| {
        let mut req = request(
            16,
            exp(),
            model,
            vec![SchemeKind::Uncoded, SchemeKind::Crc],
            Objective::Mean,
        );
        req.ref_n = Some(64);
        req.max_load = max_load;
        plan(&req, &|s, o| {
            engine::simulate_full(&engine::TrialPlan::new(s), s, &Silent, o)
        })
        .unwrap()
    };
    let rows = at(LoadModel::Scaled, None);
    let uncoded = rows.iter().find(|r| r.scheme == SchemeKind::Uncoded).unwrap();
    assert!((uncoded.mean - 4.0 * harmonic(16)).abs() < 1e-9, "{}", uncoded.mean);
    assert_eq!(uncoded.load, 4.0);
    let crc3 = rows.iter().find(|r| r.scheme == SchemeKind::Crc && r.s == 3).unwrap();
    assert_eq!(crc3.load, 16.0);
    // crc s = 3 has mean 4·4·(H₁₆ − H₃), the 13th order statistic at load 4 (scaled by N0/n).
    assert!(
        (crc3.mean - 16.0 * (harmonic(16) - harmonic(3))).abs() < 1e-9,
        "{}",
        crc3.mean
    );
    let affine = at(LoadModel::Affine { unit_time: 0.5 }, None);
    let uncoded = affine.iter().find(|r| r.scheme == SchemeKind::Uncoded).unwrap();
    assert!(
        (uncoded.mean - (4.0 * 0.5 + harmonic(16))).abs() < 1e-9,
        "{}",
        uncoded.mean
    );
    // The bound is on ℓ·N0/n: at most 8 keeps uncoded (4) and crc s = 1 (8);
    // crc s = 0 is uncoded under another name, one row.
    let bounded = at(LoadModel::Scaled, Some(8.0));
    assert_eq!(bounded.len(), 2, "{bounded:?}");
    assert!(bounded.iter().all(|r| r.load <= 8.0));
}

/// Objectives: p50 < p90 < p99 for the same candidate, the p99 objective is
/// the p99 column, and a deadline's objective is P(T ≤ t): the exact law's
/// CDF, or the fraction of simulated trials (unit exponentials at n = 8,
/// uncoded: (1 − e^{−t})⁸). The objective names itself in the output.
#[test]
fn objectives_read_the_right_statistic() {
    let exp = || Workers::Iid(Dist::exp(1.0).unwrap());
    let run = |objective, exact| {
        let mut req = request(8, exp(), LoadModel::Fixed, vec![SchemeKind::Uncoded], objective);
        req.exact = exact;
        plan(&req, &|s, o| {
            engine::simulate_full(&engine::TrialPlan::new(s), s, &Silent, o)
        })
        .unwrap()[0]
            .clone()
    };
    for exact in [true, false] {
        let [p50, p90, p99] = ["p50", "p90", "p99"].map(|q| run(q.parse().unwrap(), exact));
        assert!(p50.objective < p90.objective && p90.objective < p99.objective);
        assert_eq!(p99.objective, p99.p99);
        let t: f64 = 2.5;
        let deadline = run(Objective::Deadline(t), exact);
        let truth = (1.0 - (-t).exp()).powi(8);
        let tolerance = if exact {
            1e-12
        } else {
            4.0 * (truth * (1.0 - truth) / 40_000.0).sqrt()
        };
        assert!(
            (deadline.objective - truth).abs() < tolerance,
            "{exact}: {}",
            deadline.objective
        );
    }
    assert!("deadline:0".parse::<Objective>().is_err());
    assert_eq!(Objective::Deadline(2.5).to_string(), "deadline:2.5");
    assert_eq!("p90".parse::<Objective>().unwrap().to_string(), "p90");
    Command::cargo_bin("gcsim")
        .unwrap()
        .args(["plan", "--n", "8", "--objective", "deadline:2.5", "--format", "table"])
        .assert()
        .success()
        .stdout(predicate::str::contains("objective=deadline:2.5"));
}

/// Ties: under `fixed` crc and ignore at the same s have the same law; the
/// scheme that decodes the exact gradient ranks first although its load is
/// higher, and among equal exact candidates the smaller load.
#[test]
fn ties_rank_the_exact_gradient_first() {
    let req = request(
        10,
        Workers::Iid(Dist::exp(1.0).unwrap()),
        LoadModel::Fixed,
        vec![SchemeKind::Ignore, SchemeKind::Crc],
        Objective::Mean,
    );
    let rows = plan(&req, &|s, o| {
        engine::simulate_full(&engine::TrialPlan::new(s), s, &Silent, o)
    })
    .unwrap();
    assert_eq!((rows[0].scheme, rows[0].s), (SchemeKind::Crc, 9));
    assert_eq!((rows[1].scheme, rows[1].s), (SchemeKind::Ignore, 9));
    assert_eq!(rows[0].objective, rows[1].objective);
}

/// The recommendation names what the best candidate is: `ignore` with s > 0
/// is flagged inexact, ignore at s = 0 (uncoded) is not.
#[test]
fn recommendation_flags_an_inexact_choice() {
    let req = request(
        10,
        Workers::Iid(Dist::exp(1.0).unwrap()),
        LoadModel::Fixed,
        vec![SchemeKind::Ignore],
        Objective::Mean,
    );
    let mut rows = plan(&req, &|s, o| {
        engine::simulate_full(&engine::TrialPlan::new(s), s, &Silent, o)
    })
    .unwrap();
    assert_eq!((rows[0].scheme, rows[0].s), (SchemeKind::Ignore, 9));
    let text = gcsim::plan::recommendation(&rows, &Objective::Mean).unwrap();
    assert!(
        text.starts_with("recommend: n=10 ignore s=9 (inexact: drops s/n of the data): mean "),
        "{text}"
    );
    rows[0].s = 0;
    let text = gcsim::plan::recommendation(&rows, &Objective::Mean).unwrap();
    assert!(!text.contains("inexact"), "{text}");
}

/// The table: numbers to four significant digits, a simulated row's
/// interval in brackets, and a line counting the rows beyond --top.
#[test]
fn plan_table_shows_values_intervals_and_the_rest() {
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .args([
            "plan",
            "--n",
            "12",
            "--scheme",
            "crc",
            "--simulate",
            "--max-load",
            "inf",
        ])
        .args(["--trials", "20000", "--top", "3", "--format", "table"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric))
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    for row in rows {
        let cells: Vec<&str> = row.split_whitespace().collect();
        // rank n scheme s m k objective [lo, hi] mean p99 speedup load message method
        assert_eq!(cells[2], "crc");
        assert!(cells[6].parse::<f64>().unwrap() > 0.0, "{row}");
        assert!(cells[7].starts_with('[') && cells[8].ends_with(']'), "{row}");
        assert_eq!(cells[14], "simulated");
    }
    assert!(
        text.contains("# 9 more rows (--top, or --format csv for all)"),
        "{text}"
    );
}

/// With --top at least the number of candidates, no "more rows" line.
#[test]
fn plan_table_with_every_row_has_no_more_rows_line() {
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .args([
            "plan",
            "--n",
            "12",
            "--scheme",
            "crc",
            "--top",
            "12",
            "--max-load",
            "inf",
            "--format",
            "table",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with(char::is_numeric))
            .count(),
        12
    );
    assert!(!text.contains("more rows"), "{text}");
}

/// The asynchronous strategies are searched at K = n, ⌈n/2⌉, …, 1 and a
/// winner is called stale; a partial code is searched at each L of
/// `--parts`, shown in the `parts` column and named with its L.
#[test]
fn plan_searches_asynchronous_and_partial_schemes() {
    let out = assert_cmd::Command::cargo_bin("gcsim")
        .unwrap()
        .args([
            "plan",
            "--n",
            "10",
            "--scheme",
            "k-async,k-batch-async",
            "--trials",
            "2000",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut ks: Vec<(String, usize)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (c[2].to_string(), c[5].parse().unwrap())
        })
        .collect();
    ks.sort();
    let each = [1, 2, 3, 5, 10];
    let want: Vec<(String, usize)> = ["k-async", "k-batch-async"]
        .iter()
        .flat_map(|s| each.iter().map(move |&k| (s.to_string(), k)))
        .collect();
    assert_eq!(ks, want, "{csv}");
    let table = assert_cmd::Command::cargo_bin("gcsim")
        .unwrap()
        .args([
            "plan", "--n", "10", "--scheme", "k-async", "--trials", "2000", "--format", "table",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.contains("recommend: n=10 k-async K=1 (inexact and stale: asynchronous updates of K gradients"),
        "{text}"
    );
    let partial = assert_cmd::Command::cargo_bin("gcsim")
        .unwrap()
        .args([
            "plan",
            "--n",
            "12",
            "--scheme",
            "uncoded,partial-crc",
            "--parts",
            "6,12",
            "--load-model",
            "scaled",
            "--dist",
            "exp:rate=1,p_slow=0.2,slowdown=1.5",
            "--max-load",
            "2",
            "--trials",
            "20000",
            "--format",
            "table",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(partial.stdout).unwrap();
    let header = text.lines().find(|l| l.starts_with("rank")).unwrap();
    assert!(header.trim_end().ends_with("parts"), "{text}");
    // L = 6: s = 1..3 within load 2 (6/(6-s) <= 2); L = 12: s = 1..6; s = 0
    // is uncoded under another name, shown once as uncoded.
    let partial_rows = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .filter(|l| l.split_whitespace().nth(2) == Some("partial-crc"))
        .count();
    assert_eq!(partial_rows, 3 + 6, "{text}");
    let line = text.lines().find(|l| l.starts_with("recommend:")).unwrap();
    assert!(line.contains("partial-crc s=") && line.contains(" L="), "{line}");
}

/// The note that --max-load took its default appears only when the flag is
/// not given, even when it is given the default's value.
#[test]
fn the_default_max_load_note_only_when_the_flag_is_absent() {
    let note = "max-load=4 by default";
    let run = |extra: &[&str]| {
        let out = Command::cargo_bin("gcsim")
            .unwrap()
            .args(["plan", "--n", "8", "--trials", "1000", "--format", "table"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(run(&[]).contains(note));
    assert!(!run(&["--max-load", "4"]).contains(note));
    assert!(!run(&["--max-load", "6"]).contains(note));
}
