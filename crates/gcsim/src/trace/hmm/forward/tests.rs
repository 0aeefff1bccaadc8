//! The lanes' pass against the pass over one series written plainly.

use super::*;

/// The scaled forward–backward pass over one series, one step at a time:
/// the posterior slow probabilities and the counts, with the operations of
/// [`lanes_pass`] in their order.
fn reference(model: &Hmm, r: &[f64]) -> (Vec<f64>, Counts) {
    let n = r.len();
    let tr = model.transition();
    let c = model.ln_normaliser();
    let mut ll = 0.0;
    let e: Vec<[f64; 2]> = r
        .iter()
        .map(|&x| {
            let [x0, x1] = model.ln_emission_with(c, x);
            let m = x0.max(x1);
            ll += m;
            match (m.is_finite(), x0 == m, x1 == m) {
                (true, true, _) => [1.0, (x1 - m).exp()],
                (true, _, true) => [(x0 - m).exp(), 1.0],
                _ => [(x0 - m).exp(), (x1 - m).exp()],
            }
        })
        .collect();
    let (mut alpha, mut scale) = (vec![[0.0; 2]; n], vec![0.0; n]);
    for t in 0..n {
        let prior = if t == 0 {
            [1.0 - model.p_slow, model.p_slow]
        } else {
            let a = alpha[t - 1];
            [a[0] * tr[0][0] + a[1] * tr[1][0], a[0] * tr[0][1] + a[1] * tr[1][1]]
        };
        let f = [prior[0] * e[t][0], prior[1] * e[t][1]];
        scale[t] = f[0] + f[1];
        alpha[t] = [f[0] / scale[t], f[1] / scale[t]];
    }
    for s in &scale {
        ll += s.ln();
    }
    let mut beta = vec![[1.0; 2]; n];
    for t in (0..n.saturating_sub(1)).rev() {
        let next = [e[t + 1][0] * beta[t + 1][0], e[t + 1][1] * beta[t + 1][1]];
        for (j, row) in tr.iter().enumerate() {
            beta[t][j] = (row[0] * next[0] + row[1] * next[1]) / scale[t + 1];
        }
    }
    let mut counts = Counts {
        log_likelihood: ll,
        ..Counts::default()
    };
    let mut posterior = Vec::with_capacity(n);
    for t in 0..n {
        let (a, b) = (alpha[t], beta[t]);
        let g = [a[0] * b[0], a[1] * b[1]];
        let total = g[0] + g[1];
        let g = [g[0] / total, g[1] / total];
        posterior.push(g[1]);
        for (k, gk) in g.into_iter().enumerate() {
            counts.weight[k] += gk;
            counts.sum[k] += gk * r[t];
            counts.sum_sq[k] += gk * r[t] * r[t];
        }
        if t + 1 < n {
            counts.from[0] += g[0];
            counts.from[1] += g[1];
            let (e1, b1, s) = (e[t + 1], beta[t + 1], scale[t + 1]);
            counts.n_to_s += a[0] * tr[0][1] * e1[1] * b1[1] / s;
            counts.s_to_n += a[1] * tr[1][0] * e1[0] * b1[0] / s;
        }
    }
    (posterior, counts)
}

fn bits(c: &Counts) -> Vec<u64> {
    let mut v = vec![c.log_likelihood, c.n_to_s, c.s_to_n];
    v.extend(c.weight.iter().chain(&c.sum).chain(&c.sum_sq).chain(&c.from));
    v.into_iter().map(f64::to_bits).collect()
}

fn model() -> Hmm {
    Hmm {
        mu: 0.05,
        sigma: 0.4,
        shift: 0.9,
        p_slow: 0.3,
        rho: 0.4,
    }
}

/// `count` series of `steps` steps, each different.
fn series(count: u32, steps: u32) -> Vec<Vec<f64>> {
    (0..count)
        .map(|w| {
            (0..steps)
                .map(|t| ((t * 7 + w * 13 + t * t * w) % 11) as f64 * 0.17 - 0.6)
                .collect()
        })
        .collect()
}

