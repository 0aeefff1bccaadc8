//! The moment test of a load model: per-load means and variances, their
//! covariance clustered by step, and the minimum chi-square fit of the
//! model's moments to them.
//!
//! At load ℓ with nℓ times, the sample mean m and variance v estimate the
//! mean and variance of T. Their covariance comes from the influence
//! functions ψ = (t − m, (t − m)² − v) summed within each step (cluster) s,
//! `Ŝ = G/(G−1) · Σₛ ψₛψₛᵀ / nℓ²` over G steps: the cluster-robust
//! ("sandwich") estimator of Liang & Zeger (1986), which allows any
//! correlation between the workers of one step, and needs finite fourth
//! moments of T.
//!
//! Each model predicts (E T, Var T) at ℓ linearly in its parameters θ (X's
//! mean μ and variance σ², and affine's c; see
//! [`LoadModel::moments`](crate::load::LoadModel::moments)). The
//! generalised least-squares fit θ̂ minimises
//! `Q(θ) = Σℓ (yℓ − Hℓθ)ᵀ Ŝℓ⁻¹ (yℓ − Hℓθ)`, yℓ = (m, v), which has a
//! closed form since the moments are linear; under the model Q(θ̂) is
//! asymptotically χ² with 2k − p degrees of freedom for k loads and p
//! parameters (Ferguson 1958, minimum chi-square; Hansen 1982, the test of
//! over-identifying restrictions), and (Σ Hᵀ Ŝ⁻¹ H)⁻¹ is θ̂'s covariance.
//!
//! [`variance_growth`] is the weighted least-squares slope of ln v on ln ℓ
//! (weights 1/Var(ln v) ≈ v²/Ŝ_vv, the delta method): about 2 under scaled,
//! 1 under additive (at whole loads) and 0 under fixed and affine.

use statrs::function::gamma::gamma_ur;

use super::Candidate;

/// The mean and variance of the times at one load, with their covariance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LoadMoments {
    /// The load ℓ.
    pub load: f64,
    /// Sample mean.
    pub mean: f64,
    /// Sample variance (divisor n − 1).
    pub variance: f64,
    /// Clustered covariance of (mean, variance): [Var m, Cov, Var v].
    pub covariance: [f64; 3],
}

impl LoadMoments {
    /// The moments of `times`, whose clusters end at `ends` (ascending, the
    /// last `times.len()`), as [`crate::fit::load::LoadTimes::step_ends`].
    pub fn new(load: f64, times: &[f64], ends: &[usize]) -> Self {
        let n = times.len() as f64;
        let mean = times.iter().sum::<f64>() / n;
        let ss: f64 = times.iter().map(|t| (t - mean).powi(2)).sum();
        // ψ sums to zero over all times with the divisor-n variance.
        let v_n = ss / n;
        let (mut s_mm, mut s_mv, mut s_vv) = (0.0, 0.0, 0.0);
        let mut start = 0;
        for &end in ends {
            let (mut g_m, mut g_v) = (0.0, 0.0);
            for t in &times[start..end] {
                g_m += t - mean;
                g_v += (t - mean).powi(2) - v_n;
            }
            s_mm += g_m * g_m;
            s_mv += g_m * g_v;
            s_vv += g_v * g_v;
            start = end;
        }
        let g = ends.len() as f64;
        let scale = g / (g - 1.0) / (n * n);
        Self {
            load,
            mean,
            variance: ss / (n - 1.0),
            covariance: [s_mm * scale, s_mv * scale, s_vv * scale],
        }
    }

    /// The inverse covariance, if the covariance is positive definite.
    fn weight(&self) -> Option<[f64; 3]> {
        let [a, b, d] = self.covariance;
        let det = a * d - b * b;
        (a > 0.0 && d > 0.0 && det > 1e-12 * a * d).then(|| [d / det, -b / det, a / det])
    }
}

/// A model's minimum chi-square fit to the per-load moments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MomentFit {
    /// Q(θ̂).
    pub chi2: f64,
    /// Degrees of freedom, 2k − p.
    pub df: usize,
    /// P(χ²_df ≥ Q).
    pub p: f64,
    /// X's fitted mean μ.
    pub mean: f64,
    /// X's fitted variance σ².
    pub variance: f64,
    /// Affine's fitted c, constrained to c ≥ 0, and its standard error.
    pub unit_time: Option<(f64, f64)>,
}

/// The load whose covariance is singular (too few or too alike steps).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Singular(pub f64);

/// The minimum chi-square fit of `candidate` to `moments` (two or more loads).
///
/// Affine's c is constrained to c ≥ 0: when the free fit gives c < 0 the
/// fit is fixed's (c = 0) with affine's degrees of freedom, a conservative
/// test of the constrained model.
pub(crate) fn moment_fit(candidate: Candidate, moments: &[LoadMoments]) -> Result<MomentFit, Singular> {
    let fit = gls(candidate, moments)?;
    if let (Candidate::Affine, Some((c, _))) = (candidate, fit.unit_time)
        && c < 0.0
    {
        let fixed = gls(Candidate::Fixed, moments)?;
        let df = fit.df;
        return Ok(MomentFit {
            df,
            p: chi2_sf(fixed.chi2, df),
            unit_time: Some((0.0, fit.unit_time.map_or(0.0, |u| u.1))),
            ..fixed
        });
    }
    Ok(fit)
}

