//! The schemes without redundancy: uncoded, `ignore` (drop the s slowest)
//! and `timeout` (a deadline).

use std::fmt;

use super::super::build::Build;
use super::super::error::out_of_range;
use super::super::facts::{Colour, Facts, Marker, Ops, Planning, code, style};
use super::super::search::{GridError, PlanLists, Ranges, Scan};
use super::super::{Params, SchemeError, Shape};
use super::Def;
use crate::encoding::{Encoding, Generator};
use crate::param::Param;

use faer::Mat;

/// No coding: every worker computes its own share; the master waits for
/// all n.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Uncoded;

pub(super) const UNCODED: Facts = code(
    "uncoded",
    "No coding: wait for all n workers",
    &[Param::S],
    style(Colour::Black, Marker::Square),
    Ops {
        build: |b| match b.params.s {
            None | Some(0) => Ok(Shape::Uncoded(Uncoded)),
            Some(s) => Err(out_of_range(
                b.kind,
                Param::S,
                s,
                b.n,
                "0 (uncoded tolerates no straggler)".into(),
            )),
        },
        // A list of s is not for uncoded: it reads s only as 0.
        grid: |_| Ok(vec![Params::default()]),
        search: |_, _| Scan::one(Params::default()),
    },
);

impl Def for Uncoded {
    fn threshold(&self, n: usize) -> usize {
        n
    }
    fn load(&self, _: usize) -> f64 {
        1.0
    }
    fn exact_gradient(&self) -> bool {
        true
    }
    fn encoding(&self, n: usize, _: Generator, _: u64) -> Encoding {
        Encoding::of_sum(Mat::identity(n, n))
    }
    fn params(&self) -> Params {
        Params::default()
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "uncoded")
    }
}

/// Wait for the fastest n − s workers and drop the rest (inexact for
/// s > 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ignore {
    /// The workers dropped.
    pub s: usize,
}

pub(super) const IGNORE: Facts = Facts {
    planning: Planning::WhenNamed,
    inexact: true,
    ..code(
        "ignore",
        "Wait for the fastest n-s workers and drop the rest (inexact)",
        &[Param::S],
        style(Colour::Purple, Marker::Diamond),
        Ops {
            build: |b| Ok(Shape::Ignore(Ignore { s: b.need_s()? })),
            grid: s_list,
            search: |n, _| Scan::every_s(n),
        },
    )
};

/// One configuration per s of the list.
pub(super) fn s_list(ranges: &Ranges) -> Result<Vec<Params>, GridError> {
    Ok(ranges.need_s()?.into_iter().map(Params::with_s).collect())
}

impl Def for Ignore {
    fn threshold(&self, n: usize) -> usize {
        n - self.s
    }
    fn load(&self, _: usize) -> f64 {
        1.0
    }
    fn exact_gradient(&self) -> bool {
        self.s == 0
    }
    fn encoding(&self, n: usize, _: Generator, _: u64) -> Encoding {
        Encoding::of_sum(Mat::identity(n, n))
    }
    fn params(&self) -> Params {
        Params::with_s(self.s)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ignore s={}", self.s)
    }
}

/// The deadline of synchronous data-parallel training: wait for all n
/// workers until time T, then proceed with those that have arrived (with
/// the first to arrive if none has; inexact).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeout {
    /// The deadline T after the iteration starts, in the time unit of the
    /// workers' times. The iteration time is min(R, max(T, A₁)), with R the
    /// time all n have arrived and A₁ the first arrival.
    pub deadline: f64,
}

pub(super) const TIMEOUT: Facts = Facts {
    planning: Planning::WhenNamed,
    inexact: true,
    uncoded_when_all_awaited: false,
    ..code(
        "timeout",
        "A deadline (--timeout T): wait for all n until time T, then proceed with those arrived, at least the first (inexact)",
        &[Param::Timeout],
        style(Colour::Orange, Marker::TriangleDown),
        Ops {
            build: build_timeout,
            grid: |ranges| {
                let ts = ranges.timeout.as_ref().ok_or(GridError::Missing {
                    param: Param::Timeout,
                    example: "1,2,4",
                })?;
                Ok(ts.values.iter().map(|&t| with_deadline(t)).collect())
            },
            // Load 1 at every deadline: one candidate per T.
            search: |_, lists: &PlanLists| {
                let ts = lists.timeouts.clone();
                vec![Scan::rising(ts.into_iter().map(with_deadline))]
            },
        },
    )
};

fn with_deadline(t: f64) -> Params {
    Params {
        timeout: Some(t),
        ..Params::default()
    }
}

fn build_timeout(b: &Build) -> Result<Shape, SchemeError> {
    let t = b.need(b.params.timeout, Param::Timeout, "2.5")?;
    if !(t.is_finite() && t >= 0.0) {
        return Err(b.bad_value(
            Param::Timeout,
            t,
            "a finite number >= 0, in the time unit of the workers' times",
        ));
    }
    Ok(Shape::Timeout(Timeout { deadline: t }))
}

impl Def for Timeout {
    fn threshold(&self, n: usize) -> usize {
        n
    }
    fn load(&self, _: usize) -> f64 {
        1.0
    }
    fn exact_gradient(&self) -> bool {
        false
    }
    fn encoding(&self, n: usize, _: Generator, _: u64) -> Encoding {
        Encoding::of_sum(Mat::identity(n, n))
    }
    fn params(&self) -> Params {
        with_deadline(self.deadline)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "timeout T={}", crate::dist::plain(self.deadline))
    }
}
