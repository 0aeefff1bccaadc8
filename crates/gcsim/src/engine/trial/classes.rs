//! A heterogeneous cluster by order statistics: each class's sorted times
//! by Rényi's representation (David & Nagaraja 2003, §2.5), the classes'
//! runs merged, with no sort.
//!
//! Where every slot reads one order statistic among the merged `need`
//! largest (closed forms, k-of-n rules: `class_top`), a class's times that
//! cannot reach the merged top are not drawn. A class of m workers with a
//! top block of b draws E_(m−b+1) of its m standard exponentials from that
//! order statistic's own law, as a function of one standard exponential
//! ([`HazardQuantile::order_statistic`]), and the b − 1 above it by the
//! spacings E_(j+1) = E_(j) + Z/(m−j), as the i.i.d. sampler draws its top
//! block. Every time of a class not drawn lies below its lowest drawn one.
//! So once the `need`-th largest drawn time is at least each partial
//! class's lowest drawn time, the `need` largest drawn are the `need`
//! largest of all n (an equal time left out is the same value). Until then
//! the partial class whose lowest drawn time is the largest extends
//! downward, top down in ln U as the i.i.d. sampler's `reach` does: given
//! U_(k+1), the k below are i.i.d. uniform on [0, U_(k+1)], so
//! ln U_(k) = ln U_(k+1) − Z/k with U = 1 − e^(−E).
//!
//! The blocks are drawn from the trial's stream, in class order; each
//! class extends downward on a stream of its own. So a class's times are a
//! fixed function of the trial whichever classes are extended and how far,
//! and a configuration's values do not depend on what else the study
//! contains, as on the i.i.d. path, among studies whose every rule is k of
//! n. (A study with frc's groups or the event walk, which need to know which
//! worker finished, draws the classes whole: the same law, other samples.)
//! The block sizes are a function of the classes alone: a pilot of whole
//! draws with a fixed seed, reading the merged top [`top_block`] as the
//! i.i.d. sampler does (each class's count there: its mean plus two
//! standard deviations, plus one). They decide how many draws a trial
//! takes, not the law of what it returns.

use super::laws::OverLaw;
use super::*;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::rng::weighted_exponentials;

/// A heterogeneous cluster whose every class has a [`Standard`] law: each
/// class's order statistics are drawn by Rényi's representation and the
/// classes' sorted runs merged, with no sort.
#[derive(Debug, Clone)]
pub(super) struct ClassLaws {
    /// `(count, law, 1/(m−i+1) for i = 1..m)` per class, in order.
    pub(super) classes: Vec<(usize, Standard, Vec<f64>)>,
    /// Random placement per trial.
    pub(super) shuffle: bool,
    /// Where each class's run starts in the trial's times, and n at the end.
    pub(super) starts: Vec<usize>,
    /// Per class, its top block where only the merged top is read (see
    /// [`Self::plan_blocks`]); `None` for a class drawn whole, and empty
    /// where every class is.
    blocks: Vec<Option<Block>>,
}

/// A class's top block: the index of its lowest drawn order statistic, and
/// that order statistic's law.
#[derive(Debug, Clone)]
struct Block {
    lowest: usize,
    start: Arc<HazardQuantile>,
}

/// The seed of the pilot that sizes the blocks: a constant, so that the
/// sizes, and with them the trials' draws, are a function of the study.
const PILOT_SEED: u64 = 0x0063_6c61_7373_6573;

/// The stream of class c's times below its block: `REACH_STREAM ^ c` on
/// the study's seed.
const REACH_STREAM: u64 = 0xC1A5_5EED_0F0F_0003;

/// The pilot's draws at most (its trials times n), and its trials at most.
const PILOT_DRAWS: usize = 1 << 22;
const PILOT_TRIALS: usize = 256;

impl ClassLaws {
    pub(super) fn of(workers: &Workers) -> Option<Self> {
        let Workers::Classes { classes, shuffle } = workers else {
            return None;
        };
        let classes = classes
            .iter()
            .map(|&(m, d)| Some((m, Standard::of(&Workers::Iid(d))?)))
            .collect::<Option<Vec<_>>>()?;
        Some(Self::from_laws(classes, *shuffle))
    }

    /// Classes of `(count, law)`, in order.
    fn from_laws(classes: Vec<(usize, Standard)>, shuffle: bool) -> Self {
        let starts = std::iter::once(0)
            .chain(classes.iter().scan(0, |at, (m, _)| {
                *at += m;
                Some(*at)
            }))
            .collect();
        let classes = classes
            .into_iter()
            .map(|(m, law)| (m, law, (1..=m).map(|i| 1.0 / (m - i + 1) as f64).collect()))
            .collect();
        Self {
            classes,
            starts,
            shuffle,
            blocks: Vec::new(),
        }
    }

