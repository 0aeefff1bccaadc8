//! A law's draws into a buffer in one loop: the law's match taken once per
//! buffer and the generator held in registers, the draws themselves those
//! of [`Dist::sample`] and [`Dist::sample_in_state`], in the same order.

use rand::Rng;
use rand_distr::{Distribution, Exp1, StandardNormal};

use crate::dist::{Base, Dist};

/// Fills `out` with draws of `law`, as many calls of [`Dist::sample`].
pub(super) fn fill<R: Rng + Clone>(law: &Dist, rng: &mut R, out: &mut [f64]) {
    if law.stragglers().is_some() || law.groups().is_some() {
        // Each draw has its own state uniforms after its base draw.
        out.iter_mut().for_each(|d| *d = law.sample(rng));
        return;
    }
    fill_in_state(law, rng, out, &[]);
}

/// Fills `out` with draws of `law` in the states `slow` (draw i's is
/// `slow[i mod slow.len()]`, the workers' of each unit in turn; none
/// without a straggler mixture), as many calls of
/// [`Dist::sample_in_state`].
pub(super) fn fill_in_state<R: Rng + Clone>(law: &Dist, rng: &mut R, out: &mut [f64], slow: &[bool]) {
    let slowdown = law.stragglers().map(|(_, s)| s);
    let mut local = rng.clone();
    let r = &mut local;
    match law.base() {
        // x / 1 is x: no division per draw at the unit rate.
        Base::Exp { rate: 1.0 } => each(r, out, slow, slowdown, |r| {
            <Exp1 as Distribution<f64>>::sample(&Exp1, r)
        }),
        Base::Exp { rate } => each(r, out, slow, slowdown, |r| {
            <Exp1 as Distribution<f64>>::sample(&Exp1, r) / rate
        }),
        Base::LogNormal { mu, sigma } => each(r, out, slow, slowdown, |r| {
            let z: f64 = StandardNormal.sample(r);
            (mu + sigma * z).exp()
        }),
        _ => match slowdown {
            Some(_) => out
                .iter_mut()
                .zip(slow.iter().cycle())
                .for_each(|(d, &s)| *d = law.sample_in_state(r, s)),
            None => out.iter_mut().for_each(|d| *d = law.sample_in_state(r, false)),
        },
    }
    *rng = local;
}

/// `draw` into each of `out`, times `slowdown` where `slow` says.
#[inline(always)]
fn each<R: Rng>(rng: &mut R, out: &mut [f64], slow: &[bool], slowdown: Option<f64>, draw: impl Fn(&mut R) -> f64) {
    match slowdown {
        Some(k) => {
            assert!(out.len().is_multiple_of(slow.len()), "a state per worker");
            for unit in out.chunks_exact_mut(slow.len()) {
                for (d, &s) in unit.iter_mut().zip(slow) {
                    let x = draw(rng);
                    *d = if s { x * k } else { x };
                }
            }
        }
        None => out.iter_mut().for_each(|d| *d = draw(rng)),
    }
}
