//! `--dist` strings: parsing never panics, and every accepted law
//! round-trips through its canonical form to an equal value.
#![no_main]

use gcsim::dist::Dist;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(dist) = text.parse::<Dist>() {
        let canonical = dist.to_string();
        assert_eq!(canonical.parse::<Dist>(), Ok(dist), "{text:?} -> {canonical:?}");
        // The exact functions the analytic layer calls must not panic either.
        let _ = (dist.mean(), dist.quantile(0.5), dist.cdf(dist.quantile(0.99)));
    }
    let _ = gcsim::range::parse(text);
    let _ = text.parse::<gcsim::scheme::SchemeKind>();
});
