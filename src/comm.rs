//! Communication and decoding on the event timeline.
//!
//! A worker that finishes at t sends a message of `message` gradients (1/m
//! for comm-efficient, Ye & Abbe 2018); a full gradient takes τ (constant
//! `--comm-time`, or a draw from `--comm-dist` per message). On a dedicated
//! link it arrives at t + τ·message. On a shared ingress link the master
//! receives one message at a time, first come first served in order of
//! finish: the j-th to finish arrives at max(t_(j), a_(j−1)) + τ_(j)·message
//! (the incast bottleneck of a parameter server). The master decides
//! decodability on arrivals, then decodes for `--decode-time` D; results that
//! arrive later are discarded.

use std::fmt;

use crate::dist::Dist;

/// How messages reach the master.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// Each worker has its own link: arrival = finish + transfer.
    Dedicated,
    /// One ingress link, first come first served in order of finish.
    Shared,
}

impl Link {
    /// The name used on the command line and in output.
    pub fn name(self) -> &'static str {
        match self {
            Link::Dedicated => "dedicated",
            Link::Shared => "shared",
        }
    }
}

/// The transfer time of one full gradient.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Transfer {
    /// The same τ for every message.
    Constant(f64),
    /// An independent draw per message.
    Random(Dist),
}

/// The communication and decoding model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comm {
    /// Full-gradient transfer time.
    pub transfer: Transfer,
    /// The master's link.
    pub link: Link,
    /// Decoding time D added once the master can decode.
    pub decode_time: f64,
}

impl Default for Comm {
    fn default() -> Self {
        Self {
            transfer: Transfer::Constant(0.0),
            link: Link::Dedicated,
            decode_time: 0.0,
        }
    }
}

impl Comm {
    /// Whether messages take time at all; without it the engine's
    /// computation-only path runs, bit for bit.
    pub fn transfers(&self) -> bool {
        !matches!(self.transfer, Transfer::Constant(t) if t == 0.0)
    }

    /// The constant shift every worker's arrival gets at message size
    /// `message`, where the model is one (dedicated link, constant τ): then
    /// the iteration time is the computation-only one plus this plus D.
    pub fn constant_shift(&self, message: f64) -> Option<f64> {
        match (self.transfer, self.link) {
            (Transfer::Constant(tau), Link::Dedicated) => Some(tau * message),
            (Transfer::Constant(0.0), Link::Shared) => Some(0.0),
            _ => None,
        }
    }

    /// Arrival times of messages of size `message` from workers finishing at
    /// `finish`, whose full-gradient transfer times are `transfer` (one per
    /// worker). `order` is scratch space.
    pub fn arrivals(&self, finish: &[f64], transfer: &[f64], message: f64, order: &mut Vec<usize>, out: &mut [f64]) {
        match self.link {
            Link::Dedicated => {
                for ((a, &t), &c) in out.iter_mut().zip(finish).zip(transfer) {
                    *a = t + c * message;
                }
            }
            Link::Shared => {
                order.clear();
                order.extend(0..finish.len());
                order.sort_unstable_by(|&a, &b| finish[a].total_cmp(&finish[b]).then(a.cmp(&b)));
                let mut free = f64::NEG_INFINITY;
                for &w in order.iter() {
                    free = free.max(finish[w]) + transfer[w] * message;
                    out[w] = free;
                }
            }
        }
    }
}

impl fmt::Display for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.transfer {
            Transfer::Constant(t) => write!(f, "comm-time={t}")?,
            Transfer::Random(d) => write!(f, "comm-dist={d}")?,
        }
        write!(f, " link={} decode-time={}", self.link.name(), self.decode_time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedicated_and_shared_arrivals() {
        let finish = [3.0, 1.0, 2.0, 10.0];
        let transfer = [1.0, 2.0, 0.5, 1.0];
        let mut order = Vec::new();
        let mut out = [0.0; 4];
        let dedicated = Comm {
            transfer: Transfer::Constant(1.0),
            link: Link::Dedicated,
            decode_time: 0.0,
        };
        dedicated.arrivals(&finish, &transfer, 0.5, &mut order, &mut out);
        assert_eq!(out, [3.5, 2.0, 2.25, 10.5]);
        let shared = Comm {
            link: Link::Shared,
            ..dedicated
        };
        shared.arrivals(&finish, &transfer, 1.0, &mut order, &mut out);
        // In finish order: w1 at 1 → 3; w2 at 2 → max(2,3)+0.5 = 3.5; w0 at 3 → 4.5; w3 at 10 → 11.
        assert_eq!(out, [4.5, 3.0, 3.5, 11.0]);
    }
}