    /// n, the workers of all classes.
    fn n(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    /// Sizes each class's top block where `top` (only the merged top is
    /// read), else draws every class whole, by a pilot of whole draws: the
    /// class's count among the merged [`top_block`] (every time at least
    /// its lowest), its mean plus two standard deviations, plus one.
    pub(super) fn plan_blocks(&mut self, top: bool) {
        self.blocks.clear();
        let n = self.n();
        if !top || n == 0 {
            return;
        }
        let need = top_block(n);
        let trials = (PILOT_DRAWS / n.max(1)).clamp(16, PILOT_TRIALS);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(PILOT_SEED);
        let (mut runs, mut sorted, mut pad) = (vec![0.0; n], vec![0.0; n], Vec::new());
        let mut moments = vec![(0.0, 0.0); self.classes.len()];
        for _ in 0..trials {
            self.draw_whole(&mut rng, &mut runs);
            merge_runs_top(self.runs(&runs, None), need, &mut sorted, &mut pad);
            let bound = sorted[n - need];
            for (m, w) in moments.iter_mut().zip(self.starts.windows(2)) {
                let count = runs[w[0]..w[1]].iter().filter(|&&x| x >= bound).count() as f64;
                m.0 += count;
                m.1 += count * count;
            }
        }
        let t = trials as f64;
        let sizes: Vec<usize> = moments
            .iter()
            .map(|&(sum, squares)| {
                let mean = sum / t;
                let sd = (squares / t - mean * mean).max(0.0).sqrt();
                (mean + 2.0 * sd).ceil() as usize + 1
            })
            .collect();
        self.set_blocks(&sizes);
    }

    /// Each class's top block of `sizes[c]` (at least 1; a class whose
    /// block would hold all its workers is drawn whole).
    fn set_blocks(&mut self, sizes: &[usize]) {
        self.blocks = self
            .classes
            .iter()
            .zip(sizes)
            .map(|(&(m, _, _), &b)| {
                let b = b.clamp(1, m);
                (b < m).then(|| Block {
                    lowest: m - b,
                    start: Arc::new(HazardQuantile::order_statistic((m - b + 1) as u64, m as u64)),
                })
            })
            .collect();
    }

    /// Each class's drawn part of `runs`: from its `lowest` drawn index
    /// (all of it where `lowest` is `None`).
    pub(super) fn runs<'a>(
        &'a self,
        runs: &'a [f64],
        lowest: Option<&'a [usize]>,
    ) -> impl Iterator<Item = &'a [f64]> + 'a {
        self.starts
            .windows(2)
            .enumerate()
            .map(move |(c, w)| &runs[w[0] + lowest.map_or(0, |l| l[c])..w[1]])
    }

    /// Draws each class's sorted times whole into its part of `runs`.
    pub(super) fn draw_whole(&self, rng: &mut Xoshiro256PlusPlus, runs: &mut [f64]) {
        for ((_, law, weights), w) in self.classes.iter().zip(self.starts.windows(2)) {
            draw_run(None, law, weights, &mut runs[w[0]..w[1]], rng);
        }
    }

