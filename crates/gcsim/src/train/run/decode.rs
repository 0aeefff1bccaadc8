//! The master's side of a coded iteration: which messages it uses, and
//! the update it decodes from them (see the parent module's notes).

use std::ops::Range;

use faer::Mat;

use super::{Aggregate, TrainError, Trainer, Work};
use crate::codes::Code;
use crate::engine::timeline::with_deadline;
use crate::scheme::{Rule, Scheme, SchemeKind, Strategy};
use crate::study::Study;

/// A real code and what its columns carry.
#[derive(Debug, Clone)]
pub(super) struct Coded {
    pub(super) code: Code,
    /// The rows of B as (column, value) pairs of its nonzeros.
    pub(super) support: Vec<Vec<(usize, f64)>>,
    /// Entries of one payload.
    pub(super) len: usize,
    /// The master decodes by the rank condition rather than the rule.
    pub(super) by_rank: bool,
    /// What the columns carry.
    pub(super) payload: Payload,
}

#[derive(Debug, Clone)]
pub(super) enum Payload {
    /// Column c is coordinate block c mod t of partition c / t's partial
    /// gradient (t = T's rows: 1, or comm-efficient's m).
    Gradient {
        /// Blocks per gradient, t.
        blocks: usize,
    },
    /// Column j is X_j·w for row block j (mds).
    Predictions,
}

impl Trainer<'_> {
    /// The workers whose messages the master uses, in arrival order, into
    /// `used` (see the module notes).
    pub(super) fn used_set(&self, scheme: &Scheme, coded: Option<&Coded>, arrival: &[f64], used: &mut Vec<usize>) {
        let n = arrival.len();
        used.clear();
        used.extend(0..n);
        used.sort_unstable_by(|&a, &b| arrival[a].total_cmp(&arrival[b]).then(a.cmp(&b)));
        if let Some(t) = scheme.deadline() {
            let (first, last) = (arrival[used[0]], arrival[used[n - 1]]);
            let end = with_deadline(last, t, first);
            used.retain(|&w| arrival[w] <= end);
            return;
        }
        if let Some(c) = coded.filter(|c| c.by_rank) {
            // The shortest decodable prefix; all of them where none decodes.
            let len = c.code.shortest_decodable_prefix(used).unwrap_or(n);
            used.truncate(len);
            return;
        }
        match scheme.rule() {
            Rule::KOfN(k) => used.truncate(k),
            Rule::Groups { size } => {
                let mut seen = vec![false; n.div_ceil(size)];
                let mut left = seen.len();
                let mut end = 0;
                for (q, &w) in used.iter().enumerate() {
                    if !std::mem::replace(&mut seen[w / size], true) {
                        left -= 1;
                        if left == 0 {
                            end = q + 1;
                            break;
                        }
                    }
                }
                used.truncate(end);
            }
        }
    }

    /// The master's decoding of the used workers' messages into
    /// `work.grad`.
    pub(super) fn decoded(&self, coded: &Coded, parts: &[Range<usize>], w: &[f64], work: &mut Work) {
        let (train, objective) = (&self.setup.train, &self.setup.objective);
        let d = train.d;
        let len = coded.len;
        let columns = coded.code.encoding().ncols();
        work.payloads.clear();
        work.payloads.resize(columns * len, 0.0);
        match coded.payload {
            Payload::Gradient { blocks } => {
                for (j, rows) in parts.iter().enumerate() {
                    work.one.fill(0.0);
                    objective.add_partial_gradient(train, rows.clone(), w, &mut work.one);
                    for (u, chunk) in work.one.chunks(len).enumerate() {
                        let c = j * blocks + u;
                        work.payloads[c * len..c * len + chunk.len()].copy_from_slice(chunk);
                    }
                }
            }
            Payload::Predictions => {
                for (j, rows) in parts.iter().enumerate() {
                    let out = &mut work.payloads[j * len..j * len + rows.len()];
                    objective.predictions(train, rows.clone(), w, out);
                }
            }
        }
        // Each used worker's message: its row of B applied to the payloads.
        let f = work.used.len();
        work.messages.clear();
        work.messages.resize(f * len, 0.0);
        for (q, &worker) in work.used.iter().enumerate() {
            let message = &mut work.messages[q * len..(q + 1) * len];
            for &(c, b) in &coded.support[worker] {
                let payload = &work.payloads[c * len..(c + 1) * len];
                message.iter_mut().zip(payload).for_each(|(m, p)| *m += b * p);
            }
        }
        let a: Mat<f64> = coded.code.decode(&work.used).coefficients;
        work.decoded.clear();
        work.decoded.resize(len, 0.0);
        for r in 0..a.nrows() {
            work.decoded.fill(0.0);
            for q in 0..f {
                let coefficient = a[(r, q)];
                let message = &work.messages[q * len..(q + 1) * len];
                work.decoded
                    .iter_mut()
                    .zip(message)
                    .for_each(|(x, m)| *x += coefficient * m);
            }
            match coded.payload {
                Payload::Gradient { .. } => {
                    let lo = (r * len).min(d);
                    let hi = ((r + 1) * len).min(d);
                    work.grad[lo..hi].copy_from_slice(&work.decoded[..hi - lo]);
                }
                Payload::Predictions => {
                    let rows = parts[r].clone();
                    let z = &work.decoded[..rows.len()];
                    objective.add_gradient_from_predictions(train, rows, z, &mut work.grad);
                }
            }
        }
    }
}

/// How configuration `s` of `study` forms its update, on a model of `d`
/// coefficients trained on `rows` rows.
pub(super) fn aggregate_of(study: &Study, s: &Scheme, d: usize, rows: usize) -> Result<Aggregate, TrainError> {
    let by_rank = study.decodes_by_code(s);
    match (s.kind(), s.strategy()) {
        (_, Some(Strategy::Async { k, .. })) => Ok(Aggregate::Async { k }),
        (_, Some(Strategy::KBatchSync { k })) => Ok(Aggregate::Batches { k }),
        (_, Some(_)) => Ok(Aggregate::Full),
        (SchemeKind::Uncoded, _) if !by_rank => Ok(Aggregate::Full),
        (SchemeKind::Ignore | SchemeKind::Timeout, _) if !by_rank => Ok(Aggregate::Scaled),
        _ => {
            let code = study
                .code(s)
                .map_err(|e| TrainError::Unsupported(format!("{s}: {e}")))?;
            let b = code.encoding();
            let support = (0..b.nrows())
                .map(|i| {
                    (0..b.ncols())
                        .filter(|&c| b[(i, c)] != 0.0)
                        .map(|c| (c, b[(i, c)]))
                        .collect()
                })
                .collect();
            let (payload, len) = if s.kind() == SchemeKind::Mds {
                (Payload::Predictions, rows.div_ceil(s.k()))
            } else {
                let blocks = code.target().nrows();
                (Payload::Gradient { blocks }, d.div_ceil(blocks))
            };
            Ok(Aggregate::Coded(Box::new(Coded {
                code,
                support,
                len,
                by_rank,
                payload,
            })))
        }
    }
}
