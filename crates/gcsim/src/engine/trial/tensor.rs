//! A hybrid-parallel job's tensor groups drawn whole: where a group's T
//! ranks draw exponentials of one rate, the op's compute (the slowest of
//! them) is drawn class by class, a class being the group's ranks in one
//! straggler state: the largest of a class's c exponentials in one draw
//! ([`MaxExp`], an exponential where c = 1), times the state's factor, and
//! the larger of the two classes'. Exactly the law of the T ranks' draws
//! and their maximum, in one draw per class instead of one per rank:
//! about T times fewer draws.
//!
//! Where it applies: T ≥ 2 and independent ranks of one exponential law,
//! with or without a straggler mixture (whose state is the rank's for the
//! iteration), without group slowdowns. Other laws, worker classes and
//! traces draw every rank, as the flat engine does.
//!
//! The stream: each rank's state (as [`TrialPlan::draw`] draws them), then
//! unit by unit (microbatch j), group by group in rank order (replica d's
//! stage i is group d·P + i), the normal class's draw, then the slow one's.
//!
//! A timeline shows each rank's own compute: [`TrialPlan::tensor_ranks`]
//! gives a class's ranks values of their law given the class's maximum
//! (one rank, uniformly chosen, has it; the others are exponentials
//! truncated below it), from a stream of their own.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::TrialPlan;
use super::laws::stateful;
use super::scratch::Scratch;
use crate::dist::Base;
use crate::rng::{MaxExp, trial_rng};
use crate::study::Workers;

/// The stream of a timeline's ranks below their class's maximum.
const RANKS_STREAM: u64 = 0x7465_6e73_6f72_7300;

/// How a hybrid-parallel job's tensor groups are drawn whole.
#[derive(Debug, Clone)]
pub(super) struct TensorGroups {
    /// T.
    tp: usize,
    /// The largest of c standard exponentials at c − 2, for c = 2..=T.
    maxima: Vec<MaxExp>,
    /// A normal and a slow rank's factor: 1 / the rate, times the
    /// slowdown for a slow one (1 without a straggler mixture).
    factors: [f64; 2],
}

impl TensorGroups {
    /// The groups of `tp` ranks of `workers`, where they can be drawn whole.
    pub(super) fn of(workers: &Workers, tp: usize) -> Option<Self> {
        let Workers::Iid(law) = workers else {
            return None;
        };
        let Base::Exp { rate } = law.base() else {
            return None;
        };
        // A mixture that never slows has no state: each draw would take a
        // uniform of its own (see `draws::fill`).
        if tp < 2 || law.groups().is_some() || (law.stragglers().is_some() && !stateful(workers)) {
            return None;
        }
        let scale = 1.0 / rate;
        Some(Self {
            tp,
            maxima: (2..=tp).map(MaxExp::new).collect(),
            factors: [scale, scale * law.stragglers().map_or(1.0, |(_, s)| s)],
        })
    }

    /// The largest of `c` ≥ 1 standard exponentials.
    #[inline(always)]
    fn largest(&self, rng: &mut Xoshiro256PlusPlus, c: usize) -> f64 {
        match c {
            1 => Exp1.sample(rng),
            _ => self.maxima[c - 2].sample(rng),
        }
    }

    /// The slowest of a group with `slow` slow ranks, its classes' largest
    /// exponentials (normal, then slow) passed to `each` with the class.
    #[inline(always)]
    fn group(&self, rng: &mut Xoshiro256PlusPlus, slow: usize, mut each: impl FnMut(bool, f64)) -> f64 {
        let mut slowest = f64::NEG_INFINITY;
        for (class, c) in [(false, self.tp - slow), (true, slow)] {
            if c > 0 {
                let m = self.largest(rng, c);
                each(class, m);
                slowest = slowest.max(m * self.factors[usize::from(class)]);
            }
        }
        slowest
    }