    /// The `need` largest of the classes' times, ascending, in the last
    /// `need` entries of `scratch.sorted`: each class's top block, extended
    /// downward until the merged top is theirs (see the module notes): the
    /// blocks from `rng`, each class's times below its block from its own
    /// stream of the trial `trial` of `seed`.
    pub(super) fn draw_top(
        &self,
        need: usize,
        (seed, trial): (u64, u64),
        rng: &mut Xoshiro256PlusPlus,
        scratch: &mut Scratch,
    ) {
        let n = self.n();
        let lowest = &mut scratch.class_lowest;
        lowest.clear();
        scratch.class_reach.clear();
        scratch.class_reach.resize(self.classes.len(), None);
        for (c, ((_, law, weights), w)) in self.classes.iter().zip(self.starts.windows(2)).enumerate() {
            let block = self.blocks.get(c).and_then(Option::as_ref);
            let run = &mut scratch.class_runs[w[0]..w[1]];
            let low = draw_run(
                block.map(|b| (b, &mut scratch.low_order[w[0]..w[1]])),
                law,
                weights,
                run,
                rng,
            );
            lowest.push(low);
        }
        loop {
            // The partial class whose lowest drawn time is the largest:
            // every time not drawn is at most that.
            let mut bound: Option<(usize, f64)> = None;
            for (c, (&low, w)) in lowest.iter().zip(&self.starts).enumerate() {
                let v = scratch.class_runs[w + low];
                if low > 0 && bound.is_none_or(|(_, b)| v > b) {
                    bound = Some((c, v));
                }
            }
            let drawn: usize = self
                .starts
                .windows(2)
                .zip(lowest.iter())
                .map(|(w, &l)| w[1] - w[0] - l)
                .sum();
            let mut target = f64::INFINITY;
            if drawn >= need {
                merge_runs_top(
                    self.runs(&scratch.class_runs, Some(lowest.as_slice())),
                    need,
                    &mut scratch.sorted,
                    &mut scratch.merge,
                );
                target = scratch.sorted[n - need];
                match bound {
                    Some((_, b)) if target < b => {}
                    _ => return,
                }
            }
            let (c, _) = bound.expect("a class not drawn whole while fewer than `need` are drawn");
            // Down to a time below the merged top's lowest (one step where
            // fewer than `need` are drawn): every one above it joins the top.
            let w = self.starts[c];
            let block = self.blocks[c].as_ref().expect("a partial class has a block");
            loop {
                let k = lowest[c]; // the next index down holds the k-th smallest
                let (run, ln_u) = (&mut scratch.class_runs[w..], &mut scratch.low_order[w..]);
                if k == block.lowest {
                    // ln U_(k₀) = ln(1 − e^(−E_(k₀))) from the block's E.
                    ln_u[k] = -neg_ln_one_minus_exp(-ln_u[k]);
                }
                let stream =
                    scratch.class_reach[c].get_or_insert_with(|| trial_rng(seed ^ REACH_STREAM ^ c as u64, trial));
                let z: f64 = Exp1.sample(stream);
                ln_u[k - 1] = ln_u[k] - z / k as f64;
                run[k - 1] = self.classes[c].1.apply(neg_ln_one_minus_exp(ln_u[k - 1]));
                lowest[c] = k - 1;
                if k == 1 || run[k - 1] < target {
                    break;
                }
            }
        }
    }
}

/// One class's sorted times in `run`, by its law: with a top block, the
/// block (its lowest E kept in the block's entry of `e_low`, for a later
/// reach), else the whole run. Returns the index of the lowest drawn.
///
/// The spacings are drawn, summed and put through the law in three passes
/// (the sampler's common case in a loop of its own, see
/// [`weighted_exponentials`]).
fn draw_run(
    block: Option<(&Block, &mut [f64])>,
    law: &Standard,
    weights: &[f64],
    run: &mut [f64],
    rng: &mut Xoshiro256PlusPlus,
) -> usize {
    // The lowest drawn, where the spacings start, and where its E goes.
    let (low, first, e_low) = match block {
        Some((b, e_low)) => {
            run[b.lowest] = b.start.at(Exp1.sample(rng));
            (b.lowest, b.lowest + 1, Some(e_low))
        }
        None => (0, 0, None),
    };
    weighted_exponentials(rng, &mut run[first..], &weights[first..]);
    let run = &mut run[low..];
    prefix_sum(run);
    if let Some(e_low) = e_low {
        e_low[low] = run[0];
    }
    law.with_law(InPlace(run));
    low
}

/// `x ← g(x)` over a slice, one loop per law with its transform inlined.
struct InPlace<'a>(&'a mut [f64]);

