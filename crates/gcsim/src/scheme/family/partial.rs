//! The partial-straggler codes of Tandon et al. (2017, §5): each worker's
//! own partitions uncoded, then frc's or crc's coded part (see
//! [`Strategy::Partial`]).

use std::fmt;

use super::super::build::{Build, MAX_PARTS};
use super::super::error::{frc_admits, out_of_range};
use super::super::facts::{Colour, Construction, Facts, Marker, Messages, Ops, Planning, Style, code, style};
use super::super::search::{PlanLists, Ranges, Scan, divisors, product};
use super::super::{Params, Rule, SchemeError, SchemeKind, Shape, Strategy};
use super::Def;
use crate::param::Param;

/// Partial stragglers with frc's placement (`FRC` true: s + 1 divides n,
/// the coded part decoded by groups) or crc's (`FRC` false).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Partial<const FRC: bool> {
    /// Each coded partition is held by s + 1 workers.
    pub s: usize,
    /// L ≥ s + 1: partitions per worker.
    pub parts: usize,
}

/// Partial stragglers with frc's placement.
pub type PartialFrc = Partial<true>;

/// Partial stragglers with crc's placement.
pub type PartialCrc = Partial<false>;

/// The facts of a partial-straggler code whose coded part is `of`'s code.
const fn partial(name: &'static str, help: &'static str, of: SchemeKind, style: Style, ops: Ops) -> Facts {
    Facts {
        planning: Planning::WhenNamed,
        construction: Construction::PartOf(of),
        messages: Messages::OwnAndCoded,
        ..code(name, help, &[Param::S, Param::Parts], style, ops)
    }
}

pub(super) const PARTIAL_FRC: Facts = partial(
    "partial-frc",
    "Partial stragglers with frc's placement (Tandon et al. 2017, sec. 5): --parts L per worker, L-s-1 own then s+1 coded; two messages each",
    SchemeKind::Frc,
    style(Colour::Vermillion, Marker::Square),
    Ops {
        build: |b| {
            let (s, parts) = build(b)?;
            frc_admits(b.kind, b.n, s, format!("s={s}, L={parts}"))?;
            Ok(Shape::PartialFrc(PartialFrc { s, parts }))
        },
        grid,
        search: |n, lists| search(divisors(n).into_iter().map(|d| d - 1).collect(), lists),
    },
);

pub(super) const PARTIAL_CRC: Facts = partial(
    "partial-crc",
    "Partial stragglers with crc's placement (Tandon et al. 2017, sec. 5): --parts L per worker, L-s-1 own then s+1 coded; two messages each",
    SchemeKind::Crc,
    style(Colour::Orange, Marker::Circle),
    Ops {
        build: |b| {
            let (s, parts) = build(b)?;
            Ok(Shape::PartialCrc(PartialCrc { s, parts }))
        },
        grid,
        search: |n, lists| search((0..n).collect(), lists),
    },
);

/// s and L, checked against each other.
fn build(b: &Build) -> Result<(usize, usize), SchemeError> {
    let (kind, n) = (b.kind, b.n);
    let s = b.need_s()?;
    let parts = b.need(b.params.parts, Param::Parts, "10")?;
    if parts > MAX_PARTS {
        return Err(out_of_range(
            kind,
            Param::Parts,
            parts,
            n,
            format!("{}..{MAX_PARTS}", s + 1),
        ));
    }
    if parts < s + 1 {
        return Err(SchemeError::NotAdmitted {
            scheme: kind,
            what: format!("s={s}, L={parts}"),
            n,
            rule: "L must be at least s+1",
            hint: format!("with s={s}, L can be {}..{MAX_PARTS}", s + 1),
        });
    }
    Ok((s, parts))
}

fn with(s: usize, parts: usize) -> Params {
    Params {
        s: Some(s),
        parts: Some(parts),
        ..Params::default()
    }
}

fn grid(ranges: &Ranges) -> Result<Vec<Params>, super::super::search::GridError> {
    let ls = Ranges::need(&ranges.parts, Param::Parts, "10")?;
    product(Param::Parts, [&ranges.need_s()?, &ls], |[s, l]| with(s, l))
}

/// One scan of the tolerances `ss` per L of the plan.
fn search(ss: Vec<usize>, lists: &PlanLists) -> Vec<Scan> {
    lists
        .parts
        .iter()
        .map(|&parts| {
            let ss = ss.clone();
            Scan::rising(ss.into_iter().map(move |s| with(s, parts)))
        })
        .collect()
}

impl<const FRC: bool> Def for Partial<FRC> {
    fn threshold(&self, n: usize) -> usize {
        n - self.s
    }
    fn load(&self, _: usize) -> f64 {
        Strategy::partial_loads(self.s, self.parts).1
    }
    fn exact_gradient(&self) -> bool {
        true
    }
    fn rule(&self, n: usize) -> Rule {
        match FRC {
            true => Rule::Groups { size: self.s + 1 },
            false => Rule::KOfN(self.threshold(n)),
        }
    }
    fn strategy(&self) -> Option<Strategy> {
        Some(Strategy::Partial {
            s: self.s,
            parts: self.parts,
        })
    }
    fn params(&self) -> Params {
        with(self.s, self.parts)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = if FRC { "partial-frc" } else { "partial-crc" };
        write!(f, "{name} s={} L={}", self.s, self.parts)
    }
}
