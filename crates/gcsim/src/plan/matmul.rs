//! The candidates of the matmul codes in a plan: one split per distinct
//! (threshold, load, message), since those fix the iteration-time law.

use super::divisors;
use crate::scheme::{Params, SchemeKind};

/// The splits of a matmul code on n workers that differ in (k, load,
/// message), by falling threshold.
pub(super) fn matmul_candidates(kind: SchemeKind, n: usize) -> Vec<Params> {
    let square_split = |t: usize| {
        let p = divisors(t).into_iter().take_while(|d| d * d <= t).last().unwrap_or(1);
        (p, t / p)
    };
    let mut out: Vec<(usize, Params)> = Vec::new();
    match kind {
        SchemeKind::Polynomial => {
            for t in 1..=n {
                let (p, q) = square_split(t);
                out.push((
                    t,
                    Params {
                        p: Some(p),
                        q: Some(q),
                        ..Params::default()
                    },
                ));
            }
        }
        SchemeKind::MatDot => {
            for p in 1..=n.div_ceil(2) {
                out.push((
                    2 * p - 1,
                    Params {
                        p: Some(p),
                        ..Params::default()
                    },
                ));
            }
        }
        _ => {
            for t in 1..n {
                let (p, q) = square_split(t);
                for m in (2..=n).take_while(|m| t * m + m - 1 <= n) {
                    out.push((
                        t * m + m - 1,
                        Params {
                            p: Some(p),
                            q: Some(q),
                            m: Some(m),
                            ..Params::default()
                        },
                    ));
                }
            }
        }
    }
    // Rising load is falling k·(share): sort by load n/(pmq) ascending.
    let load = |p: &Params| {
        let (a, b, c) = (p.p.unwrap_or(1), p.q.unwrap_or(1), p.m.unwrap_or(1));
        match kind {
            SchemeKind::MatDot => 1.0 / a as f64,
            _ => 1.0 / (a * b * c) as f64,
        }
    };
    out.sort_by(|x, y| load(&x.1).total_cmp(&load(&y.1)).then(y.0.cmp(&x.0)));
    out.into_iter().map(|(_, p)| p).collect()
}