/// The columns of Hℓ: how (E T, Var T) at `load` move with each parameter
/// (μ, σ², then affine's c), read off `LoadModel::moments`, which is linear.
fn design(candidate: Candidate, load: f64) -> Vec<(f64, f64)> {
    let model = candidate.model(0.0);
    let at = |m: f64, v: f64| model.moments(load, m, v);
    let origin = at(0.0, 0.0);
    let minus = |(a, b): (f64, f64)| (a - origin.0, b - origin.1);
    let mut columns = vec![minus(at(1.0, 0.0)), minus(at(0.0, 1.0))];
    if candidate == Candidate::Affine {
        let unit = candidate.model(1.0).moments(load, 0.0, 0.0);
        columns.push((unit.0 - origin.0, unit.1 - origin.1));
    }
    columns
}

fn gls(candidate: Candidate, moments: &[LoadMoments]) -> Result<MomentFit, Singular> {
    let p = candidate.parameters();
    let mut a = [[0.0; 3]; 3];
    let mut r = [0.0; 3];
    let mut weights = Vec::with_capacity(moments.len());
    for m in moments {
        let w = m.weight().ok_or(Singular(m.load))?;
        let h = design(candidate, m.load);
        // Hᵀ W, a p × 2 matrix, row by row.
        let hw: Vec<(f64, f64)> = h
            .iter()
            .map(|&(x, y)| (x * w[0] + y * w[1], x * w[1] + y * w[2]))
            .collect();
        for i in 0..p {
            for j in 0..p {
                a[i][j] += hw[i].0 * h[j].0 + hw[i].1 * h[j].1;
            }
            r[i] += hw[i].0 * m.mean + hw[i].1 * m.variance;
        }
        weights.push((w, h));
    }
    let inverse = inverse(&a, p).ok_or(Singular(moments[0].load))?;
    // θ = (Σ Hᵀ W H)⁻¹·Σ Hᵀ W y, each entry summed over the columns in order.
    let theta: Vec<f64> = (0..p)
        .map(|i| (1..p).fold(inverse[i][0] * r[0], |t, j| t + inverse[i][j] * r[j]))
        .collect();
    let chi2: f64 = moments
        .iter()
        .zip(&weights)
        .map(|(m, (w, h))| {
            let fitted = h
                .iter()
                .zip(theta.iter())
                .fold((0.0, 0.0), |(x, y), (col, t)| (x + col.0 * t, y + col.1 * t));
            let (e0, e1) = (m.mean - fitted.0, m.variance - fitted.1);
            e0 * e0 * w[0] + 2.0 * e0 * e1 * w[1] + e1 * e1 * w[2]
        })
        .sum();
    let df = 2 * moments.len() - p;
    Ok(MomentFit {
        chi2,
        df,
        p: chi2_sf(chi2, df),
        mean: theta[0],
        variance: theta[1],
        unit_time: (candidate == Candidate::Affine).then(|| (theta[2], inverse[2][2].max(0.0).sqrt())),
    })
}

/// The inverse of the leading p × p block of `a` (p = 2 or 3) by cofactors
/// over the determinant, expanded along the first row; `None` if the
/// determinant is zero.
fn inverse(a: &[[f64; 3]; 3], p: usize) -> Option<[[f64; 3]; 3]> {
    let mut inv = [[0.0; 3]; 3];
    if p == 2 {
        let [[m11, m12, _], [m21, m22, _], _] = *a;
        let det = m11 * m22 - m21 * m12;
        if det == 0.0 {
            return None;
        }
        inv[0][0] = m22 / det;
        inv[0][1] = -m12 / det;
        inv[1][0] = -m21 / det;
        inv[1][1] = m11 / det;
        return Some(inv);
    }
    assert_eq!(p, 3, "two or three parameters");
    let [[m11, m12, m13], [m21, m22, m23], [m31, m32, m33]] = *a;
    let minor_11 = m22 * m33 - m32 * m23;
    let minor_12 = m21 * m33 - m31 * m23;
    let minor_13 = m21 * m32 - m31 * m22;
    let det = m11 * minor_11 - m12 * minor_12 + m13 * minor_13;
    if det == 0.0 {
        return None;
    }
    inv[0][0] = minor_11 / det;
    inv[0][1] = (m13 * m32 - m33 * m12) / det;
    inv[0][2] = (m12 * m23 - m22 * m13) / det;
    inv[1][0] = -minor_12 / det;
    inv[1][1] = (m11 * m33 - m31 * m13) / det;
    inv[1][2] = (m13 * m21 - m23 * m11) / det;
    inv[2][0] = minor_13 / det;
    inv[2][1] = (m12 * m31 - m32 * m11) / det;
    inv[2][2] = (m11 * m22 - m21 * m12) / det;
    Some(inv)
}

