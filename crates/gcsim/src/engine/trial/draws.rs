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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::trial_rng;
    use rand::Rng;

    /// A buffer of log-normal draws (split ziggurat, then e^(μ + σz) four
    /// at a time) is as many calls of `sample_in_state`, bit for bit, with
    /// and without slow workers, and leaves the stream where they leave it.
    #[test]
    fn lognormal_buffers_are_draws_in_state() {
        let plain = Dist::lognormal(0.3, 0.5).unwrap();
        let mixture = Dist::lognormal(-1.0, 1.5).unwrap().with_stragglers(0.2, 8.0).unwrap();
        let slow = [false, true, false, false, true];
        for (law, states) in [(plain, &[][..]), (mixture, &slow[..])] {
            for t in 0..2_000u64 {
                let len = (t % 13) as usize * slow.len();
                let mut out = vec![0.0; len];
                let (mut a, mut b) = (trial_rng(17, t), trial_rng(17, t));
                fill_in_state(&law, &mut a, &mut out, states);
                for (i, &v) in out.iter().enumerate() {
                    let state = states.get(i % slow.len()).copied().unwrap_or(false);
                    let w = law.sample_in_state(&mut b, state);
                    assert_eq!(v.to_bits(), w.to_bits(), "trial {t}, draw {i}");
                }
                assert_eq!(a.next_u64(), b.next_u64(), "the stream after trial {t}");
            }
        }
    }
}
