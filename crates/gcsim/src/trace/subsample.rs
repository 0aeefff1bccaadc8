//! The steps the two-state model (`hmm.rs`) is fitted on: every step of a
//! trace of at most [`MAX_FIT_TIMES`] (worker, step) times; of a larger
//! one, evenly spaced blocks of consecutive steps holding about that many.
//!
//! Baum–Welch costs O(observations) per iteration, from three starts, and
//! each of its [`RESAMPLES`](super::hmm::RESAMPLES) bootstrap refits costs
//! as much again: fitting every time of a 50 MB trace (64 workers × 44 000
//! steps) takes minutes where reading the file takes seconds, 65 536 times
//! ten times as long as reading it, 32 768 about five times. The model's
//! five parameters are pinned down well within 32 768 times (the recovery
//! tests fit 64 workers × 500 steps); the estimates and standard errors
//! are then those of the subsample, honest for it and conservative for the
//! whole trace. Blocks keep each worker's dependence across consecutive
//! steps, which persistence is about; spreading them over the trace keeps
//! a drift in the cluster from being missed. Everything else `gcsim trace`
//! reports (per-worker statistics, the slow-state shares, the base law)
//! reads every step.

use std::ops::Range;

/// The most (worker, step) times the model is fitted on.
pub const MAX_FIT_TIMES: usize = 1 << 15;

/// The fewest steps a subsample keeps, however many workers.
const MIN_FIT_STEPS: usize = super::analysis::FEW_STEPS;

/// The shortest block: long enough to hold many changes of state at any
/// persistence the estimates can resolve.
const MIN_BLOCK_STEPS: usize = 256;

/// The most blocks.
const MAX_BLOCKS: usize = 16;

/// The blocks of steps the model is fitted on, in order: `0..steps` when the
/// trace has at most [`MAX_FIT_TIMES`] times; otherwise up to [`MAX_BLOCKS`]
/// blocks of at least [`MIN_BLOCK_STEPS`] consecutive steps (fewer where
/// the whole subsample is shorter), block b starting at step ⌊b·steps/B⌋,
/// together about max(MAX_FIT_TIMES / workers, 100) steps.
pub(crate) fn fit_blocks(workers: usize, steps: usize) -> Vec<Range<usize>> {
    if workers.saturating_mul(steps) <= MAX_FIT_TIMES {
        return std::iter::once(0..steps).collect();
    }
    let kept = (MAX_FIT_TIMES / workers).max(MIN_FIT_STEPS).min(steps);
    let blocks = (kept / MIN_BLOCK_STEPS).clamp(1, MAX_BLOCKS);
    let len = kept / blocks;
    (0..blocks)
        .map(|b| {
            let start = b * steps / blocks;
            start..start + len
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_traces_are_fitted_whole() {
        for (workers, steps) in [(64, 512), (64, 500), (8, 32)] {
            assert_eq!(
                fit_blocks(workers, steps),
                std::iter::once(0..steps).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn large_traces_are_fitted_on_spread_blocks_within_the_bound() {
        for (workers, steps) in [(64, 44_406), (64, 513), (8, 1_000_000), (2000, 500), (1, 10_000_000)] {
            let blocks = fit_blocks(workers, steps);
            let kept: usize = blocks.iter().map(|b| b.len()).sum();
            assert!(
                kept * workers <= MAX_FIT_TIMES.max(MIN_FIT_STEPS * workers),
                "{workers} x {steps}"
            );
            assert!(kept * workers > MAX_FIT_TIMES / 2 || kept >= MIN_FIT_STEPS.min(steps));
            assert!(blocks.len() <= MAX_BLOCKS);
            for pair in blocks.windows(2) {
                assert!(pair[0].end <= pair[1].start, "{blocks:?}");
            }
            assert!(blocks.last().unwrap().end <= steps);
            if blocks.len() > 1 {
                assert!(blocks.iter().all(|b| b.len() >= MIN_BLOCK_STEPS), "{blocks:?}");
                // Spread: the last block starts in the last B-th of the trace.
                assert!(blocks.last().unwrap().start >= steps - steps / blocks.len() - 1);
            }
        }
        assert_eq!(fit_blocks(64, 44_406), vec![0..256, 22_203..22_459]);
    }
}
