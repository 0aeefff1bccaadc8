//! The passes of a fit over a sorted sample, a chunk at a time on rayon's
//! threads, with the bits of the passes in turn ([`super::fit_all_parallel`]).

use rayon::prelude::*;

use crate::dist::Dist;

/// Values one task takes: enough to outweigh the cost of handing it out,
/// few enough that the chunks of a large sample fill every thread.
const CHUNK: usize = 1 << 14;

/// Values whose terms are held at once by [`sum_in_order`]: a buffer of
/// 2 MiB, taken once and reused, not one the size of the sample.
const WAVE: usize = 16 * CHUNK;

/// `Σ f(xᵢ)` with the bits of `xs.iter().map(f).sum()`: the terms are
/// computed a wave of chunks at a time in parallel, and added one by one in
/// the order of `xs`, on the calling thread.
pub(super) fn sum_in_order(xs: &[f64], f: impl Fn(f64) -> f64 + Sync) -> f64 {
    let mut terms = vec![0.0; WAVE.min(xs.len())];
    let mut waves = xs.chunks(WAVE);
    // The first wave's terms through `Sum`, whose starting value the total
    // then carries; the later ones added to it in turn, as `Sum` would.
    let Some(first) = waves.next() else {
        return std::iter::empty::<f64>().sum();
    };
    let mut sum: f64 = terms_of(first, &f, &mut terms).iter().sum();
    for values in waves {
        for t in terms_of(values, &f, &mut terms) {
            sum += t;
        }
    }
    sum
}

/// `f` of each of `values`, into the start of `terms`, chunks in parallel.
fn terms_of<'a>(values: &[f64], f: &(impl Fn(f64) -> f64 + Sync), terms: &'a mut [f64]) -> &'a [f64] {
    let terms = &mut terms[..values.len()];
    (terms.par_chunks_mut(CHUNK).zip(values.par_chunks(CHUNK))).for_each(|(terms, values)| {
        for (t, &x) in terms.iter_mut().zip(values) {
            *t = f(x);
        }
    });
    terms
}

/// [`super::ks_distance`], each chunk's largest gap found on its own
/// thread: the largest of them is the largest gap, whatever the order.
pub(super) fn ks_distance(sorted: &[f64], dist: &Dist) -> f64 {
    let n = sorted.len() as f64;
    (sorted.par_chunks(CHUNK).enumerate())
        .map(|(c, chunk)| {
            chunk.iter().enumerate().fold(0.0, |d: f64, (i, &x)| {
                let i = c * CHUNK + i;
                let f = dist.cdf(x);
                d.max(f - i as f64 / n).max((i + 1) as f64 / n - f)
            })
        })
        .reduce(|| 0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parallel_passes_have_the_bits_of_the_serial_ones() {
        use rand_distr::Distribution;
        let law = Dist::weibull(1.5, 0.8).unwrap();
        let mut rng = crate::rng::trial_rng(3, 0);
        for n in [2, CHUNK - 1, CHUNK + 1, WAVE, 2 * WAVE + 17] {
            let mut xs: Vec<f64> = (0..n).map(|_| law.sample(&mut rng)).collect();
            xs.sort_by(f64::total_cmp);
            let f = |x: f64| super::super::mle::ln_pdf(law.base(), x);
            let serial: f64 = xs.iter().map(|&x| f(x)).sum();
            assert_eq!(sum_in_order(&xs, f).to_bits(), serial.to_bits(), "{n}");
            let other = Dist::lognormal(0.0, 1.0).unwrap();
            for d in [law, other] {
                assert_eq!(
                    ks_distance(&xs, &d).to_bits(),
                    super::super::ks_distance(&xs, &d).to_bits(),
                    "{n}"
                );
            }
        }
        assert_eq!(
            sum_in_order(&[], |x| x).to_bits(),
            [0.0f64; 0].iter().sum::<f64>().to_bits()
        );
    }
}