/// Side by side, each lane has the bits of its series walked alone: the
/// lanes' arithmetic must not mix, and must be the plain pass's. Two full
/// runs of lanes and a run of three filled with copies.
#[test]
fn lanes_match_the_plain_pass_bit_for_bit() {
    let model = model();
    let series = series(2 * LANES as u32 + 3, 50);
    let refs: Vec<&[f64]> = series.iter().map(|r| r.as_slice()).collect();
    let together = counts(&model, &refs);
    let slow = posteriors(&model, &refs);
    assert_eq!((together.len(), slow.len()), (refs.len(), refs.len()));
    for (l, r) in refs.iter().enumerate() {
        let (posterior, alone) = reference(&model, r);
        assert_eq!(bits(&together[l]), bits(&alone), "series {l}");
        assert_eq!(slow[l], posterior, "series {l}");
        let (lone_posterior, lone) = forward_backward(&model, r);
        assert_eq!(bits(&lone), bits(&alone), "series {l} alone");
        assert_eq!(lone_posterior, posterior, "series {l} alone");
    }
}

/// The portable build of the pass and the AVX2 one give the same bits.
#[test]
fn the_portable_and_avx2_passes_agree_bit_for_bit() {
    let model = model();
    let series = series(LANES as u32, 300);
    let rs: [&[f64]; LANES] = std::array::from_fn(|l| series[l].as_slice());
    let portable = lanes_pass::<true, false>(&model, rs);
    for (l, r) in rs.iter().enumerate() {
        let (posterior, alone) = reference(&model, r);
        assert_eq!(bits(&portable.0[l]), bits(&alone), "lane {l}");
        let lane: Vec<f64> = portable.1.iter().map(|p| p[l]).collect();
        assert_eq!(lane, posterior, "lane {l}");
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has AVX2 and FMA.
        let avx2 = unsafe { pass_avx2::<true>(&model, rs) };
        for l in 0..LANES {
            assert_eq!(bits(&avx2.0[l]), bits(&portable.0[l]), "lane {l}");
        }
        assert_eq!(avx2.1, portable.1);
    }
}

/// Series of different lengths are walked one at a time, with the same bits.
#[test]
fn series_of_different_lengths_match_the_plain_pass() {
    let model = model();
    let series = [series(1, 40).remove(0), series(2, 41).remove(1)];
    let refs: Vec<&[f64]> = series.iter().map(|r| r.as_slice()).collect();
    let together = counts(&model, &refs);
    for (l, r) in refs.iter().enumerate() {
        assert_eq!(bits(&together[l]), bits(&reference(&model, r).1), "series {l}");
    }
    assert_eq!(posteriors(&model, &refs)[1], reference(&model, refs[1]).0);
}

/// Steps whose emission exponentials glibc computes apart (two equal
/// log-densities, e⁰; a difference beyond 512, out to where e^x
/// underflows) among ordinary ones: each lane keeps the plain pass's bits,
/// whichever way its step is taken.
#[test]
fn steps_computed_apart_match_the_plain_pass() {
    // r = 0.5 is as far from μ = 0 as from μ + δ = 1 (z = ±1 exactly);
    // r = 150 is 300 and 298 deviations out (a difference of 598 in the
    // log-densities), r = 200 400 and 398 (798: e^−798 underflows to 0).
    let model = Hmm {
        mu: 0.0,
        sigma: 0.5,
        shift: 1.0,
        p_slow: 0.3,
        rho: 0.4,
    };
    let mut series = series(LANES as u32, 60);
    for (l, r) in series.iter_mut().enumerate() {
        r[3 + l] = 0.5;
        r[20 + 2 * l] = 150.0;
        r[21 + 2 * l] = 200.0;
        r[40] = 0.5;
    }
    let refs: Vec<&[f64]> = series.iter().map(|r| r.as_slice()).collect();
    let together = counts(&model, &refs);
    let slow = posteriors(&model, &refs);
    for (l, r) in refs.iter().enumerate() {
        let (posterior, alone) = reference(&model, r);
        assert_eq!(bits(&together[l]), bits(&alone), "series {l}");
        assert_eq!(slow[l], posterior, "series {l}");
    }
}
