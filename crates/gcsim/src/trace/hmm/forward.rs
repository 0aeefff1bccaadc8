//! The scaled forward–backward pass (Rabiner 1989, *Proc. IEEE* 77(2),
//! §V.A and eq. 37–40) over several series side by side.
//!
//! The forward and backward recursions are chains: each step's
//! multiplications and division wait on the step before, so one series at a
//! time leaves the processor idle most of each step (they were half of a
//! trace analysis's time). [`LANES`] series of equal length are walked in
//! step instead: each lane does exactly the arithmetic of a lone series, in
//! the same order, so its counts and posteriors have the same bits as the
//! pass over that series alone, while the lanes' chains overlap. The
//! logarithms of the scale factors are taken after the forward recursion,
//! off its chain, and added in the same order.

use rayon::prelude::*;

use super::Hmm;

/// Series walked side by side.
pub(super) const LANES: usize = 4;

/// Expected counts from one forward–backward pass (Rabiner 1989, eq. 37–40).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counts {
    pub(super) log_likelihood: f64,
    /// Σ γ_t(k), Σ γ_t(k)·r_t, Σ γ_t(k)·r_t².
    pub(super) weight: [f64; 2],
    pub(super) sum: [f64; 2],
    pub(super) sum_sq: [f64; 2],
    /// Σ_{t<T} γ_t(k): expected departures from state k.
    pub(super) from: [f64; 2],
    /// Expected N→S and S→N transitions.
    pub(super) n_to_s: f64,
    pub(super) s_to_n: f64,
}

impl Counts {
    pub(super) fn add(&mut self, o: &Counts) {
        self.log_likelihood += o.log_likelihood;
        for k in 0..2 {
            self.weight[k] += o.weight[k];
            self.sum[k] += o.sum[k];
            self.sum_sq[k] += o.sum_sq[k];
            self.from[k] += o.from[k];
        }
        self.n_to_s += o.n_to_s;
        self.s_to_n += o.s_to_n;
    }
}

/// Per step, a pair of values (one per state) for each lane.
type Pairs<const L: usize> = Vec<[[f64; 2]; L]>;

/// The counts of every series, in order: runs of [`LANES`] series of equal
/// length side by side, the rest alone, spread over rayon's threads.
pub(super) fn counts(model: &Hmm, series: &[&[f64]]) -> Vec<Counts> {
    let chunks: Vec<Vec<Counts>> = series
        .par_chunks(LANES)
        .map(|chunk| match <[&[f64]; LANES]>::try_from(chunk) {
            Ok(lanes) if lanes.iter().all(|r| r.len() == lanes[0].len()) => lanes_pass(model, lanes).0.to_vec(),
            _ => chunk.iter().map(|&r| lanes_pass(model, [r]).0[0]).collect(),
        })
        .collect();
    chunks.into_iter().flatten().collect()
}

/// The posterior slow probabilities of every series' steps, series by
/// series, walked as [`counts`] walks them.
pub(super) fn posteriors(model: &Hmm, series: &[&[f64]]) -> Vec<Vec<f64>> {
    let chunks: Vec<Vec<Vec<f64>>> = series
        .par_chunks(LANES)
        .map(|chunk| match <[&[f64]; LANES]>::try_from(chunk) {
            Ok(lanes) if lanes.iter().all(|r| r.len() == lanes[0].len()) => {
                let steps = lanes_pass(model, lanes).1;
                (0..LANES).map(|l| steps.iter().map(|p| p[l]).collect()).collect()
            }
            _ => chunk.iter().map(|&r| forward_backward(model, r).0).collect(),
        })
        .collect();
    chunks.into_iter().flatten().collect()
}

/// The pass over one series: the posterior slow probability of each step,
/// and the expected counts.
pub(super) fn forward_backward(model: &Hmm, r: &[f64]) -> (Vec<f64>, Counts) {
    let ([counts], posterior) = lanes_pass(model, [r]);
    (posterior.into_iter().map(|[p]| p).collect(), counts)
}

/// The pass over `L` series of equal length: each one's counts, and the
/// posterior slow probabilities step by step, lane by lane.
fn lanes_pass<const L: usize>(model: &Hmm, rs: [&[f64]; L]) -> ([Counts; L], Vec<[f64; L]>) {
    let n = rs[0].len();
    debug_assert!(rs.iter().all(|r| r.len() == n));
    let tr = model.transition();
    let (e, mut ll) = emissions(model, &rs, n);
    let (alpha, scale) = forward(&tr, model.p_slow, &e);
    for c in &scale {
        for (l, c) in c.iter().enumerate() {
            ll[l] += c.ln();
        }
    }
    let beta = backward(&tr, &e, &scale);
    let mut counts = ll.map(|log_likelihood| Counts {
        log_likelihood,
        ..Counts::default()
    });
    let mut posterior = Vec::with_capacity(n);
    for t in 0..n {
        let mut slow = [0.0; L];
        for (l, c) in counts.iter_mut().enumerate() {
            let (a, b) = (alpha[t][l], beta[t][l]);
            let g = [a[0] * b[0], a[1] * b[1]];
            let total = g[0] + g[1];
            let g = [g[0] / total, g[1] / total];
            slow[l] = g[1];
            let r = rs[l][t];
            for (k, gk) in g.into_iter().enumerate() {
                c.weight[k] += gk;
                c.sum[k] += gk * r;
                c.sum_sq[k] += gk * r * r;
            }
            if t + 1 < n {
                c.from[0] += g[0];
                c.from[1] += g[1];
                let (e1, b1, s) = (e[t + 1][l], beta[t + 1][l], scale[t + 1][l]);
                c.n_to_s += a[0] * tr[0][1] * e1[1] * b1[1] / s;
                c.s_to_n += a[1] * tr[1][0] * e1[0] * b1[0] / s;
            }
        }
        posterior.push(slow);
    }
    (counts, posterior)
}

