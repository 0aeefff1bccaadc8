//! The candidates of a plan at one cluster size: every admissible
//! parameter of every allowed scheme, in order of load, within `--max-load`.

use super::divisors;
use super::matmul::matmul_candidates;
use super::{PlanError, PlanRequest};
use crate::scheme::{Params, Scheme, SchemeKind};

/// The candidates at `n` for `req`, with the factor N0/n of the work. A
/// scheme's load grows with s (and as k falls), so each scan stops at the
/// first candidate over `--max-load`; frc scans only the divisors of n.
/// More than `room` candidates are not built: the count exceeds the limit.
pub(super) fn candidates(req: &PlanRequest, n: usize, factor: f64, room: usize) -> Result<Vec<Scheme>, PlanError> {
    let mut out = Vec::new();
    let fits = |s: &Scheme| req.max_load.is_none_or(|l| s.load() * factor <= l);
    // Adds the schemes of `params` in order of load, while they fit.
    let scan = |out: &mut Vec<Scheme>, kind, params: &mut dyn Iterator<Item = Params>| {
        for p in params {
            if out.len() > room {
                return;
            }
            match Scheme::new(kind, n, p) {
                Ok(s) if fits(&s) => out.push(s),
                Ok(_) => return,
                Err(_) => {}
            }
        }
    };
    let with_s = |s| Params {
        s: Some(s),
        ..Params::default()
    };
    for &kind in &req.schemes {
        match kind {
            SchemeKind::Uncoded => scan(&mut out, kind, &mut std::iter::once(Params::default())),
            SchemeKind::Ignore | SchemeKind::Crc | SchemeKind::MultiMessage => {
                scan(&mut out, kind, &mut (0..n).map(with_s))
            }
            // Load 1 whatever K: the whole list, K = n first.
            SchemeKind::KBatchSync => scan(&mut out, kind, &mut (0..n).map(with_s)),
            // Each candidate a long run of updates: K = n, ⌈n/2⌉, ⌈n/4⌉, …, 1.
            SchemeKind::KAsync | SchemeKind::KBatchAsync => {
                let ks = std::iter::successors(Some(n), |&k| (k > 1).then(|| k.div_ceil(2)));
                scan(
                    &mut out,
                    kind,
                    &mut ks.map(|k| Params {
                        k: Some(k),
                        ..Params::default()
                    }),
                )
            }
            SchemeKind::PartialFrc | SchemeKind::PartialCrc => {
                let ss: Vec<usize> = if kind == SchemeKind::PartialFrc {
                    divisors(n).into_iter().map(|d| d - 1).collect()
                } else {
                    (0..n).collect()
                };
                for &parts in &req.parts {
                    scan(
                        &mut out,
                        kind,
                        &mut ss.iter().map(|&s| Params {
                            parts: Some(parts),
                            ..with_s(s)
                        }),
                    );
                }
            }
            // One candidate, at the defaults of --speculate-after and --speculate-factor.
            SchemeKind::Speculative => scan(&mut out, kind, &mut std::iter::once(Params::default())),
            SchemeKind::Frc => scan(&mut out, kind, &mut divisors(n).into_iter().map(|d| with_s(d - 1))),
            SchemeKind::CommEfficient => {
                for &m in &req.m {
                    scan(
                        &mut out,
                        kind,
                        &mut (0..n).map(|s| Params {
                            m: Some(m),
                            ..with_s(s)
                        }),
                    );
                }
            }
            // Not searched: their value is a trade of time against the
            // gradient's error, which one objective does not rank.
            SchemeKind::ApproxRegular | SchemeKind::Custom => {}
            // Load 1 at every deadline: one candidate per T.
            SchemeKind::Timeout => scan(
                &mut out,
                kind,
                &mut req.timeouts.iter().map(|&t| Params {
                    timeout: Some(t),
                    ..Params::default()
                }),
            ),
            // One split per distinct (k, load, message): polynomial pq = t
            // (p the largest divisor of t up to its root), matdot p,
            // entangled pq = t with m >= 2. Scanned by rising load (falling
            // k, as mds), then put back in order of k.
            SchemeKind::Polynomial | SchemeKind::MatDot | SchemeKind::Entangled => {
                let start = out.len();
                scan(&mut out, kind, &mut matmul_candidates(kind, n).into_iter());
                out[start..].reverse();
            }
            SchemeKind::Mds => {
                let start = out.len();
                scan(
                    &mut out,
                    kind,
                    &mut (1..=n).rev().map(|k| Params {
                        k: Some(k),
                        ..Params::default()
                    }),
                );
                out[start..].reverse();
            }
        }
    }
    out.dedup();
    if out.is_empty() {
        return Err(PlanError::NoCandidate {
            n,
            max_load: req.max_load.unwrap_or(f64::INFINITY),
            smallest: factor,
        });
    }
    Ok(out)
}
