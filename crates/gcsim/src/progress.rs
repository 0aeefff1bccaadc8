//! The observer of a long computation's progress, in a module of its own
//! so that every module that reports progress (the engine, the trace
//! analysis) can use it without importing the others.

/// Observer of a run's progress, called once per batch of trials (or per
/// costly step: a decoding, a model fit), never per cheap trial
/// (criterion's `Report` pattern). Every method has a no-op default.
pub trait Progress: Sync {
    /// A pass over `trials` trials begins (pass 1 is the main run).
    fn pass(&self, _pass: u32, _trials: u64) {}
    /// `trials` more trials are done.
    fn advance(&self, _trials: u64) {}
    /// The run is over.
    fn finish(&self) {}
}

/// A [`Progress`] that shows nothing.
pub struct Silent;

impl Progress for Silent {}
