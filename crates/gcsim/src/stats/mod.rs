//! Statistics of the iteration time: moments and bounded-memory quantiles.

pub mod moments;
pub mod quantile;

pub use moments::{MeanEstimate, Moments};
pub use quantile::QUANTILES;

/// Φ⁻¹(0.975): the two-sided 95% point of the standard normal law.
pub(crate) const Z95: f64 = 1.959_963_984_540_054;
