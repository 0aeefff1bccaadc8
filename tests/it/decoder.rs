//! `--decoder rank`: decodability by the real code's rank condition.

use assert_cmd::Command;
use predicates::prelude::*;

use gcsim::dist::Dist;
use gcsim::engine::{self, RulePath, Sampling, Silent, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::study::{Decoder, Study};

fn scheme(kind: SchemeKind, n: usize, s: usize) -> Scheme {
    Scheme::with_tolerance(kind, n, s).unwrap()
}

/// On the same draws, trial by trial: frc's code decodes exactly when its
/// group rule holds, and Tandon et al.'s random cyclic code (in general
/// position) exactly when n − s workers are in.
#[test]
fn rank_decoder_agrees_with_the_rules_trial_by_trial() {
    let n = 12;
    let schemes = vec![
        scheme(SchemeKind::Frc, n, 2),
        scheme(SchemeKind::Frc, n, 3),
        scheme(SchemeKind::Crc, n, 2),
        scheme(SchemeKind::Crc, n, 4),
    ];
    let base = Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Scaled, schemes, 400, 6).unwrap();
    let rank = base.clone().with_decoder(Decoder::Rank).unwrap();
    let by_rule = TrialPlan::with(&base, RulePath::Fast, Sampling::Draws);
    let by_rank = TrialPlan::new(&rank);
    assert_eq!(by_rank.sampling(), Sampling::Draws);
    let (mut s1, mut s2) = (by_rule.scratch(), by_rank.scratch());
    let (mut o1, mut o2) = (vec![0.0; by_rule.slots()], vec![0.0; by_rank.slots()]);
    for t in 0..400 {
        by_rule.run(6, t, &mut s1, &mut o1);
        by_rank.run(6, t, &mut s2, &mut o2);
        assert_eq!(o1, o2, "trial {t}");
    }
}

#[test]
fn rows_report_the_approximation_error() {
    let n = 10;
    let schemes = vec![scheme(SchemeKind::Ignore, n, 3), scheme(SchemeKind::Crc, n, 3)];
    let study = Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes, 2000, 1).unwrap();
    // The rank decoder does not act on ignore, which is refused rather than
    // labelled with it.
    assert!(matches!(
        study.clone().with_decoder(Decoder::Rank),
        Err(gcsim::study::StudyError::RankDoesNotAct(SchemeKind::Ignore))
    ));
    let rows = gcsim::report::rows(&study, &engine::simulate(&study, &Silent));
    // ‖uᵀB_F − 1‖²/n with B = I: the 3 of 10 partitions lost.
    assert_eq!(rows[0].approx_error, Some(0.3));
    assert_eq!(rows[1].approx_error, Some(0.0));
    let crc = Study::new(
        n,
        Dist::exp(1.0).unwrap(),
        LoadModel::Fixed,
        vec![scheme(SchemeKind::Crc, n, 3)],
        2000,
        1,
    )
    .unwrap()
    .with_decoder(Decoder::Rank)
    .unwrap();
    let rows = gcsim::report::rows(&crc, &engine::simulate(&crc, &Silent));
    assert_eq!(rows[0].decoder, "rank");
    // The code-decoded row can be undecodable; crc's code never fails here.
    assert_eq!(rows[0].undecodable, Some(0.0));
}

