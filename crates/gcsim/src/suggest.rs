//! "Did you mean": the accepted name nearest a misspelt one. Names are
//! compared as clap compares flags and values (Jaro similarity above 0.7,
//! strsim's `jaro`), case aside, and a name that begins with an accepted
//! one (`exponential` for `exp`) counts as near.

/// The name of `accepted` nearest `given`, if any is near enough; the
/// first of equally near names.
pub fn nearest<'a>(given: &str, accepted: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let given = given.trim().to_ascii_lowercase();
    if given.is_empty() {
        return None;
    }
    let mut best: Option<(f64, &str)> = None;
    for name in accepted {
        let mut score = strsim::jaro(&given, name);
        // A longer spelling of an accepted name, or a clipped one.
        if name.len() >= 3 && given.starts_with(name) || given.len() >= 3 && name.starts_with(given.as_str()) {
            score = score.max(0.9);
        }
        if score > 0.7 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, name));
        }
    }
    best.map(|(_, name)| name)
}

/// ` (did you mean `NAME`?)` for [`nearest`], or nothing.
pub(crate) fn did_you_mean<'a>(given: &str, accepted: impl IntoIterator<Item = &'a str>) -> String {
    nearest(given, accepted).map_or_else(String::new, |name| format!(" (did you mean `{name}`?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAWS: [&str; 5] = ["exp", "shifted-exp", "pareto", "lognormal", "weibull"];

    #[test]
    fn near_names_are_found() {
        assert_eq!(nearest("exponential", LAWS), Some("exp"));
        assert_eq!(nearest("Exponential", LAWS), Some("exp"));
        assert_eq!(nearest("log-normal", LAWS), Some("lognormal"));
        assert_eq!(nearest("weibul", LAWS), Some("weibull"));
        assert_eq!(nearest("shifted_exp", LAWS), Some("shifted-exp"));
        assert_eq!(nearest("paerto", LAWS), Some("pareto"));
        assert_eq!(nearest("crcc", ["uncoded", "frc", "crc", "mds"]), Some("crc"));
    }

    #[test]
    fn far_names_are_not() {
        assert_eq!(nearest("gauss", LAWS), None);
        assert_eq!(nearest("", LAWS), None);
        assert_eq!(nearest("zipf", LAWS), None);
        assert_eq!(did_you_mean("gauss", LAWS), "");
        assert_eq!(did_you_mean("expo", LAWS), " (did you mean `exp`?)");
    }
}
