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

use thiserror::Error;

use crate::dist::Dist;
use crate::param::{Described, Naming, Param, keys};

/// How messages reach the master.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Link {
    /// Each worker has its own link: arrival = finish + transfer.
    #[default]
    Dedicated,
    /// One ingress link, first come first served in order of finish.
    Shared,
}

/// A name that is not one of a closed set's: what was given, and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown {what} `{given}`; accepted: {}", accepted.join(", "))]
pub struct UnknownName {
    /// What kind of name (`link`, `decoder`).
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// The names accepted.
    pub accepted: &'static [&'static str],
}

/// `FromStr`, `Display` and serde through a closed list of names, so that
/// flags, scenario files and shard files read and write the same words.
macro_rules! named {
    ($ty:ident, $what:literal, [$($variant:ident => $name:literal),+ $(,)?]) => {
        impl $ty {
            /// Every name, in order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The name used on the command line, in scenario files and in output.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::comm::UnknownName;

            fn from_str(s: &str) -> Result<Self, $crate::comm::UnknownName> {
                match s {
                    $($name => Ok($ty::$variant),)+
                    _ => Err($crate::comm::UnknownName {
                        what: $what,
                        given: s.to_string(),
                        accepted: Self::NAMES,
                    }),
                }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <String as ::serde::Deserialize>::deserialize(d)?.parse().map_err(::serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use named;

named!(Link, "link", [Dedicated => "dedicated", Shared => "shared"]);

/// How the master decides that it can decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decoder {
    /// The scheme's recovery rule (any k of n; frc's groups).
    #[default]
    Threshold,
    /// The rank condition of the scheme's real encoding matrix
    /// ([`crate::codes::Code::is_decodable`]), on the arrived set.
    Rank,
}

named!(Decoder, "decoder", [Threshold => "threshold", Rank => "rank"]);

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

/// Why a communication model is not valid.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CommError {
    /// Both a constant and a random transfer time.
    #[error("{}", self.describe(&keys))]
    TwoTransfers,
    /// A transfer or decoding time that is negative, NaN or infinite.
    #[error("{}", self.describe(&keys))]
    OutOfRange {
        /// [`Param::CommTime`] or [`Param::DecodeTime`].
        param: Param,
        /// The value given.
        value: f64,
    },
    /// A transfer law with a worker's state (`persist`, `group`).
    #[error("{}", self.describe(&keys))]
    StatefulTransfer,
}

impl Described for CommError {
    fn describe(&self, name: Naming) -> String {
        match self {
            CommError::TwoTransfers => format!(
                "{} and {} do not go together: give one transfer time",
                name(Param::CommTime),
                name(Param::CommDist)
            ),
            CommError::OutOfRange { param, value } => {
                format!(
                    "{} {} is out of range; accepted: a number from 0 to 1e100 (rescale the time unit for values outside)",
                    name(*param),
                    crate::dist::plain(*value)
                )
            }
            CommError::StatefulTransfer => format!(
                "{}: persist, group, p_group and group_slowdown describe workers; a transfer time takes a law with at most p_slow and slowdown",
                name(Param::CommDist)
            ),
        }
    }
}

impl Comm {
    /// The model of a constant (`comm_time`) or random (`comm_dist`)
    /// full-gradient transfer time, at most one of them (neither: no
    /// transfer time), the link and the decoding time, each checked.
    pub fn new(
        comm_time: Option<f64>,
        comm_dist: Option<Dist>,
        link: Link,
        decode_time: f64,
    ) -> Result<Self, CommError> {
        let in_range = |x: f64| (0.0..=crate::dist::MAX_SCALE).contains(&x);
        let transfer = match (comm_time, comm_dist) {
            (Some(_), Some(_)) => return Err(CommError::TwoTransfers),
            (Some(t), None) if !in_range(t) => {
                return Err(CommError::OutOfRange {
                    param: Param::CommTime,
                    value: t,
                });
            }
            (Some(t), None) => Transfer::Constant(t),
            (None, Some(d)) if d.is_stateful() => return Err(CommError::StatefulTransfer),
            (None, Some(d)) => Transfer::Random(d),
            (None, None) => Transfer::Constant(0.0),
        };
        if !in_range(decode_time) {
            return Err(CommError::OutOfRange {
                param: Param::DecodeTime,
                value: decode_time,
            });
        }
        Ok(Self {
            transfer,
            link,
            decode_time,
        })
    }

    /// The constant full-gradient transfer time, where there is one.
    pub fn comm_time(&self) -> Option<f64> {
        match self.transfer {
            Transfer::Constant(t) => Some(t),
            Transfer::Random(_) => None,
        }
    }

    /// The law of the full-gradient transfer time, where it is random.
    pub fn comm_dist(&self) -> Option<Dist> {
        match self.transfer {
            Transfer::Random(d) => Some(d),
            Transfer::Constant(_) => None,
        }
    }

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
        // Times far from 1 in exponent form, as the flags echo them.
        let plain = crate::param::plain;
        match self.transfer {
            Transfer::Constant(t) => write!(f, "comm-time={}", plain(t))?,
            Transfer::Random(d) => write!(f, "comm-dist={d}")?,
        }
        write!(f, " link={} decode-time={}", self.link, plain(self.decode_time))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_errors_name_the_key() {
        for name in Link::NAMES.iter().chain(Decoder::NAMES) {
            let text = match name.parse::<Link>() {
                Ok(l) => l.to_string(),
                Err(_) => name.parse::<Decoder>().unwrap().to_string(),
            };
            assert_eq!(&text, name);
        }
        assert_eq!(
            "fast".parse::<Link>().unwrap_err().to_string(),
            "unknown link `fast`; accepted: dedicated, shared"
        );
        let bad = Comm::new(Some(-1.0), None, Link::Shared, 0.0).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "comm_time -1 is out of range; accepted: a number from 0 to 1e100 (rescale the time unit for values outside)"
        );
        assert_eq!(
            bad.describe(&|p| if p == Param::CommTime { "--comm-time" } else { "?" }.to_string()),
            "--comm-time -1 is out of range; accepted: a number from 0 to 1e100 (rescale the time unit for values outside)"
        );
        let law = Dist::exp(1.0).unwrap();
        assert_eq!(
            Comm::new(Some(1.0), Some(law), Link::Dedicated, 0.0),
            Err(CommError::TwoTransfers)
        );
        assert!(matches!(
            Comm::new(None, None, Link::Dedicated, f64::NAN),
            Err(CommError::OutOfRange {
                param: Param::DecodeTime,
                ..
            })
        ));
        // The form headers and JSON configs name the model by.
        assert_eq!(
            Comm::new(Some(2.0), None, Link::Dedicated, 0.25).unwrap().to_string(),
            "comm-time=2 link=dedicated decode-time=0.25"
        );
        // A subnormal time in exponent form, not 330 digits.
        assert_eq!(
            Comm::new(Some(1e-320), None, Link::Dedicated, 1e-320)
                .unwrap()
                .to_string(),
            "comm-time=1e-320 link=dedicated decode-time=1e-320"
        );
        assert_eq!(
            Comm::new(None, Some(law), Link::Shared, 0.0).unwrap().to_string(),
            "comm-dist=exp:rate=1 link=shared decode-time=0"
        );
        let ok = Comm::new(None, Some(law), Link::Shared, 0.5).unwrap();
        assert_eq!(
            (ok.comm_time(), ok.comm_dist(), ok.link),
            (None, Some(law), Link::Shared)
        );
    }

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
