//! The command line's names for the library's parameters, and the one
//! place where a library error is rendered with them.
//!
//! The library names a parameter by its key (`comm_time`); the command line
//! spells it `--comm-time`. Errors that name parameters implement
//! [`Described`], and [`render`] writes them with [`flag`], so no message is
//! ever rewritten by string replacement.

use std::error::Error;

use gcsim::comm::CommError;
use gcsim::load::LoadModelError;
use gcsim::param::{Described, Param};
use gcsim::plan::PlanError;
use gcsim::scheme::SchemeError;
use gcsim::study::StudyError;
use gcsim::sweep::SweepError;
use gcsim::trace::TraceAnalysisError;
use gcsim::train::run::TrainError;
use gcsim::train::setup::RecipeError;

/// The flag that sets `param`.
pub fn flag(param: Param) -> &'static str {
    match param {
        Param::N => "--n",
        Param::Dist => "--dist",
        Param::Workers => "--workers",
        Param::ShufflePlacement => "--shuffle-placement",
        Param::LoadModel => "--load-model",
        Param::UnitTime => "--unit-time",
        Param::Trials => "--trials",
        Param::Seed => "--seed",
        Param::Scheme => "--scheme",
        Param::S => "--s",
        Param::M => "--m",
        Param::K => "--k",
        Param::P => "--p",
        Param::Q => "--q",
        Param::CommTime => "--comm-time",
        Param::CommDist => "--comm-dist",
        Param::Link => "--link",
        Param::DecodeTime => "--decode-time",
        Param::Decoder => "--decoder",
        Param::Generator => "--generator",
        Param::D => "--d",
        Param::Code => "--code",
        Param::Timeout => "--timeout",
        Param::SpeculateAfter => "--speculate-after",
        Param::SpeculateFactor => "--speculate-factor",
        Param::Parts => "--parts",
        Param::Iterations => "--iterations",
        Param::Problem => "--problem",
        Param::Data => "--data",
        Param::Target => "--target",
        Param::TestFraction => "--test-fraction",
        Param::L2 => "--l2",
        Param::Step => "--step",
        Param::Schedule => "--schedule",
        Param::Repeats => "--repeats",
        Param::TargetLoss => "--target-loss",
        Param::TargetMetric => "--target-metric",
    }
}

/// One error of a chain, with the command line's names where it names parameters.
fn describe(err: &(dyn Error + 'static)) -> String {
    macro_rules! described {
        ($($ty:ty),+) => {
            $(if let Some(e) = err.downcast_ref::<$ty>() {
                return e.describe(&flag);
            })+
        };
    }
    described!(
        StudyError,
        SchemeError,
        SweepError,
        LoadModelError,
        CommError,
        PlanError,
        TraceAnalysisError,
        RecipeError,
        TrainError
    );
    err.to_string()
}

/// The whole error on one line, each cause after a colon (as anyhow's `{:#}`),
/// parameters named by their flags.
pub fn render(err: &anyhow::Error) -> String {
    let parts: Vec<String> = err.chain().map(describe).collect();
    // One line whatever a message echoes of the user's input.
    gcsim::param::one_line(&parts.join(": "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn library_errors_name_flags() {
        let err = anyhow::Error::from(StudyError::NoTrials);
        assert_eq!(
            render(&err),
            "--trials 0 is out of range; accepted: a whole number >= 1"
        );
        let err: anyhow::Result<()> = Err(SchemeError::OutOfRange {
            scheme: gcsim::scheme::SchemeKind::Crc,
            param: Param::S,
            value: 30,
            n: 20,
            accepted: "0..19".into(),
        })
        .context("invalid configuration");
        assert_eq!(
            render(&err.unwrap_err()),
            "invalid configuration: --s 30 is out of range for crc with n=20; accepted: 0..19"
        );
        let plain = anyhow::anyhow!("no parameter here").context("outer");
        assert_eq!(render(&plain), format!("{plain:#}"));
    }
}
