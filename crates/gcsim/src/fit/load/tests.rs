//! The reader's rows and errors, and the permutation and bootstrap machinery
//! on samples whose answer is known. The model choice on traces drawn from
//! each model is tested end to end in tests/it/fit_load.rs.

use rand::SeedableRng;
use rand_distr::Distribution;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::resample::Steps;
use super::*;

#[test]
fn reads_loads_and_steps() {
    let text = "\u{feff}worker,step,load,time,host\n\
                0,1,1,0.5,a\n1,1,1,0.7,a\n0,2,1,0.6,a\n\
                0,1,2,1.5,a\n1,1,2.0,1.1,b\n";
    let t = LoadTrace::parse("t.csv", text).unwrap();
    assert_eq!((t.workers(), t.steps(), t.times()), (2, 3, 5));
    let [one, two] = t.loads() else { panic!() };
    assert_eq!((one.load, two.load), (1.0, 2.0));
    // Steps ascending, workers ascending within a step; step 1 recurs at load 2.
    assert_eq!(one.times, [0.5, 0.7, 0.6]);
    assert_eq!(one.step_ends, [2, 3]);
    assert_eq!(two.times, [1.5, 1.1]);
    assert_eq!(two.step_ends, [2]);
}

#[test]
fn errors_name_the_file_and_line() {
    let head = "step,worker,time,load\n";
    let cases = [
        (String::new(), "t.csv: the trace is empty"),
        (head.to_string(), "t.csv: the trace is empty"),
        (
            "step,worker,load\n1,0,1\n".into(),
            "t.csv:1: the header `step,worker,load` lacks a column",
        ),
        (format!("{head}1,0,0.5,fast\n"), "t.csv:2: load `fast` is not a number"),
        (
            format!("{head}1,0,0.5,1\n1,1,0.5,0\n"),
            "t.csv:3: load `0` is out of range; accepted: a finite number > 0",
        ),
        (format!("{head}1,0,0.5,-2\n"), "t.csv:2: load `-2` is out of range"),
        (format!("{head}1,0,0.5,inf\n"), "t.csv:2: load `inf` is out of range"),
        (format!("{head}1,0,slow,1\n"), "t.csv:2: time `slow` is not a number"),
        (format!("{head}1,0,0,1\n"), "t.csv:2: time `0` is out of range"),
        (
            format!("{head}1,x,0.5,1\n"),
            "t.csv:2: worker `x` is not a whole number",
        ),
        (format!("{head}1,0,0.5\n"), "t.csv:2: 3 fields, the header has 4"),
        (
            format!("{head}1,0,0.5,2\n1,0,0.7,2\n"),
            "t.csv:3: step 1, worker 0 appears twice at load 2",
        ),
        (
            format!("{head}1,0,0.5,2\n1,1,0.7,2.0\n"),
            "t.csv: every row has load 2; fitting the load model needs times at 2 or more loads",
        ),
    ];
    for (text, expected) in cases {
        let e = LoadTrace::parse("t.csv", &text).unwrap_err().to_string();
        assert!(e.starts_with(expected), "{text:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn a_load_with_too_few_or_equal_times_is_an_error() {
    let head = "step,worker,time,load\n";
    let t = LoadTrace::parse("t.csv", &format!("{head}1,0,1,1\n1,1,2,1\n1,2,3,1\n1,0,1,2\n1,1,2,2\n")).unwrap();
    let e = fit_loads(&t, 0).unwrap_err().to_string();
    assert_eq!(e, "t.csv: load 2: 2 times; every load needs at least 3");
    let t = LoadTrace::parse(
        "t.csv",
        &format!("{head}1,0,1,1\n1,1,2,1\n1,2,3,1\n1,0,4,2\n1,1,4,2\n1,2,4,2\n"),
    )
    .unwrap();
    let e = fit_loads(&t, 0).unwrap_err().to_string();
    assert_eq!(
        e,
        "t.csv: load 2: every time equals 4; a load needs at least 2 distinct times"
    );
}

fn steps_of(samples: &[Vec<f64>], per_step: usize, loads: &[f64]) -> Steps {
    Steps {
        steps: samples
            .iter()
            .map(|s| s.chunks(per_step).map(<[f64]>::to_vec).collect())
            .collect(),
        loads: loads.to_vec(),
    }
}

fn draws(d: &Dist, n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n).map(|_| d.sample(&mut rng)).collect()
}

/// Under the hypothesis (one law at every load) the permutation p-value is
/// uniform: over 40 data sets, its mean is within 4 standard errors of 1/2
/// (sd of a uniform is 1/√12) and it falls below 0.05 in at most 7 (the
/// binomial(40, 0.05) exceeds 7 with probability 2·10⁻⁴). A shift of 0.3
/// standard deviations between loads gives p at its floor.
#[test]
fn permutation_p_is_uniform_under_the_hypothesis_and_small_off_it() {
    let law = Dist::exp(1.0).unwrap();
    let loads = [1.0, 2.0, 4.0];
    let mut ps = Vec::new();
    let mut merge = Merge::default();
    for seed in 0..40 {
        let samples: Vec<Vec<f64>> = (0..3).map(|j| draws(&law, 200, 100 * seed + j)).collect();
        let steps = steps_of(&samples, 4, &loads);
        let a2 = merge.shifted(&steps.sorted(), &loads, 0.0);
        ps.push(steps.permutation_p(a2, seed, |s, m| m.shifted(s, &loads, 0.0)));
    }
    let mean = ps.iter().sum::<f64>() / ps.len() as f64;
    let se = (1.0 / 12.0 / ps.len() as f64).sqrt();
    assert!((mean - 0.5).abs() < 4.0 * se, "mean p {mean}: {ps:?}");
    assert!(ps.iter().filter(|&&p| p < 0.05).count() <= 7, "{ps:?}");

    let samples: Vec<Vec<f64>> = (0..3)
        .map(|j| draws(&law, 200, 7 + j).iter().map(|x| x + 0.3 * j as f64).collect())
        .collect();
    let steps = steps_of(&samples, 4, &loads);
    let a2 = merge.shifted(&steps.sorted(), &loads, 0.0);
    let p = steps.permutation_p(a2, 1, |s, m| m.shifted(s, &loads, 0.0));
    assert_eq!(p, 1.0 / (PERMUTATIONS + 1) as f64);
}

/// The bootstrap standard error of a mean of 400 times in 100 steps of 4 is
/// that of a mean of the 100 step means, √(Σ(ȳₛ − ȳ)²)/100 for the
/// resampling law; 200 resamples estimate a standard deviation within 5%
/// (1/√(2·200)), so within 20% at 4 of them.
#[test]
fn bootstrap_se_of_a_mean() {
    let samples = vec![draws(&Dist::exp(1.0).unwrap(), 400, 3)];
    let steps = steps_of(&samples, 4, &[1.0]);
    let se = steps.bootstrap_se(5, |s, _| s[0].iter().sum::<f64>() / s[0].len() as f64);
    let means: Vec<f64> = samples[0].chunks(4).map(|c| c.iter().sum::<f64>() / 4.0).collect();
    let m = means.iter().sum::<f64>() / 100.0;
    let want = means.iter().map(|x| (x - m).powi(2)).sum::<f64>().sqrt() / 100.0;
    assert!((se / want - 1.0).abs() < 0.2, "{se} vs {want}");
    // Resampling single times instead of steps would give the same here
    // (independent times), so also check a step-correlated case: each step
    // four copies of one draw, whose mean's error is that of 100 draws.
    let copies: Vec<f64> = samples[0][..100].iter().flat_map(|&x| [x; 4]).collect();
    let steps = steps_of(std::slice::from_ref(&copies), 4, &[1.0]);
    let se = steps.bootstrap_se(5, |s, _| s[0].iter().sum::<f64>() / s[0].len() as f64);
    let m = copies.iter().sum::<f64>() / 400.0;
    let want = samples[0][..100].iter().map(|x| (x - m).powi(2)).sum::<f64>().sqrt() / 100.0;
    assert!((se / want - 1.0).abs() < 0.2, "{se} vs {want}");
}
