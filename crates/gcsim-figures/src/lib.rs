//! gcsim's figures and scenario reports: line charts, heat maps and survival
//! curves drawn with plotters to PNG, SVG or PDF, and the scenario files
//! that run several studies and write their tables, figures and report page.
//!
//! The simulator is the `gcsim` crate; this one only reads its results.
#![warn(missing_docs)]

pub mod plot;
pub mod scenario;