/// Emissions scaled by their larger term, and each lane's sum of the logs
/// of those terms (the likelihood's first part).
fn emissions<const L: usize>(model: &Hmm, rs: &[&[f64]; L], n: usize) -> (Pairs<L>, [f64; L]) {
    let normaliser = model.ln_normaliser();
    let mut e = vec![[[0.0; 2]; L]; n];
    let mut ll = [0.0; L];
    for (t, et) in e.iter_mut().enumerate() {
        for l in 0..L {
            let x = model.ln_emission_with(normaliser, rs[l][t]);
            // The larger term is e⁰ = 1 exactly: one exponential, not two
            // (both where m is not finite, so a NaN stays a NaN).
            let m = x[0].max(x[1]);
            et[l] = match (m.is_finite(), x[0] == m, x[1] == m) {
                (true, true, _) => [1.0, (x[1] - m).exp()],
                (true, _, true) => [(x[0] - m).exp(), 1.0],
                _ => [(x[0] - m).exp(), (x[1] - m).exp()],
            };
            ll[l] += m;
        }
    }
    (e, ll)
}

/// The scaled forward variables and the scale factors, each chain starting
/// in the stationary law.
fn forward<const L: usize>(tr: &[[f64; 2]; 2], p: f64, e: &[[[f64; 2]; L]]) -> (Pairs<L>, Vec<[f64; L]>) {
    let n = e.len();
    let mut alpha = vec![[[0.0; 2]; L]; n];
    let mut scale = vec![[0.0; L]; n];
    for t in 0..n {
        for l in 0..L {
            let prior = if t == 0 {
                [1.0 - p, p]
            } else {
                let a = alpha[t - 1][l];
                [a[0] * tr[0][0] + a[1] * tr[1][0], a[0] * tr[0][1] + a[1] * tr[1][1]]
            };
            let f = [prior[0] * e[t][l][0], prior[1] * e[t][l][1]];
            let c = f[0] + f[1];
            scale[t][l] = c;
            alpha[t][l] = [f[0] / c, f[1] / c];
        }
    }
    (alpha, scale)
}

/// The scaled backward variables.
fn backward<const L: usize>(tr: &[[f64; 2]; 2], e: &[[[f64; 2]; L]], scale: &[[f64; L]]) -> Pairs<L> {
    let n = e.len();
    let mut beta = vec![[[1.0; 2]; L]; n];
    for t in (0..n.saturating_sub(1)).rev() {
        for l in 0..L {
            let (en, bn) = (e[t + 1][l], beta[t + 1][l]);
            let next = [en[0] * bn[0], en[1] * bn[1]];
            for (j, row) in tr.iter().enumerate() {
                beta[t][l][j] = (row[0] * next[0] + row[1] * next[1]) / scale[t + 1][l];
            }
        }
    }
    beta
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Side by side, each lane has the bits of its series walked alone:
    /// the lanes' arithmetic must not mix.
    #[test]
    fn lanes_match_lone_series_bit_for_bit() {
        let model = Hmm {
            mu: 0.05,
            sigma: 0.4,
            shift: 0.9,
            p_slow: 0.3,
            rho: 0.4,
        };
        let series: Vec<Vec<f64>> = (0..LANES as u32 + 2)
            .map(|w| {
                (0..50u32)
                    .map(|t| ((t * 7 + w * 13) % 11) as f64 * 0.17 - 0.6)
                    .collect()
            })
            .collect();
        let refs: Vec<&[f64]> = series.iter().map(|r| r.as_slice()).collect();
        let lanes = lanes_pass(&model, <[&[f64]; LANES]>::try_from(&refs[..LANES]).unwrap());
        let together = counts(&model, &refs);
        assert_eq!(together.len(), refs.len());
        let slow = posteriors(&model, &refs);
        for (l, r) in refs.iter().enumerate() {
            let (posterior, alone) = forward_backward(&model, r);
            let bits = |c: &Counts| {
                let mut v = vec![c.log_likelihood, c.n_to_s, c.s_to_n];
                v.extend(c.weight.iter().chain(&c.sum).chain(&c.sum_sq).chain(&c.from));
                v.into_iter().map(f64::to_bits).collect::<Vec<_>>()
            };
            assert_eq!(bits(&together[l]), bits(&alone), "series {l}");
            assert_eq!(slow[l], posterior, "series {l}");
            if l < LANES {
                assert_eq!(bits(&lanes.0[l]), bits(&alone), "lane {l}");
                let lane: Vec<f64> = lanes.1.iter().map(|p| p[l]).collect();
                assert_eq!(lane, posterior, "lane {l}");
            }
        }
    }
}