    /// One unit's groups (with `kinds[g]` slow ranks) into `unit`, as
    /// [`TrialPlan::draw_slowest`] draws them: runs of groups of one state
    /// in a loop of their own, between them a group of both states or a
    /// word outside the table's common case.
    fn fill_unit(&self, rng: &mut Xoshiro256PlusPlus, unit: &mut [f64], kinds: &[u32]) {
        let mut at = 0;
        loop {
            let (i, word) = whole_run(self, rng, unit, kinds, at);
            let Some(&slow) = kinds.get(i) else {
                return;
            };
            let slow = slow as usize;
            unit[i] = if slow == 0 || slow == self.tp {
                let class = usize::from(slow > 0);
                self.maxima[self.tp - 2].rare(rng, word) * self.factors[class]
            } else {
                self.mixed(rng, slow)
            };
            at = i + 1;
        }
    }

    /// The slowest of a group of both states.
    #[inline(never)]
    fn mixed(&self, rng: &mut Xoshiro256PlusPlus, slow: usize) -> f64 {
        self.group(rng, slow, |_, _| {})
    }
}

/// Groups of one state from `unit[at..]` on (group i's largest of T
/// standard exponentials times its state's factor), up to a group of both
/// states or a word outside the table's common case: returns its index
/// and the word (0 for a group of both states, which draws none here), or
/// the unit's length. A loop that calls nothing, so that the stream stays
/// in registers (see [`crate::rng::weighted_exponentials`]).
#[inline(never)]
fn whole_run(
    g: &TensorGroups,
    stream: &mut Xoshiro256PlusPlus,
    unit: &mut [f64],
    kinds: &[u32],
    at: usize,
) -> (usize, u64) {
    let (n, t, max) = (unit.len().min(kinds.len()), g.tp as u32, &g.maxima[g.tp - 2]);
    let mut local = stream.clone();
    let mut stop = (n, 0);
    for i in at..n {
        let slow = kinds[i];
        if slow != 0 && slow != t {
            stop = (i, 0);
            break;
        }
        let word = local.next_u64();
        match max.common(word) {
            Some(m) => unit[i] = m * g.factors[usize::from(slow > 0)],
            None => {
                stop = (i, word);
                break;
            }
        }
    }
    *stream = local;
    stop
}

impl TrialPlan {
    /// The ranks' states, then `units` units' group maxima (see the module
    /// notes) into `scratch.hybrid.slowest`, unit j's group g at
    /// `j·groups + g`. With `ranks`, each rank's value also at
    /// `ranks[j·n + r]`: its class's largest standard exponential at the
    /// class's first rank, NaN at its others.
    pub(super) fn draw_slowest(
        &self,
        g: &TensorGroups,
        rng: &mut Xoshiro256PlusPlus,
        scratch: &mut Scratch,
        units: usize,
        ranks: Option<&mut Vec<f64>>,
    ) {
        let Workers::Iid(law) = &self.workers else {
            unreachable!("tensor groups of one law")
        };
        let (n, t) = (self.n, g.tp);
        if self.stateful {
            self.draw_states(rng, &mut scratch.carried, |_| law);
        }
        let own = &scratch.carried.own[..if self.stateful { n } else { 0 }];
        let b = &mut scratch.hybrid;
        b.kinds.clear();
        b.kinds
            .extend((0..n / t).map(|group| match own.get(group * t..(group + 1) * t) {
                Some(states) => states.iter().filter(|&&slow| slow).count() as u32,
                None => 0,
            }));
        let groups = b.kinds.len();
        b.slowest.resize(units * groups, 0.0);
        let Some(ranks) = ranks else {
            for unit in b.slowest.chunks_exact_mut(groups) {
                g.fill_unit(rng, unit, &b.kinds);
            }
            return;
        };
        ranks.clear();
        ranks.resize(units * n, f64::NAN);
        for (j, unit) in b.slowest.chunks_exact_mut(groups).enumerate() {
            for (group, (x, &slow)) in unit.iter_mut().zip(&b.kinds).enumerate() {
                let states = own.get(group * t..(group + 1) * t);
                let first = |class: bool| states.map_or(0, |s| s.iter().position(|&v| v == class).expect("a rank"));
                *x = g.group(rng, slow as usize, |class, m| {
                    ranks[j * n + group * t + first(class)] = m
                });
            }
        }
    }

