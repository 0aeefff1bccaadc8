//! The split of a matrix-multiplication code (C = A·B) and its recovery
//! threshold, computation share and message share (Yu, Maddah-Ali &
//! Avestimehr 2017 and 2020; Dutta et al. 2019).

use super::error::out_of_range;
use super::{Params, SchemeError, SchemeKind};
use crate::param::Param;

/// How a matmul code splits C = A·B: A in `p` row blocks, B in `q` column
/// blocks, the inner dimension in `m` parts (polynomial: m = 1; matdot:
/// p = q = 1 and m its inner split).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Row blocks of A.
    pub p: usize,
    /// Column blocks of B.
    pub q: usize,
    /// Parts of the inner dimension.
    pub m: usize,
}

impl Split {
    /// The recovery threshold pmq + m − 1 (pq for polynomial, 2m − 1 for
    /// matdot): the number of coefficients of the product polynomial.
    pub fn threshold(&self) -> u128 {
        self.p as u128 * self.m as u128 * self.q as u128 + self.m as u128 - 1
    }

    /// A worker's share of the full product's arithmetic, 1/(pmq).
    pub fn compute_share(&self) -> f64 {
        1.0 / (self.p as f64 * self.m as f64 * self.q as f64)
    }

    /// A worker's message as a share of C, 1/(pq).
    pub fn message_share(&self) -> f64 {
        1.0 / (self.p as f64 * self.q as f64)
    }
}

/// The split of a matmul code from its flags: polynomial reads p and q,
/// matdot p (its inner split), entangled p, m and q. Each is at least 1, and
/// the recovery threshold must be at most n.
pub(super) fn matmul_split(kind: SchemeKind, n: usize, params: Params) -> Result<Split, SchemeError> {
    let need = |value: Option<usize>, param, example| {
        let v = value.ok_or(SchemeError::Missing {
            scheme: kind,
            param,
            example,
        })?;
        // Each factor is at most the threshold, so at most n.
        if v == 0 || v > n {
            return Err(out_of_range(kind, param, v, n, format!("1..{n}")));
        }
        Ok(v)
    };
    let split = match kind {
        SchemeKind::Polynomial => Split {
            p: need(params.p, Param::P, "2")?,
            q: need(params.q, Param::Q, "4")?,
            m: 1,
        },
        SchemeKind::MatDot => Split {
            p: 1,
            q: 1,
            m: need(params.p, Param::P, "4")?,
        },
        _ => Split {
            p: need(params.p, Param::P, "2")?,
            q: need(params.q, Param::Q, "2")?,
            m: need(params.m, Param::M, "2")?,
        },
    };
    let k = split.threshold();
    if k > n as u128 {
        let Split { p, q, m } = split;
        let (what, rule) = match kind {
            SchemeKind::Polynomial => (format!("p={p}, q={q}"), "the recovery threshold pq must be at most n"),
            SchemeKind::MatDot => (format!("p={m}"), "the recovery threshold 2p-1 must be at most n"),
            _ => (
                format!("p={p}, m={m}, q={q}"),
                "the recovery threshold pmq+m-1 must be at most n",
            ),
        };
        return Err(SchemeError::NotAdmitted {
            scheme: kind,
            what,
            n,
            rule,
            hint: format!("this split needs {k} workers"),
        });
    }
    Ok(split)
}
