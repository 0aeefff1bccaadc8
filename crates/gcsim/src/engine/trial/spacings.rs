//! Sampling the whole sorted sample by Rényi's spacings, for messages that
//! take a constant time.
//!
//! Where messages take time, a configuration ends at its k-th arrival, and
//! the arrivals need every worker's finish time, not one order statistic.
//! With a constant transfer time and only k-of-n rules, which worker
//! finished where does not matter: on a dedicated link each arrival is the
//! finish time plus the same transfer, and a shared link serves the
//! messages in finish order. The whole sorted sample then serves, drawn
//! bottom up by Rényi's representation (David & Nagaraja 2003, §2.5),
//! E_(j) = E_(j−1) + Z_j/(n−j+1) with Z_j i.i.d. Exp(1): n draws and no
//! sort, and the arrivals come out sorted (the load model and the law are
//! increasing, the transfer the same for all), so neither the shared link's
//! queue nor a dedicated link's arrivals are sorted in the trial.

use super::*;

/// Whether `study`'s trials can draw the whole sorted sample by spacings
/// ([`Sampling::Spacings`]): i.i.d. workers of a `Standard` law (the
/// bootstrap from a trace among them) under a
/// monotone load, messages of a constant transfer time, the threshold
/// decoder, and only k-of-n rules (no frc groups, no strategy's timeline,
/// no per-worker loads), which read arrivals but not who sent them.
pub fn spacings_apply(study: &Study) -> bool {
    if study.parallel().is_some() {
        return false;
    }
    study.comm().transfers()
        && study.comm().comm_time().is_some()
        && study.decoder() == Decoder::Threshold
        && study.load_model().is_monotone()
        && !needs_identities(study)
        && study
            .schemes()
            .iter()
            .chain(std::iter::once(&study.baseline()))
            .all(|s| s.strategy().is_none() && matches!(s.rule(), Rule::KOfN(_)))
        && !stateful(study.workers())
        && Standard::of(study.workers()).is_some()
}

impl TrialPlan {
    /// One iteration whose worker times are the sorted sample, drawn by
    /// spacings on the trial's worker stream.
    pub(super) fn run_spacings(&self, seed: u64, trial: u64, scratch: &mut Scratch, out: &mut [f64]) {
        let mut rng = trial_rng(seed, trial);
        let mut e = 0.0;
        let standard = &self.order.standard;
        for (t, &w) in scratch.times.iter_mut().zip(&self.order.weights) {
            let z: f64 = Exp1.sample(&mut rng);
            e += z * w;
            *t = standard.apply(e);
        }
        let times = std::mem::take(&mut scratch.times);
        self.evaluate(&self.load_groups[0], &times, scratch, out);
        scratch.times = times;
    }
}
