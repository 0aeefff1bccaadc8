//! A tournament tree of losers over the workers' next ticks, for the
//! asynchronous timeline whose workers each have exactly one tick queued
//! (K-batch-async without transfer times).
//!
//! Leaf w is worker w's tick; each internal node holds the worker that
//! lost the match played there, and the winner of the whole tree is kept
//! apart. So the winner is the tick a heap of the same ticks would pop
//! first (the ticks are distinct: each holds its worker). When the winner's
//! tick is replaced by its worker's next, that tick replays the matches on
//! its leaf's path to the root against the losers stored there: ⌈log₂ n⌉
//! comparisons on a path fixed by the leaf, each a select rather than a
//! branch, against a binary heap's two comparisons per level on a path
//! that depends on the keys, whose mispredicted branches took most of
//! K-batch-async's time at n = 5000. The nodes are worker indices (4
//! bytes), so the tree of 5000 workers stays in the first-level cache.

use super::Packed;

/// The ticks past the last worker (the leaves up to a power of two): after
/// every tick.
const NONE: Packed = Packed(u128::MAX);

/// The tree (module notes).
#[derive(Debug, Clone, Default)]
pub(in crate::engine::trial) struct Tournament {
    /// Node 0 holds the winner; node i (1 ≤ i < `leaves`) the loser of the
    /// match between its children 2i and 2i + 1, where node `leaves` + w
    /// is leaf w.
    nodes: Vec<u32>,
    /// Each leaf's tick: the workers', then [`NONE`].
    ticks: Vec<Packed>,
    /// The leaves: a power of two, at least the workers.
    leaves: usize,
    /// The winners of the matches, while the tree is built.
    winners: Vec<u32>,
}

impl Tournament {
    /// The tree of `ticks`, one per worker in worker order (`workers` of
    /// them, fewer than 2³²).
    pub(super) fn fill(&mut self, workers: usize, ticks: impl Iterator<Item = Packed>) {
        let leaves = workers.next_power_of_two();
        self.leaves = leaves;
        self.ticks.clear();
        self.ticks.extend(ticks.take(workers));
        self.ticks.resize(leaves, NONE);
        self.nodes.clear();
        self.nodes.resize(leaves, 0);
        self.winners.clear();
        self.winners.resize(leaves, 0);
        let leaf = |i: usize| (i - leaves) as u32;
        for node in (1..leaves).rev() {
            let child = |c: usize| if c >= leaves { leaf(c) } else { self.winners[c] };
            let (a, b) = (child(2 * node), child(2 * node + 1));
            let a_wins = self.ticks[a as usize] < self.ticks[b as usize];
            self.winners[node] = if a_wins { a } else { b };
            self.nodes[node] = if a_wins { b } else { a };
        }
        self.nodes[0] = if leaves == 1 { 0 } else { self.winners[1] };
    }

    /// The first tick.
    pub(super) fn first(&self) -> Packed {
        self.ticks[self.nodes[0] as usize]
    }

    /// The first tick's worker's tick becomes `tick`.
    pub(super) fn replace_first(&mut self, tick: Packed) {
        let w = self.nodes[0] as usize;
        self.ticks[w] = tick;
        let mut winner = w as u32;
        let mut node = (self.leaves + w) / 2;
        while node > 0 {
            let loser = self.nodes[node];
            let stays = self.ticks[winner as usize] < self.ticks[loser as usize];
            self.nodes[node] = if stays { loser } else { winner };
            winner = if stays { winner } else { loser };
            node /= 2;
        }
        self.nodes[0] = winner;
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The tree yields the ticks in a heap's order as each first tick
        /// is replaced by a later one of its worker, ties of time included.
        #[test]
        fn pops_in_a_heaps_order(
            workers in 1usize..40,
            keys in prop::collection::vec(0u64..50, 300),
        ) {
            let tick = |key: u64, w: usize| Packed(u128::from(key) << 64 | w as u128);
            let mut tree = Tournament::default();
            tree.fill(workers, (0..workers).map(|w| tick(keys[w], w)));
            let mut heap: BinaryHeap<Reverse<Packed>> = (0..workers).map(|w| Reverse(tick(keys[w], w))).collect();
            for &key in &keys[workers..] {
                let Reverse(first) = heap.pop().unwrap();
                prop_assert_eq!(tree.first(), first);
                let next = tick(key + (first.0 >> 64) as u64, first.0 as usize);
                tree.replace_first(next);
                heap.push(Reverse(next));
            }
        }
    }
}
