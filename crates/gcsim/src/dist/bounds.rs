//! The ranges of the laws' parameters that set their spread, each chosen so
//! that every quantity gcsim prints of the law (mean, standard error,
//! percentiles, exact laws) stays finite and correct.

use super::MAX_SCALE;

/// What a time-scale parameter accepts.
pub(super) const SCALE_RANGE: &str = "a number from 1e-100 to 1e100 (rescale the time unit for values outside)";

/// Whether `x` is a time scale gcsim computes in (see [`MAX_SCALE`]).
pub(super) fn in_scale(x: f64) -> bool {
    (1.0 / MAX_SCALE..=MAX_SCALE).contains(&x)
}

/// The smallest Pareto tail index: at 0.1 the 0.999 quantile is
/// 500^(1/0.1) ≈ 1e27 times the median, the spread lognormal's `sigma <= 20`
/// allows (e^(20·3.09) ≈ 1e27), and at the largest scale (1e100) the p999
/// of the slowest of 2^24 workers, scale·(1.7e10)^10 ≈ 1e202, stays finite
/// (below 0.03 every percentile of 1000 workers at scale 1e100 was inf).
pub const MIN_PARETO_SHAPE: f64 = 0.1;
/// What a Pareto `shape` accepts.
pub(super) const PARETO_SHAPE_RANGE: &str = "a number from 0.1 to 1e100 (below 0.1 the 0.999 quantile is more than 1e27 times the median; percentiles overflow)";

/// Whether `shape` is a Pareto tail index in range.
pub(super) fn pareto_shape(shape: f64) -> bool {
    (MIN_PARETO_SHAPE..=MAX_SCALE).contains(&shape)
}

/// The smallest Weibull shape: at 0.05 the 0.999 quantile is 10^20 times
/// the median, the mean Γ(21) ≈ 2.4e18 and the second moment
/// Γ(41) ≈ 8e47 times the scale (squared), so at the largest scale (1e100)
/// the mean, the squares behind standard errors (≈ 1e248) and the slowest
/// of 2^24 workers (scale·23.5^20 ≈ 1e127) stay finite; at 0.02 the
/// standard error of 1000 workers at scale 1e100 overflowed, below 1/171
/// Γ(1 + 1/k) itself does, and below 1e-308 1/k is infinite.
pub const MIN_WEIBULL_SHAPE: f64 = 0.05;
/// What a Weibull `shape` accepts.
pub(super) const WEIBULL_SHAPE_RANGE: &str =
    "a number from 0.05 to 1e100 (below 0.05 the 0.999 quantile is more than 1e20 times the median; moments overflow)";

/// Whether `shape` is a Weibull shape in range.
pub(super) fn weibull_shape(shape: f64) -> bool {
    (MIN_WEIBULL_SHAPE..=MAX_SCALE).contains(&shape)
}

#[cfg(test)]
mod tests {
    use super::super::Dist;
    use super::*;

    /// At the bounds, the widest laws in range, every printed quantity of
    /// the law itself is finite: mean, 0.999 quantile, and the order
    /// statistics' exact law; just below them the constructors refuse.
    #[test]
    fn the_widest_laws_in_range_stay_finite() {
        for d in [
            Dist::weibull(MAX_SCALE, MIN_WEIBULL_SHAPE).unwrap(),
            Dist::pareto(MAX_SCALE, MIN_PARETO_SHAPE).unwrap(),
            Dist::weibull(1.0 / MAX_SCALE, MIN_WEIBULL_SHAPE).unwrap(),
        ] {
            assert!(d.quantile(0.999).is_finite() && d.quantile(0.999) > 0.0, "{d}");
        }
        let w = Dist::weibull(MAX_SCALE, MIN_WEIBULL_SHAPE).unwrap();
        // Γ(21) = 20! ≈ 2.43e18.
        assert!(
            (w.mean() / (MAX_SCALE * 2.432_902_008_176_64e18) - 1.0).abs() < 1e-9,
            "{}",
            w.mean()
        );
        assert!(Dist::weibull(1.0, MIN_WEIBULL_SHAPE * 0.999).is_err());
        assert!(Dist::pareto(1.0, MIN_PARETO_SHAPE * 0.999).is_err());
        assert!(Dist::weibull(1.0, 1e-320).is_err());
    }
}
