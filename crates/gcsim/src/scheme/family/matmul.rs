//! The matrix-multiplication codes for C = A·B: polynomial (Yu,
//! Maddah-Ali & Avestimehr 2017), MatDot (Dutta et al. 2019) and entangled
//! polynomial (Yu, Maddah-Ali & Avestimehr 2020). Each is a k-of-n rule
//! whose load and message follow its [`Split`].

use std::fmt;

use super::super::build::Build;
use super::super::error::out_of_range;
use super::super::facts::{Colour, Construction, Facts, Marker, Ops, Planning, Style, code, style};
use super::super::search::{GridError, Ranges, Scan, divisors, product};
use super::super::{Params, SchemeError, Shape, Split};
use super::Def;
use crate::param::Param;

/// Polynomial code: A in p row blocks, B in q column blocks; any pq
/// workers suffice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Polynomial {
    /// Row blocks of A.
    pub p: usize,
    /// Column blocks of B.
    pub q: usize,
}

/// MatDot code: the inner dimension in p blocks; any 2p − 1 suffice, each
/// sending a full-size C.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatDot {
    /// Blocks of the inner dimension.
    pub p: usize,
}

/// Entangled polynomial code: A in p × m blocks, B in m × q; any
/// pmq + m − 1 suffice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entangled {
    /// Row blocks of A.
    pub p: usize,
    /// Blocks of the inner dimension.
    pub m: usize,
    /// Column blocks of B.
    pub q: usize,
}

/// The facts of a matmul code.
const fn matmul(name: &'static str, help: &'static str, reads: &'static [Param], style: Style, ops: Ops) -> Facts {
    Facts {
        planning: Planning::WhenNamed,
        construction: Construction::Matmul,
        uncoded_when_all_awaited: false,
        ..code(name, help, reads, style, ops)
    }
}

pub(super) const POLYNOMIAL: Facts = matmul(
    "polynomial",
    "Polynomial code for C=A*B (Yu et al. 2017): --p P row blocks of A, --q Q column blocks of B; any pq suffice, load n/(pq), message 1/(pq) of C",
    &[Param::P, Param::Q],
    style(Colour::Vermillion, Marker::Diamond),
    Ops {
        build: |b| {
            let p = factor(b, b.params.p, Param::P, "2")?;
            let q = factor(b, b.params.q, Param::Q, "4")?;
            let code = Polynomial { p, q };
            let rule = "the recovery threshold pq must be at most n";
            admitted(b, code.split(), format!("p={p}, q={q}"), rule)?;
            Ok(Shape::Polynomial(code))
        },
        grid: |ranges| {
            let qs = Ranges::need(&ranges.q, Param::Q, "1..4")?;
            product(Param::P, [&ps(ranges)?, &qs], |[p, q]| Polynomial { p, q }.params())
        },
        // One split per threshold pq = t: p the largest divisor of t up to its root.
        search: |n, _| {
            let splits = (1..=n).map(|t| {
                let (p, q) = square_split(t);
                let code = Polynomial { p, q };
                (code.split(), code.params())
            });
            by_load(splits.collect())
        },
    },
);

pub(super) const MATDOT: Facts = matmul(
    "matdot",
    "MatDot code for C=A*B (Dutta et al. 2019): --p P inner blocks; any 2p-1 suffice, load n/p, message all of C",
    &[Param::P],
    style(Colour::Purple, Marker::Square),
    Ops {
        build: |b| {
            let p = factor(b, b.params.p, Param::P, "4")?;
            let code = MatDot { p };
            let rule = "the recovery threshold 2p-1 must be at most n";
            admitted(b, code.split(), format!("p={p}"), rule)?;
            Ok(Shape::MatDot(code))
        },
        grid: |ranges| Ok(ps(ranges)?.into_iter().map(|p| MatDot { p }.params()).collect()),
        search: |n, _| {
            let codes = (1..=n.div_ceil(2)).map(|p| MatDot { p });
            by_load(codes.map(|c| (c.split(), c.params())).collect())
        },
    },
);

