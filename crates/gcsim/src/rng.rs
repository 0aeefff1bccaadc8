//! Per-trial random streams.
//!
//! Trial t of a run with seed `seed` draws from its own Xoshiro256++ stream
//! (Blackman & Vigna 2021), seeded with `mix(mix(seed) ^ t)` where `mix` is the
//! SplitMix64 finaliser, a bijection: distinct trials of one seed never share
//! a stream. A result is then a function of (configuration, seed, trials)
//! alone: not of the thread count, the chunk size or which shard ran it.
//!
//! Also the samplers' exponential spacings ([`weighted_exponentials`]):
//! rand_distr's `Exp1`, bit for bit, with its common case in a loop of
//! its own.

use rand::{Rng, RngExt, SeedableRng};
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;

pub(crate) mod exp;
mod exp_data;
mod exp_tables;
pub(crate) mod ln;
mod ln_data;
mod max_exp;
mod norm_tables;
mod normal;

pub(crate) use exp::{exp, exp_affine};
pub(crate) use max_exp::MaxExp;
pub(crate) use normal::normals;

/// SplitMix64's increment, ⌊2⁶⁴/φ⌋ (odd).
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 output function (Steele, Lea & Flood 2014).
#[inline]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream of trial `trial` under `seed`: Xoshiro256++ seeded
/// from the u64 `mix(mix(seed) ^ trial)` as `seed_from_u64` seeds it (the
/// state's four words are SplitMix64's first four outputs from it), with
/// the words formed here instead of through the generic byte filler, a
/// call and a loop per trial.
///
/// What it buys: the timeout sweep of `bench/compare.sh timeout` (10⁶
/// trials, about 65 ns each) runs 1.07–1.10 times as fast as with
/// `seed_from_u64` (one thread, CPU time, medians of alternating runs with
/// `bench/alternate.sh`); the headline sweep, whose trials cost more, as
/// fast either way. Under the 1.2 times hand-tuned code must buy, but up
/// to 10% on a path, which a simplification may not cost.
///
/// Always inlined: with a mere hint, whether LLVM inlines it into the
/// engine's per-trial loops depends on how the crate happens to be split
/// into codegen units, and where it did not, the timeout sweep ran 1.07
/// times as slow.
#[inline(always)]
pub fn trial_rng(seed: u64, trial: u64) -> Xoshiro256PlusPlus {
    let x = mix(mix(seed) ^ trial);
    let mut bytes = [0; 32];
    for (k, word) in bytes.chunks_exact_mut(8).enumerate() {
        word.copy_from_slice(&mix(x.wrapping_add(GOLDEN.wrapping_mul(k as u64))).to_le_bytes());
    }
    Xoshiro256PlusPlus::from_seed(bytes)
}

/// `out[i] ← Eᵢ·weights[i]` for standard exponentials E₀, E₁, … drawn
/// from `rng` in turn, over the shorter of the two slices: bit for bit the
/// values (and the stream's state after them) of `Exp1.sample` in a loop.
///
/// Exp1 is rand_distr's ziggurat (Marsaglia & Tsang 2000): one 64-bit word
/// gives a box index (its low 8 bits) and a uniform (its high 52 bits),
/// and x = u·X\[i\] is the draw when it lies under X\[i + 1\], about 97.8% of
/// the time. Here that common case runs in a loop of its own, a function
/// that is never inlined and calls nothing, so the stream's four words,
/// the slices' pointers and the index stay in registers; it stops at a
/// word outside its box, whose rare case (`exp1_rare`) runs out of line
/// before the loop resumes. Inlined into the caller's loop with the rare
/// case's calls (`exp`, `ln`), the same ziggurat kept them on the stack, a
/// dozen more instructions a draw.
///
/// What it buys: `gcsim sweep --n 100 --s 0..50 --trials 1000000` runs
/// 1.10 times as fast as with `Exp1.sample` in a plain loop, and the
/// two-class sweep of `bench/compare.sh classes` 1.08 times (one thread,
/// CPU time, medians of alternating runs with `bench/alternate.sh`, the
/// same output bytes). That is under the 1.2 times hand-tuned code must
/// buy, but without it the headline job is 10% slower, which a
/// simplification may not cost.
pub fn weighted_exponentials(rng: &mut Xoshiro256PlusPlus, out: &mut [f64], weights: &[f64]) {
    let n = out.len().min(weights.len());
    let (out, weights) = (&mut out[..n], &weights[..n]);
    let mut at = 0;
    loop {
        let (i, word) = exp1_common(rng, out, weights, at);
        if i == n {
            return;
        }
        out[i] = exp1_rare(rng, word) * weights[i];
        at = i + 1;
    }
}