impl OverLaw for InPlace<'_> {
    type Out = ();
    #[inline(always)]
    fn run(self, law: impl Fn(f64) -> f64) {
        self.0.iter_mut().for_each(|x| *x = law(*x));
    }
    fn run_empirical(self, table: &Empirical) {
        table.apply_in_place(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(spec: &str) -> Standard {
        Standard::of(&Workers::Iid(spec.parse().unwrap())).unwrap()
    }

    fn scratch(n: usize) -> Scratch {
        Scratch {
            class_runs: vec![0.0; n],
            low_order: vec![0.0; n],
            sorted: vec![0.0; n],
            ..Default::default()
        }
    }

    /// Per rank of the merged top `need`, the mean and the variance of its
    /// value over `trials` trials: by the classes' blocks, or by whole
    /// draws merged.
    fn moments(laws: &ClassLaws, need: usize, trials: u64, seed: u64, by_blocks: bool) -> Vec<(f64, f64)> {
        let n = laws.n();
        let mut scratch = scratch(n);
        let mut sums = vec![(0.0, 0.0); need];
        for trial in 0..trials {
            let mut rng = crate::rng::trial_rng(seed, trial);
            if by_blocks {
                laws.draw_top(need, (seed, trial), &mut rng, &mut scratch);
            } else {
                laws.draw_whole(&mut rng, &mut scratch.class_runs);
                let runs = laws.runs(&scratch.class_runs, None);
                merge_runs_top(runs, need, &mut scratch.sorted, &mut scratch.merge);
            }
            for (s, &x) in sums.iter_mut().zip(&scratch.sorted[n - need..]) {
                s.0 += x;
                s.1 += x * x;
            }
        }
        let t = trials as f64;
        sums.iter().map(|&(a, b)| (a / t, b / t - (a / t) * (a / t))).collect()
    }

    /// The merged top drawn by blocks has the law of the whole draws', rank
    /// by rank (means within 5 standard errors of the difference), with
    /// blocks as the pilot sizes them and with blocks so small that nearly
    /// every time comes from extending a class downward (the pilot draws
    /// the second case whole, as it reads 39 of 40): two classes of
    /// exponential workers, three of three laws read down to rank 2, and a
    /// trace's bootstrap whose atoms tie across the classes.
    #[test]
    fn blocks_give_the_whole_draws_law() {
        let atoms = Standard::Empirical(Arc::new(Empirical::new(vec![0.5, 1.0, 1.0, 2.0, 2.0, 2.0, 3.5])));
        // The classes, the top read, and the block sizes to try (none: the pilot's).
        type Case = (Vec<(usize, Standard)>, usize, Vec<Vec<usize>>);
        let cases: Vec<Case> = vec![
            (
                vec![(50, law("exp:rate=1")), (50, law("exp:rate=0.5"))],
                51,
                vec![vec![], vec![1, 1], vec![3, 40]],
            ),
            (
                vec![
                    (5, law("exp:rate=1")),
                    (30, law("pareto:scale=0.3,shape=2.5")),
                    (5, law("shifted-exp:shift=0.2,rate=2")),
                ],
                39,
                vec![vec![], vec![1, 1, 1]],
            ),
            (
                vec![(20, atoms), (12, law("exp:rate=0.8"))],
                25,
                vec![vec![], vec![1, 1]],
            ),
        ];
        let trials = 20_000;
        for (classes, need, block_sizes) in cases {
            let mut laws = ClassLaws::from_laws(classes, false);
            let whole = moments(&laws, need, trials, 1, false);
            for sizes in block_sizes {
                if sizes.is_empty() {
                    laws.plan_blocks(true);
                } else {
                    laws.set_blocks(&sizes);
                }
                let partial = laws.blocks.iter().filter(|b| b.is_some()).count();
                assert!(partial > 0 || sizes.is_empty(), "{sizes:?}: some class has a block");
                let blocks = moments(&laws, need, trials, 2, true);
                for (r, (&(ma, va), &(mb, vb))) in whole.iter().zip(&blocks).enumerate() {
                    let se = ((va + vb) / trials as f64).sqrt();
                    assert!(
                        (ma - mb).abs() <= 5.0 * se,
                        "{sizes:?}, rank {r} of the top: whole {ma}, blocks {mb}, se {se}"
                    );
                }
            }
        }
    }

    /// The pilot gives each class a block between its share of the top and
    /// its size, fewer draws than n in all; a class all of whose times the
    /// top block reads, or of one worker, is drawn whole; no top, no blocks.
    #[test]
    fn blocks_are_sized_by_the_pilot() {
        let mut laws = ClassLaws::from_laws(vec![(50, law("exp:rate=1")), (50, law("exp:rate=0.5"))], false);
        laws.plan_blocks(true);
        let sizes: Vec<usize> = laws.blocks.iter().map(|b| 50 - b.as_ref().unwrap().lowest).collect();
        // About 19.6 ± 2.5 and 31.4 ± 2.5 of the top 51 (whole draws).
        assert!(
            (22..=30).contains(&sizes[0]) && (34..=42).contains(&sizes[1]),
            "{sizes:?}"
        );
        laws.plan_blocks(false);
        assert!(laws.blocks.is_empty());
        // 20 workers: the top block is all of them.
        let mut laws = ClassLaws::from_laws(vec![(10, law("exp:rate=1")), (10, law("exp:rate=0.5"))], false);
        laws.plan_blocks(true);
        assert!(laws.blocks.iter().all(Option::is_none));
        let mut laws = ClassLaws::from_laws(vec![(1, law("exp:rate=1")), (80, law("exp:rate=0.5"))], false);
        laws.plan_blocks(true);
        assert!(laws.blocks[0].is_none() && laws.blocks[1].is_some());
    }
}