#[test]
fn cli_rank_decoder() {
    let g = || Command::cargo_bin("gcsim").unwrap();
    g().args([
        "sweep",
        "--n",
        "8",
        "--s",
        "0..3",
        "--scheme",
        "crc",
        "--trials",
        "2000",
        "--decoder",
        "rank",
        "--format",
        "csv",
    ])
    .assert()
    .success()
    .stdout(predicate::str::contains(",rank,0.0,0.0,1.0,,,,,1,,,"));
    g().args([
        "sweep",
        "--n",
        "8",
        "--s",
        "0..3",
        "--scheme",
        "crc,ignore",
        "--decoder",
        "rank",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains("--decoder rank does not act on ignore"));
    g().args([
        "run",
        "--n",
        "3000",
        "--scheme",
        "crc",
        "--s",
        "1",
        "--trials",
        "10",
        "--decoder",
        "rank",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains("--decoder rank:"));
}

/// The rank decoder decodes with the real code, not the rule: Tandon-style
/// Gaussian mds at n = 50, k = 45 decodes exactly when 45 workers are in
/// (trial by trial the rule's time), while the Vandermonde code of the same
/// scheme fails numerically in float64 and never decodes, so those trials
/// take forever. A decoder that fell back to the rule would give the
/// Vandermonde code finite times.
#[test]
fn rank_decoder_decodes_with_the_real_code() {
    use gcsim::codes::Generator;
    let (n, trials) = (50, 12u64);
    let mds = Scheme::new(
        SchemeKind::Mds,
        n,
        Params {
            k: Some(45),
            ..Params::default()
        },
    )
    .unwrap();
    let base = Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, vec![mds], trials, 3).unwrap();
    let times = |plan: TrialPlan| {
        let mut scratch = plan.scratch();
        let mut out = vec![0.0; plan.slots()];
        (0..trials)
            .map(|t| {
                plan.run(3, t, &mut scratch, &mut out);
                out[0]
            })
            .collect::<Vec<f64>>()
    };
    let by_rule = times(TrialPlan::with(&base, RulePath::Fast, Sampling::Draws));
    let rank = base.clone().with_decoder(Decoder::Rank).unwrap();
    assert_eq!(
        times(TrialPlan::new(&rank)),
        by_rule,
        "the Gaussian code decodes from any 45"
    );
    let vandermonde = rank.with_generator(Some(Generator::Vandermonde)).unwrap();
    let failing = times(TrialPlan::new(&vandermonde));
    assert!(by_rule.iter().all(|t| t.is_finite()));
    assert!(failing.iter().all(|t| t.is_infinite()), "{failing:?}");
}

/// A rank-decoded row whose mean is infinite for its heavy tail, not for
/// undecodable trials, is warned about as a heavy tail (the code decodes in
/// every trial); the header names the rank decoder, and a threshold run's
/// header does not name its decoder.
#[test]
fn rank_decoding_of_a_heavy_tail_is_warned_as_a_heavy_tail() {
    let run = |decoder: &str| {
        let out = Command::cargo_bin("gcsim")
            .unwrap()
            .args(["run", "--n", "10", "--scheme", "mds", "--k", "9", "--trials", "300"])
            .args([
                "--dist",
                "pareto:scale=1,shape=0.5",
                "--decoder",
                decoder,
                "--format",
                "table",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (table, stderr) = run("rank");
    let header = table.lines().next().unwrap();
    assert!(header.contains("  decoder=rank"), "{header}");
    assert!(
        stderr.contains("mds s=1 k=9: the exact mean is infinite (heavy tail)"),
        "{stderr}"
    );
    assert!(!stderr.contains("never decoded"), "{stderr}");
    let (table, _) = run("threshold");
    let header = table.lines().next().unwrap();
    assert!(
        header.starts_with("# gcsim run n=10") && !header.contains("decoder="),
        "{header}"
    );
}

/// The identities path (`arrivals`, which the approximation error uses)
/// sums a worker's units as the draw path does, fractional loads included:
/// under `additive` at loads 10/3 and 2.5, each trial's k-th arrival is the
/// iteration time that `run` gives.
#[test]
fn arrivals_sum_additive_units_as_the_draw_path_does() {
    let n = 10;
    let mds = |k| {
        Scheme::new(
            SchemeKind::Mds,
            n,
            Params {
                k: Some(k),
                ..Params::default()
            },
        )
        .unwrap()
    };
    let schemes = vec![mds(3), mds(4), scheme(SchemeKind::Crc, n, 2)];
    let study = Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Additive, schemes.clone(), 200, 3).unwrap();
    let plan = TrialPlan::with(&study, RulePath::Fast, Sampling::Draws);
    let (mut scratch, mut out) = (plan.scratch(), vec![0.0; plan.slots()]);
    for t in 0..200 {
        plan.run(3, t, &mut scratch, &mut out);
        for (slot, s) in schemes.iter().enumerate() {
            let mut arrivals = plan.arrivals(slot, 3, t, &mut scratch).to_vec();
            arrivals.sort_by(f64::total_cmp);
            assert_eq!(arrivals[s.k() - 1], out[slot], "{s}, trial {t}");
        }
    }
}

/// Trials that decode by rank run in parallel within a chunk
/// (`Runner::run_chunk`): a run over two chunks gives the same bytes on one
/// and on two threads.
#[test]
fn rank_runs_are_the_same_bytes_on_any_thread_count() {
    let run = |threads: &str| {
        Command::cargo_bin("gcsim")
            .unwrap()
            .args([
                "sweep",
                "--n",
                "6",
                "--s",
                "0..2",
                "--scheme",
                "crc",
                "--decoder",
                "rank",
            ])
            .args([
                "--trials",
                "9000",
                "--seed",
                "3",
                "--format",
                "csv",
                "--threads",
                threads,
            ])
            .output()
            .unwrap()
    };
    let (one, two) = (run("1"), run("2"));
    assert!(one.status.success(), "{}", String::from_utf8_lossy(&one.stderr));
    assert_eq!(
        String::from_utf8(one.stdout).unwrap(),
        String::from_utf8(two.stdout).unwrap()
    );
}