/// `out[i] ← Eᵢ/rate` for standard exponentials E₀, E₁, … drawn from
/// `rng` in turn (Eᵢ itself at rate 1: x/1 is x): bit for bit the values
/// (and the stream's state after them) of `Exp1.sample(rng) / rate` in a
/// loop, split as [`weighted_exponentials`] splits its ziggurat.
///
/// What it buys: the hybrid-parallel paths of `bench/hybrid.sh`, whose
/// ranks draw exponentials, spend a third to a half of their time here;
/// the split loop draws them 1.1–1.2 times as fast as `Exp1.sample` inlined
/// in the caller's loop (same output bytes).
pub fn exponentials(rng: &mut Xoshiro256PlusPlus, out: &mut [f64], rate: f64) {
    let mut at = 0;
    loop {
        let (i, word) = if rate == 1.0 {
            exp1_run(rng, out, at, |v| v)
        } else {
            exp1_run(rng, out, at, |v| v / rate)
        };
        let Some(slot) = out.get_mut(i) else {
            return;
        };
        let v = exp1_rare(rng, word);
        *slot = if rate == 1.0 { v } else { v / rate };
        at = i + 1;
    }
}

/// [`exp1_common`] unweighted: `out[i] ← scale(Eᵢ)` from `at` on, up to a
/// word outside its box.
#[inline(never)]
fn exp1_run(stream: &mut Xoshiro256PlusPlus, out: &mut [f64], at: usize, scale: impl Fn(f64) -> f64) -> (usize, u64) {
    let n = out.len();
    let mut local = stream.clone();
    let mut stop = (n, 0);
    for (i, slot) in out.iter_mut().enumerate().skip(at) {
        let word = local.next_u64();
        match exp1_common_value(word) {
            Some(v) => *slot = scale(v),
            None => {
                stop = (i, word);
                break;
            }
        }
    }
    *stream = local;
    stop
}

/// The ziggurat's common case for `out[at..]` (over the shorter of `out`
/// and `weights`), up to a word outside its box: returns its index and
/// the word, or the length and 0.
///
/// The stream is read once and written once, word by word (a copy of it
/// by value, in and out, was written as words and read back as pairs of
/// them, a stalled store-to-load forward each way), and the answer fits
/// two registers.
#[inline(never)]
fn exp1_common(stream: &mut Xoshiro256PlusPlus, out: &mut [f64], weights: &[f64], at: usize) -> (usize, u64) {
    let n = out.len().min(weights.len());
    let mut local = stream.clone();
    let mut stop = (n, 0);
    for i in at..n {
        let word = local.next_u64();
        match exp1_common_value(word) {
            Some(v) => out[i] = v * weights[i],
            None => {
                stop = (i, word);
                break;
            }
        }
    }
    *stream = local;
    stop
}

/// A word's draw where it lies inside its box (the ziggurat's common
/// case), else `None`.
#[inline(always)]
fn exp1_common_value(word: u64) -> Option<f64> {
    let (b, v) = exp1_box(word);
    (v < exp_tables::ZIG_EXP_X[b + 1]).then_some(v)
}

/// A word's box index and its value u·X[box], u ∈ (0, 1) from the word's
/// high 52 bits, as rand_distr's ziggurat forms them.
#[inline(always)]
fn exp1_box(word: u64) -> (usize, f64) {
    let b = word as usize & 0xff;
    let u = f64::from_bits((word >> 12) | 0x3ff0_0000_0000_0000) - (1.0 - f64::EPSILON / 2.0);
    (b, u * exp_tables::ZIG_EXP_X[b])
}

/// The rest of rand_distr's ziggurat for a word outside its box: the tail
/// beyond R from the base box, else the wedge's test against the density
/// (a second uniform), else a fresh draw, as its loop starts over.
#[cold]
#[inline(never)]
fn exp1_rare(stream: &mut Xoshiro256PlusPlus, word: u64) -> f64 {
    let (b, v) = exp1_box(word);
    if b == 0 {
        return exp_tables::ZIG_EXP_R - stream.random::<f64>().ln();
    }
    let f = &exp_tables::ZIG_EXP_F;
    let y = f[b + 1] + (f[b] - f[b + 1]) * stream.random::<f64>();
    if below_density(y, v, b) {
        return v;
    }
    Exp1.sample(stream)
}

