//! Statistics of the iteration time: moments and bounded-memory quantiles.

pub mod moments;
pub mod quantile;

pub use moments::{MeanEstimate, Moments};
pub use quantile::QUANTILES;