/// P(χ²_df ≥ q), the regularised upper incomplete gamma Q(df/2, q/2).
pub(crate) fn chi2_sf(q: f64, df: usize) -> f64 {
    if q <= 0.0 {
        1.0
    } else {
        gamma_ur(df as f64 / 2.0, q / 2.0)
    }
}

/// The exponent b of `variance ∝ load^b` and its standard error: the
/// weighted least-squares slope of ln v on ln ℓ (module docs).
pub fn variance_growth(moments: &[LoadMoments]) -> (f64, f64) {
    let points: Vec<(f64, f64, f64)> = moments
        .iter()
        .map(|m| {
            let w = m.variance * m.variance / m.covariance[2];
            (m.load.ln(), m.variance.ln(), w)
        })
        .collect();
    let sw: f64 = points.iter().map(|p| p.2).sum();
    let x_bar = points.iter().map(|p| p.2 * p.0).sum::<f64>() / sw;
    let y_bar = points.iter().map(|p| p.2 * p.1).sum::<f64>() / sw;
    let sxx: f64 = points.iter().map(|p| p.2 * (p.0 - x_bar).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| p.2 * (p.0 - x_bar) * (p.1 - y_bar)).sum();
    (sxy / sxx, (1.0 / sxx).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::LoadModel;

    /// Moments with the covariance of n independent exponential times
    /// (μ₃ = 2σ³, μ₄ = 9σ⁴): Var m = σ²/n, Cov = μ₃/n, Var v = (μ₄ − σ⁴)/n.
    fn exact(model: LoadModel, load: f64, n: f64) -> LoadMoments {
        let (mean, variance) = model.moments(load, 1.0, 1.0);
        let sd = variance.sqrt();
        LoadMoments {
            load,
            mean,
            variance,
            covariance: [variance / n, 2.0 * sd.powi(3) / n, 8.0 * variance * variance / n],
        }
    }

    /// Moments that a model predicts exactly fit it with Q = 0 and recover
    /// μ = σ² = 1 (and c); the other models do not fit them.
    #[test]
    fn exact_moments_fit_their_model_only() {
        let loads = [1.0, 2.0, 4.0];
        for truth in Candidate::ALL {
            let moments: Vec<LoadMoments> = loads.iter().map(|&l| exact(truth.model(0.5), l, 1000.0)).collect();
            for candidate in Candidate::ALL {
                let fit = moment_fit(candidate, &moments).unwrap();
                assert_eq!(fit.df, 6 - candidate.parameters());
                if candidate == truth {
                    assert!(fit.chi2 < 1e-9, "{truth:?}: {fit:?}");
                    assert!((fit.mean - 1.0).abs() < 1e-9 && (fit.variance - 1.0).abs() < 1e-9);
                    if let Some((c, se)) = fit.unit_time {
                        assert!((c - 0.5).abs() < 1e-9 && se > 0.0, "{c} {se}");
                    }
                } else if !(truth == Candidate::Fixed && candidate == Candidate::Affine) {
                    assert!(fit.p < 1e-6, "{truth:?} fitted by {candidate:?}: {fit:?}");
                }
            }
        }
    }

    #[test]
    fn clustered_covariance_matches_the_iid_formula_for_single_time_clusters() {
        let times = [1.0, 2.0, 4.0, 7.0];
        let ends = [1, 2, 3, 4];
        let m = LoadMoments::new(1.0, &times, &ends);
        // Var m = G/(G−1) Σ(t − m)²/n² = 4/3 · 21.5/16.
        let ss: f64 = times.iter().map(|t| (t - 3.5f64).powi(2)).sum();
        assert!((m.covariance[0] - 4.0 / 3.0 * ss / 16.0).abs() < 1e-12);
        assert!((m.variance - ss / 3.0).abs() < 1e-12);
        // Two clusters: their ψ sums cancel, so the covariance has rank 1.
        let one = LoadMoments::new(1.0, &times, &[2, 4]);
        assert!(one.weight().is_none());
    }

    #[test]
    fn chi2_survival() {
        // χ²₂ has survival e^(−q/2); χ²₁ at 3.841 is 0.05.
        assert!((chi2_sf(3.0, 2) - (-1.5f64).exp()).abs() < 1e-12);
        assert!((chi2_sf(3.841_458_820_694_124, 1) - 0.05).abs() < 1e-9);
        assert_eq!(chi2_sf(0.0, 3), 1.0);
    }

    #[test]
    fn variance_growth_reads_the_exponent() {
        for (candidate, b) in [
            (Candidate::Scaled, 2.0),
            (Candidate::Additive, 1.0),
            (Candidate::Fixed, 0.0),
        ] {
            let moments: Vec<LoadMoments> = [1.0, 2.0, 4.0]
                .iter()
                .map(|&l| exact(candidate.model(0.0), l, 1000.0))
                .collect();
            let (got, se) = variance_growth(&moments);
            assert!((got - b).abs() < 1e-9 && se > 0.0, "{candidate:?}: {got}");
        }
    }
}
