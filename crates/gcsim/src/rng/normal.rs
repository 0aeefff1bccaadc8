//! Standard normals into a buffer: rand_distr's `StandardNormal`, bit for
//! bit, with its common case in a loop of its own (as
//! [`super::exponentials`] splits the exponential ziggurat).
//!
//! StandardNormal is rand_distr's symmetric ziggurat: one 64-bit word
//! gives a box index (its low 8 bits) and a uniform u ∈ [−1, 1) (its high
//! 52 bits), and x = u·X\[i\] is the draw when |x| lies under X\[i + 1\],
//! about 98.5% of the time. That common case runs in a function that is
//! never inlined and calls nothing, so that the stream's four words stay
//! in registers; a word outside its box stops it, and its rare case (the
//! tail beyond R from the base box, the wedge's test against the density,
//! else a fresh draw) runs out of line before the loop resumes.
//!
//! What it buys: a few per cent of the CPU time of `bench/hybrid.sh`'s
//! log-normal path, whose ranks draw their normals here, over
//! `StandardNormal` inlined in the caller's loop (same output bytes).

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Open01, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::norm_tables::{ZIG_NORM_F, ZIG_NORM_R, ZIG_NORM_X};

/// `out[i] ← Zᵢ` for standard normals Z₀, Z₁, … drawn from `rng` in turn:
/// bit for bit the values (and the stream's state after them) of
/// `StandardNormal.sample` in a loop.
pub fn normals(rng: &mut Xoshiro256PlusPlus, out: &mut [f64]) {
    let mut at = 0;
    loop {
        let (i, word) = normal_run(rng, out, at);
        let Some(slot) = out.get_mut(i) else {
            return;
        };
        *slot = normal_rare(rng, word);
        at = i + 1;
    }
}

/// The ziggurat's common case for `out[at..]`, up to a word outside its
/// box: returns its index and the word, or the length and 0.
#[inline(never)]
fn normal_run(stream: &mut Xoshiro256PlusPlus, out: &mut [f64], at: usize) -> (usize, u64) {
    let n = out.len();
    let mut local = stream.clone();
    let mut stop = (n, 0);
    for (i, slot) in out.iter_mut().enumerate().skip(at) {
        let word = local.next_u64();
        let (b, _, x) = normal_box(word);
        if x.abs() < ZIG_NORM_X[b + 1] {
            *slot = x;
        } else {
            stop = (i, word);
            break;
        }
    }
    *stream = local;
    stop
}

/// A word's box index, its uniform u ∈ [−1, 1) (from [2, 4) less 3) and
/// its value u·X[box], as rand_distr's ziggurat forms them.
#[inline(always)]
fn normal_box(word: u64) -> (usize, f64, f64) {
    let b = word as usize & 0xff;
    let u = f64::from_bits((word >> 12) | 0x4000_0000_0000_0000) - 3.0;
    (b, u, u * ZIG_NORM_X[b])
}

/// The rest of rand_distr's ziggurat for a word outside its box.
#[cold]
#[inline(never)]
fn normal_rare(stream: &mut Xoshiro256PlusPlus, word: u64) -> f64 {
    let (b, u, x) = normal_box(word);
    if b == 0 {
        // The tail beyond R, on the side of u's sign.
        let (mut t, mut y) = (1.0f64, 0.0f64);
        while -2.0 * y < t * t {
            let (a, c): (f64, f64) = (stream.sample(Open01), stream.sample(Open01));
            t = a.ln() / ZIG_NORM_R;
            y = c.ln();
        }
        return if u < 0.0 { t - ZIG_NORM_R } else { ZIG_NORM_R - t };
    }
    let f = &ZIG_NORM_F;
    if f[b + 1] + (f[b] - f[b + 1]) * stream.random::<f64>() < (-x * x / 2.0).exp() {
        return x;
    }
    StandardNormal.sample(stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::trial_rng;

    /// The split ziggurat draws rand_distr's StandardNormal, bit for bit,
    /// and leaves the stream where it leaves it: some 2.2·10⁶ draws, of
    /// which about 1.5% take the rare case and 2.6·10⁻⁴ (some 550) the
    /// tail beyond R.
    #[test]
    fn normals_are_standard_normals() {
        let (mut out, mut tails) = (vec![0.0; 90], 0);
        for t in 0..50_000u64 {
            let len = (t % 90) as usize;
            let mut a = trial_rng(13, t);
            let mut b = a.clone();
            normals(&mut a, &mut out[..len]);
            for (i, &v) in out[..len].iter().enumerate() {
                let z: f64 = StandardNormal.sample(&mut b);
                assert_eq!(v.to_bits(), z.to_bits(), "trial {t}, draw {i}");
                tails += usize::from(z.abs() > ZIG_NORM_R);
            }
            assert_eq!(a.next_u64(), b.next_u64(), "the stream after trial {t}");
        }
        assert!(tails > 350, "{tails} draws beyond R");
    }
}
