//! A law's draws into a buffer in one loop: the law's match taken once per
//! buffer and the generator held in registers, the draws themselves those
//! of [`Dist::sample`] and [`Dist::sample_in_state`], in the same order.

use rand_distr::Distribution;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::dist::{Base, Dist};
use crate::rng::{exp_affine, exponentials, normals};

/// Fills `out` with draws of `law`, as many calls of [`Dist::sample`].
pub(super) fn fill(law: &Dist, rng: &mut Xoshiro256PlusPlus, out: &mut [f64]) {
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
pub(super) fn fill_in_state(law: &Dist, rng: &mut Xoshiro256PlusPlus, out: &mut [f64], slow: &[bool]) {
    let slowdown = law.stragglers().map(|(_, s)| s);
    // The draws in loops of their own (the stream's in one that calls
    // nothing, or nothing but the rare case), then the slow workers' scaled.
    match law.base() {
        Base::Exp { rate } => {
            exponentials(rng, out, rate);
            return slow_scaled(out, slow, slowdown);
        }
        Base::LogNormal { mu, sigma } => {
            normals(rng, out);
            exp_affine(out, mu, sigma);
            return slow_scaled(out, slow, slowdown);
        }
        _ => {}
    }
    let mut local = rng.clone();
    let r = &mut local;
    match slowdown {
        Some(_) => out
            .iter_mut()
            .zip(slow.iter().cycle())
            .for_each(|(d, &s)| *d = law.sample_in_state(r, s)),
        None => out.iter_mut().for_each(|d| *d = law.sample_in_state(r, false)),
    }
    *rng = local;
}

/// `out`'s draws (unit-major, a state per worker) times `slowdown` where
/// `slow` says: worker by worker, only a slow one's draws touched.
fn slow_scaled(out: &mut [f64], slow: &[bool], slowdown: Option<f64>) {
    let Some(k) = slowdown else {
        return;
    };
    let n = slow.len();
    assert!(out.len().is_multiple_of(n), "a state per worker");
    for (w, _) in slow.iter().enumerate().filter(|(_, s)| **s) {
        out.iter_mut().skip(w).step_by(n).for_each(|d| *d *= k);
    }
}
