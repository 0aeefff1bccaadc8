//! Trace files (`trace:path=FILE`, `replay:path=FILE`, `gcsim fit FILE`):
//! reading never panics or hangs, whatever the bytes; every error is one
//! line; an accepted trace is a complete steps × workers table of finite
//! positive times, and fitting laws to it returns a result or an error.
#![no_main]

use gcsim::trace::Trace;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // `trace:` and `replay:` read the file the same way (`Trace::from_file`,
    // which reads the bytes and calls this); they differ in how trials draw.
    let trace = match Trace::from_bytes("fuzz.csv", data) {
        Ok(trace) => trace,
        Err(e) => {
            let message = e.to_string();
            assert!(!message.contains('\n'), "a multi-line error: {message:?}");
            return;
        }
    };
    let (workers, steps) = (trace.workers(), trace.steps());
    assert!(workers >= 1 && steps >= 1);
    assert_eq!(trace.all().len(), workers * steps);
    assert!(trace.all().iter().all(|t| t.is_finite() && *t > 0.0));
    // Replay takes one step's times; trace bootstraps from all of them.
    for step in 0..steps {
        assert_eq!(trace.step(step).len(), workers);
    }
    // `gcsim fit` on the same file.
    if let Err(e) = gcsim::fit::fit_all(trace.all()) {
        let message = e.to_string();
        assert!(!message.contains('\n'), "a multi-line error: {message:?}");
    }
});