    /// Trial `trial`'s ranks' values, unit-major (`scratch.draws[j·n + r]`),
    /// where its tensor groups are drawn whole: per class, its largest
    /// exponential at a rank uniformly chosen, below it at the others
    /// exponentials given that they are, from a stream of their own, each
    /// times its factor. Each group's largest value is its op's compute,
    /// bit for bit.
    pub(super) fn tensor_ranks(
        &self,
        g: &TensorGroups,
        (seed, trial): (u64, u64),
        units: usize,
        scratch: &mut Scratch,
    ) {
        let mut ranks = std::mem::take(&mut scratch.draws);
        self.draw_slowest(g, &mut trial_rng(seed, trial), scratch, units, Some(&mut ranks));
        let mut side = trial_rng(seed ^ RANKS_STREAM, trial);
        let (t, n, own) = (g.tp, self.n, &scratch.carried.own);
        let mut members = Vec::with_capacity(t);
        for (i, group) in ranks.chunks_exact_mut(t).enumerate() {
            let first = i * t % n;
            for class in [false, true] {
                members.clear();
                members.extend((0..t).filter(|&k| own.get(first + k).is_some_and(|&s| s) == class));
                let Some(&at) = members.first() else {
                    continue;
                };
                let (m, top) = (group[at], members[side.random_range(0..members.len())]);
                for &k in &members {
                    // An exponential below m: −ln(1 − U·(1 − e^(−m))).
                    let e = if k == top {
                        m
                    } else {
                        (-(side.random::<f64>() * (-m).exp_m1()).ln_1p()).min(m)
                    };
                    group[k] = e * g.factors[usize::from(class)];
                }
            }
        }
        scratch.draws = ranks;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;

    /// Drawn class by class, a group of four ranks with 0 to 4 slow ones
    /// has the law of its ranks' own draws (exponentials at rate 2, a slow
    /// one's times 8) and their maximum: the mean and the share above the
    /// brute force's median and 99th percentile within 5 standard errors.
    #[test]
    fn classes_draw_the_slowest_rank() {
        let law = Dist::exp(2.0).unwrap().with_stragglers(0.5, 8.0).unwrap();
        let g = TensorGroups::of(&Workers::Iid(law), 4).expect("drawn whole");
        let draws = 200_000;
        for slow in 0..=4 {
            let mut rng = trial_rng(3, slow as u64);
            let ours: Vec<f64> = (0..draws).map(|_| g.group(&mut rng, slow, |_, _| {})).collect();
            let mut brute: Vec<f64> = (0..draws)
                .map(|_| {
                    (0..4)
                        .map(|t| {
                            let e: f64 = Exp1.sample(&mut rng);
                            e * if t < slow { 4.0 } else { 0.5 }
                        })
                        .fold(f64::NEG_INFINITY, f64::max)
                })
                .collect();
            let stats = |v: &[f64]| {
                let m = v.iter().sum::<f64>() / v.len() as f64;
                (m, v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64)
            };
            let ((a, va), (b, vb)) = (stats(&ours), stats(&brute));
            let z = (a - b) / ((va + vb) / draws as f64).sqrt();
            assert!(z.abs() < 5.0, "{slow} slow: mean {a} against {b}, z = {z}");
            brute.sort_by(f64::total_cmp);
            for p in [0.5, 0.99] {
                let q = brute[(p * draws as f64) as usize];
                let above = ours.iter().filter(|&&x| x > q).count() as f64 / draws as f64;
                let z = (above - (1.0 - p)) / (2.0 * p * (1.0 - p) / draws as f64).sqrt();
                assert!(z.abs() < 5.0, "{slow} slow: {above} above the {p} quantile, z = {z}");
            }
        }
    }

    /// A law drawn rank by rank: other laws, one rank per group, groups of
    /// workers, a mixture that never slows.
    #[test]
    fn only_exponential_ranks_are_drawn_whole() {
        let exp = Dist::exp(1.0).unwrap();
        assert!(TensorGroups::of(&Workers::Iid(exp), 2).is_some());
        assert!(TensorGroups::of(&Workers::Iid(exp), 1).is_none());
        let lognormal = Dist::lognormal(0.0, 0.5).unwrap();
        assert!(TensorGroups::of(&Workers::Iid(lognormal), 4).is_none());
        let grouped = exp.with_groups(2, 0.1, 3.0).unwrap();
        assert!(TensorGroups::of(&Workers::Iid(grouped), 4).is_none());
        let idle = exp.with_stragglers(0.0, 8.0).unwrap();
        assert!(TensorGroups::of(&Workers::Iid(idle), 4).is_none());
    }
}
