//! Group slowdowns: the engine's correlated draws against the exact mixture
//! over the slow groups (`gcsim::analytic::groups`).

use gcsim::dist::Dist;
use gcsim::engine::{self, Silent};
use gcsim::load::LoadModel;
use gcsim::scheme::{Scheme, SchemeKind};
use gcsim::study::Study;

/// |z| beyond which a check fails: some 80 checks, each a false alarm with
/// probability 6·10⁻⁵.
const Z: f64 = 4.0;

fn scheme(kind: SchemeKind, n: usize, s: usize) -> Scheme {
    Scheme::with_tolerance(kind, n, s).unwrap()
}

/// n = 12 in groups of 4 (three whole) and of 5 (two whole and a partial
/// group of 2), each slow with probability 0.2 and then 3 times slower,
/// with and without the workers' own stragglers, under `fixed` and
/// `scaled`: the simulated mean within 4 standard errors of the exact one,
/// and the exact CDF at the simulated p50 and p99 within 4 standard errors
/// of the level.
#[test]
fn simulated_group_slowdowns_match_the_exact_mixture() {
    let n = 12;
    let trials = 200_000;
    let mut checked = 0;
    for (i, size) in [4, 5].into_iter().enumerate() {
        for own in [None, Some((0.1, 5.0))] {
            let base = Dist::exp(1.0).unwrap();
            let base = own.map_or(base, |(p, f)| base.with_stragglers(p, f).unwrap());
            let dist = base.with_groups(size, 0.2, 3.0).unwrap();
            for (j, model) in [LoadModel::Fixed, LoadModel::Scaled].into_iter().enumerate() {
                let mut schemes = vec![
                    scheme(SchemeKind::Uncoded, n, 0),
                    scheme(SchemeKind::Crc, n, 3),
                    scheme(SchemeKind::Ignore, n, 2),
                ];
                if size == 4 {
                    // frc's pairs lie within slowdown groups of 4.
                    schemes.push(scheme(SchemeKind::Frc, n, 1));
                }
                let seed = 10 + 4 * i as u64 + 2 * j as u64 + u64::from(own.is_some());
                let study = Study::new(n, dist, model, schemes.clone(), trials, seed).unwrap();
                let out = engine::simulate(&study, &Silent);
                for (s, summary) in schemes.iter().zip(&out.configs) {
                    let what = format!("{dist} {model} {s}");
                    let law = study.exact_law(s).unwrap_or_else(|| panic!("{what}: no exact law"));
                    let se = summary.mean.std_err.unwrap();
                    let z = (summary.mean.mean - law.mean()) / se;
                    assert!(
                        z.abs() < Z,
                        "{what}: mean {} ± {se} vs exact {}: z {z:.2}",
                        summary.mean.mean,
                        law.mean()
                    );
                    for (q, x) in [(0.5, summary.quantiles[0]), (0.99, summary.quantiles[2])] {
                        let z = (law.cdf(x) - q) / (q * (1.0 - q) / trials as f64).sqrt();
                        assert!(
                            z.abs() < Z,
                            "{what}: p{} {x} vs exact {}: z {z:.2}",
                            q * 100.0,
                            law.quantile(q)
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 2 * 2 * (4 + 3));
}

/// The exact law reaches the rows: `analytic_mean` and `analytic_p99` of a
/// sweep with groups, which without groups would be a straggler mixture's.
#[test]
fn sweep_rows_carry_the_group_law() {
    let n = 12;
    let dist = Dist::exp(1.0).unwrap().with_groups(4, 0.2, 3.0).unwrap();
    let crc = scheme(SchemeKind::Crc, n, 3);
    let study = Study::new(n, dist, LoadModel::Fixed, vec![crc], 1000, 1).unwrap();
    let law = study.exact_law(&crc).expect("crc on groups has an exact law");
    assert_eq!(study.exact_mean(&crc), Some(law.mean()));
    // Slow groups of 4 delay crc s=3 (4 late workers suffice) more often
    // than the same share of independent stragglers does.
    let independent = Dist::exp(1.0).unwrap().with_stragglers(0.2, 3.0).unwrap();
    let apart = Study::new(n, independent, LoadModel::Fixed, vec![crc], 1000, 1).unwrap();
    let apart = apart.exact_law(&crc).unwrap();
    assert!(law.quantile(0.99) > apart.quantile(0.99));
    // Several iterations' total has no exact law, but its mean is T times one's.
    let study = study.with_iterations(5).unwrap();
    assert!(study.exact_law(&crc).is_none());
    let mean = study.exact_mean(&crc).unwrap();
    assert!((mean - 5.0 * law.mean()).abs() < 1e-12 * mean);
}