/// Whether `y < e^(−v)` for v in box `b`'s wedge, X[b+1] <= v < X[b], as
/// rand_distr decides it (with std's `exp`), mostly without calling `exp`:
/// e^(−v) is convex, so it lies above its tangent at X[b+1] and below the
/// chord from X[b+1] to X[b]. A `y` below the tangent, or above the chord,
/// by a relative margin of 1e-12 (far beyond the rounding of the lines and
/// of `exp`, under 1e-15) gets the answer `exp` would give; only the sliver
/// between the lines calls it.
#[inline(always)]
fn below_density(y: f64, v: f64, b: usize) -> bool {
    let (x, f) = (&exp_tables::ZIG_EXP_X, &exp_tables::ZIG_EXP_F);
    let from_left = v - x[b + 1];
    let tangent = f[b + 1] * (1.0 - from_left);
    if y < tangent * (1.0 - 1e-12) {
        return true;
    }
    let chord = f[b + 1] + (f[b] - f[b + 1]) * (from_left / (x[b] - x[b + 1]));
    if y > chord * (1.0 + 1e-12) {
        return false;
    }
    y < (-v).exp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// The split ziggurat draws rand_distr's Exp1, bit for bit, and leaves
    /// the stream where Exp1 leaves it. About 2·10⁶ draws, of which some 2.2%
    /// take the rare case and e^(−R) ≈ 4.5e-4 (about 900) the tail beyond R.
    #[test]
    fn weighted_exponentials_are_exp1s() {
        let weights: Vec<f64> = (1..=80).map(|j| 1.0 / j as f64).collect();
        let (mut out, mut tails) = (vec![0.0; 90], 0);
        for t in 0..50_000u64 {
            // Lengths 0 to 89: beyond 80 the weights are the shorter.
            let len = (t % 90) as usize;
            let mut a = trial_rng(7, t);
            let mut b = a.clone();
            weighted_exponentials(&mut a, &mut out[..len], &weights);
            for (i, (&v, &w)) in out[..len].iter().zip(&weights).enumerate() {
                let z: f64 = Exp1.sample(&mut b);
                assert_eq!(v.to_bits(), (z * w).to_bits(), "trial {t}, draw {i}");
                tails += usize::from(z > exp_tables::ZIG_EXP_R);
            }
            assert_eq!(a.next_u64(), b.next_u64(), "the stream after trial {t}");
        }
        assert!(tails > 700, "{tails} draws beyond R");
    }

    /// The split loop at a rate draws `Exp1.sample(rng) / rate`, bit for
    /// bit, at the unit rate `Exp1.sample(rng)`, and leaves the stream
    /// where they leave it: some 10⁶ draws, 2% of them in the rare case.
    #[test]
    fn exponentials_are_exp1s_over_the_rate() {
        let mut out = vec![0.0; 90];
        for t in 0..20_000u64 {
            let (len, rate) = ((t % 90) as usize, [1.0, 0.3, 2.5][(t % 3) as usize]);
            let mut a = trial_rng(11, t);
            let mut b = a.clone();
            exponentials(&mut a, &mut out[..len], rate);
            for (i, &v) in out[..len].iter().enumerate() {
                let z: f64 = Exp1.sample(&mut b);
                assert_eq!(v.to_bits(), (z / rate).to_bits(), "trial {t}, draw {i}");
            }
            assert_eq!(a.next_u64(), b.next_u64(), "the stream after trial {t}");
        }
    }

    /// The words formed here are `seed_from_u64`'s, for trials near 0 and
    /// near the top of the range and for several seeds.
    #[test]
    fn trial_streams_are_seed_from_u64s() {
        for seed in [0, 1, 42, u64::MAX] {
            for trial in (0..2_000).chain(u64::MAX - 2_000..=u64::MAX) {
                let mut ours = trial_rng(seed, trial);
                let mut theirs = Xoshiro256PlusPlus::seed_from_u64(mix(mix(seed) ^ trial));
                for _ in 0..4 {
                    assert_eq!(ours.next_u64(), theirs.next_u64(), "seed {seed}, trial {trial}");
                }
            }
        }
    }

    #[test]
    fn streams_differ_and_repeat() {
        let a = trial_rng(0, 0).next_u64();
        assert_eq!(a, trial_rng(0, 0).next_u64());
        assert_ne!(a, trial_rng(0, 1).next_u64());
        assert_ne!(a, trial_rng(1, 0).next_u64());
    }

    /// Golden value: changing the stream derivation changes every result, so
    /// it must be a deliberate decision (rand_distr's value-stability pattern).
    #[test]
    fn value_stability() {
        assert_eq!(trial_rng(0, 0).next_u64(), 4_526_510_421_850_589_242);
    }
}
