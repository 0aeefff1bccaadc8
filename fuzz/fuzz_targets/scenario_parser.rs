//! Scenario files: validation never panics or hangs, whatever the text, and
//! every error is one line.
#![no_main]

use std::path::Path;

use gcsim_figures::scenario::Scenario;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = Scenario::from_str(Path::new("fuzz.toml"), text, None) {
        let message = e.to_string();
        assert!(!message.contains('\n'), "a multi-line error: {message:?}");
    }
});