pub(super) const ENTANGLED: Facts = matmul(
    "entangled",
    "Entangled polynomial code for C=A*B (Yu et al. 2020): --p P, --m M inner, --q Q; any pmq+m-1 suffice, load n/(pmq), message 1/(pq) of C",
    &[Param::P, Param::Q, Param::M],
    style(Colour::SkyBlue, Marker::Diamond),
    Ops {
        build: |b| {
            let p = factor(b, b.params.p, Param::P, "2")?;
            let q = factor(b, b.params.q, Param::Q, "2")?;
            let m = factor(b, b.params.m, Param::M, "2")?;
            let code = Entangled { p, m, q };
            let rule = "the recovery threshold pmq+m-1 must be at most n";
            admitted(b, code.split(), format!("p={p}, m={m}, q={q}"), rule)?;
            Ok(Shape::Entangled(code))
        },
        grid: |ranges| {
            let qs = Ranges::need(&ranges.q, Param::Q, "1..4")?;
            let ms = Ranges::need(&ranges.m, Param::M, "1..3")?;
            product(Param::P, [&ps(ranges)?, &ms, &qs], |[p, m, q]| {
                Entangled { p, m, q }.params()
            })
        },
        // pq = t with m >= 2 (m = 1 is the polynomial code).
        search: |n, _| {
            let mut splits = Vec::new();
            for t in 1..n {
                let (p, q) = square_split(t);
                for m in (2..=n).take_while(|m| t * m + m - 1 <= n) {
                    let code = Entangled { p, m, q };
                    splits.push((code.split(), code.params()));
                }
            }
            by_load(splits)
        },
    },
);

/// A factor of a split, given and within 1..=n (each factor is at most the
/// threshold, so at most n).
fn factor(b: &Build, value: Option<usize>, param: Param, example: &'static str) -> Result<usize, SchemeError> {
    let v = b.need(value, param, example)?;
    if v == 0 || v > b.n {
        return Err(out_of_range(b.kind, param, v, b.n, format!("1..{}", b.n)));
    }
    Ok(v)
}

/// Refuses a split whose recovery threshold exceeds n.
fn admitted(b: &Build, split: Split, what: String, rule: &'static str) -> Result<(), SchemeError> {
    let k = split.threshold();
    if k > b.n as u128 {
        return Err(SchemeError::NotAdmitted {
            scheme: b.kind,
            what,
            n: b.n,
            rule,
            hint: format!("this split needs {k} workers"),
        });
    }
    Ok(())
}

/// The list of p, which every matmul code needs.
fn ps(ranges: &Ranges) -> Result<Vec<usize>, GridError> {
    Ranges::need(&ranges.p, Param::P, "1..4")
}

/// t = p·q with p the largest divisor of t up to its root.
fn square_split(t: usize) -> (usize, usize) {
    let p = divisors(t).into_iter().take_while(|d| d * d <= t).last().unwrap_or(1);
    (p, t / p)
}

/// The splits by rising load (falling threshold among equal loads), one
/// scan listed back by threshold: one split per distinct (k, load,
/// message), since those fix the iteration-time law.
fn by_load(mut splits: Vec<(Split, Params)>) -> Vec<Scan> {
    splits.sort_by(|(x, _), (y, _)| {
        x.compute_share()
            .total_cmp(&y.compute_share())
            .then(y.threshold().cmp(&x.threshold()))
    });
    let params: Vec<Params> = splits.into_iter().map(|(_, p)| p).collect();
    vec![Scan {
        params: Box::new(params.into_iter()),
        reverse: true,
    }]
}

/// What tells the three matmul codes apart: their split, parameters and
/// name. The rest of their [`Def`] follows from the split.
trait Matmul: fmt::Debug {
    fn split(&self) -> Split;
    fn parameters(&self) -> Params;
    fn name(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

impl<T: Matmul> Def for T {
    fn threshold(&self, _: usize) -> usize {
        self.split().threshold() as usize
    }
    fn load(&self, n: usize) -> f64 {
        n as f64 * self.split().compute_share()
    }
    fn message(&self) -> f64 {
        self.split().message_share()
    }
    fn exact_gradient(&self) -> bool {
        true
    }
    fn params(&self) -> Params {
        self.parameters()
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.name(f)
    }
}

impl Matmul for Polynomial {
    fn split(&self) -> Split {
        Split {
            p: self.p,
            q: self.q,
            m: 1,
        }
    }
    fn parameters(&self) -> Params {
        Params {
            p: Some(self.p),
            q: Some(self.q),
            ..Params::default()
        }
    }
    fn name(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "polynomial p={} q={}", self.p, self.q)
    }
}

impl Matmul for MatDot {
    fn split(&self) -> Split {
        Split { p: 1, q: 1, m: self.p }
    }
    fn parameters(&self) -> Params {
        Params {
            p: Some(self.p),
            ..Params::default()
        }
    }
    fn name(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "matdot p={}", self.p)
    }
}

impl Matmul for Entangled {
    fn split(&self) -> Split {
        Split {
            p: self.p,
            q: self.q,
            m: self.m,
        }
    }
    fn parameters(&self) -> Params {
        Params {
            p: Some(self.p),
            q: Some(self.q),
            m: Some(self.m),
            ..Params::default()
        }
    }
    fn name(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "entangled p={} m={} q={}", self.p, self.m, self.q)
    }
}
