//! Integer lists for `--s`, `--m`, `--k` (and scenario keys): `A..B` (both ends included), a
//! comma list, or a mix (`0..4,10,20..22`); lists of times for
//! `--timeout` (`0.5,1,2`); and whole numbers as people write them
//! (`1000000`, `1_000_000`, `1e6`), which every count on the command line
//! takes.

/// Most values one list may hold (a guard in the spirit of hyperfine's `RangeStep`).
pub(crate) const MAX_VALUES: usize = 100_000;

/// A parsed list and the text it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntList {
    /// The values, in the order given, each once (a repeated value would
    /// repeat a configuration's row).
    pub values: Vec<usize>,
    /// The text as given, for the output's config.
    pub text: String,
}

/// Why a text is not a whole number that fits in a `u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotWhole {
    /// It starts with `-`.
    Negative,
    /// A number, but not a whole one (`1.5`, `1e-3`), or not a number.
    NotWhole,
    /// A whole number above `u64::MAX`.
    TooLarge,
}

/// A whole number >= 0 as people write it: digits with `_` between them
/// (`1_000_000`), and a decimal point or an exponent (`1e6`, `2.5e3`) as
/// long as the value is whole. Exact: the digits are never rounded through
/// a float, so `1.5e0` is refused and `18446744073709551615` kept.
pub fn whole(text: &str) -> Result<u64, NotWhole> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(NotWhole::Negative);
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // Underscores only between digits, as Rust writes them.
    let grouped = |part: &str| {
        part.chars().all(|c| c.is_ascii_digit() || c == '_') && !part.starts_with('_') && !part.ends_with('_')
    };
    if int.is_empty() && frac.is_empty() || !grouped(int) || !grouped(frac) {
        return Err(NotWhole::NotWhole);
    }
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(NotWhole::NotWhole);
            }
            // Past 10^40 the value is either 0 or too large: say so below.
            let magnitude = digits.parse::<i64>().unwrap_or(i64::MAX).min(1_000);
            if e.starts_with('-') { -magnitude } else { magnitude }
        }
    };
    let digits: String = int.chars().chain(frac.chars()).filter(|&c| c != '_').collect();
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(0);
    }
    // value = digits × 10^shift.
    let shift = exponent - frac.chars().filter(|&c| c != '_').count() as i64;
    let digits = if shift < 0 {
        let cut = (-shift) as usize;
        let zeros = digits.len() - digits.trim_end_matches('0').len();
        if zeros < cut {
            return Err(NotWhole::NotWhole);
        }
        &digits[..digits.len() - cut]
    } else {
        digits
    };
    let shift = shift.max(0) as usize;
    if digits.len() + shift > 20 {
        return Err(NotWhole::TooLarge);
    }
    let value = digits.parse::<u128>().expect("at most 20 digits") * 10u128.pow(shift as u32);
    u64::try_from(value).map_err(|_| NotWhole::TooLarge)
}

/// A number as people write it, the way every float flag and key reads
/// one: surrounding blanks ignored (as [`whole`] ignores them), `_` allowed
/// between digits (`1_000.5`), a decimal point and an exponent (`2.5e-3`),
/// and `inf`/`nan` as Rust spells them, which the parameter's range check
/// then refuses with its range. `None` for anything else (`0x10`, ``, `1,5`).
pub fn real(text: &str) -> Option<f64> {
    let t = text.trim();
    let bytes = t.as_bytes();
    let between_digits =
        |i: usize| i > 0 && i + 1 < bytes.len() && bytes[i - 1].is_ascii_digit() && bytes[i + 1].is_ascii_digit();
    if (0..bytes.len()).any(|i| bytes[i] == b'_' && !between_digits(i)) {
        return None;
    }
    t.replace('_', "").parse::<f64>().ok()
}

fn number(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let accepted = "accepted: whole numbers >= 0, as A..B (both ends included) or a comma list, e.g. 0..50 or 1,2,4";
    match whole(s).map(usize::try_from) {
        Ok(Ok(v)) => Ok(v),
        Err(NotWhole::Negative) => Err(format!("`{s}` is negative; {accepted}")),
        Ok(Err(_)) | Err(NotWhole::TooLarge) => Err(format!("`{s}` is too large; {accepted}")),
        Err(NotWhole::NotWhole) => Err(format!("`{s}` is not a whole number{}; {accepted}", range_hint(s))),
    }
}

/// ` (did you mean A..B?)` for `A-B`, `A:B`, `A...B` or `A..=B`: gcsim's
/// ranges are written `A..B` and include both ends.
fn range_hint(item: &str) -> String {
    for sep in ["..=", "...", "-", ":"] {
        if let Some((a, b)) = item.split_once(sep)
            && whole(a).is_ok()
            && whole(b).is_ok()
        {
            return format!(" (did you mean {}..{}?)", a.trim(), b.trim());
        }
    }
    String::new()
}

/// Parses `A..B`, `a,b,c` or a mix of both.
pub fn parse(text: &str) -> Result<IntList, String> {
    let mut values = Vec::new();
    for item in text.split(',') {
        if item.trim().is_empty() {
            return Err(format!(
                "`{text}` has an empty item; accepted: A..B or a comma list, e.g. 0..50 or 1,2,4"
            ));
        }
        match item.split_once("..").filter(|(_, b)| !b.starts_with(['.', '='])) {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if a > b {
                    return Err(format!(
                        "`{}` is empty: the start {a} exceeds the end {b}; write {b}..{a}",
                        item.trim()
                    ));
                }
                let count = (b - a).saturating_add(1);
                if values.len().saturating_add(count) > MAX_VALUES {
                    return Err(format!(
                        "`{text}` has more than {MAX_VALUES} values, the limit; narrow the range"
                    ));
                }
                values.extend(a..=b);
            }
            None => values.push(number(item)?),
        }
    }
    if values.len() > MAX_VALUES {
        return Err(format!(
            "`{text}` has more than {MAX_VALUES} values, the limit; narrow the range"
        ));
    }
    let mut seen = std::collections::HashSet::with_capacity(values.len());
    values.retain(|v| seen.insert(*v));
    Ok(IntList {
        values,
        text: text.to_string(),
    })
}

/// A parsed list of times (finite numbers >= 0) and the text it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeList {
    /// The values, in the order given, each once.
    pub values: Vec<f64>,
    /// The text as given, for the output's config.
    pub text: String,
}

/// Parses a comma list of times, each a finite number >= 0 (`0.5,1,2.5`).
pub fn parse_times(text: &str) -> Result<TimeList, String> {
    let mut values: Vec<f64> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for item in text.split(',') {
        let item = item.trim();
        let v: f64 = real(item).ok_or_else(|| {
            if item.is_empty() {
                format!("`{text}` has an empty item; accepted: a comma list of numbers >= 0, e.g. 0.5,1,2")
            } else {
                format!("`{item}` is not a number; accepted: a comma list of numbers >= 0, e.g. 0.5,1,2")
            }
        })?;
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!(
                "`{item}` is out of range; accepted: finite numbers >= 0, e.g. 0.5,1,2"
            ));
        }
        if values.len() >= MAX_VALUES {
            return Err(format!(
                "`{text}` has more than {MAX_VALUES} values, the limit; narrow the list"
            ));
        }
        // −0 is 0 (`+ 0.0`), so that it is the same value.
        let v = v + 0.0;
        if seen.insert(v.to_bits()) {
            values.push(v);
        }
    }
    Ok(TimeList {
        values,
        text: text.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_lists() {
        assert_eq!(parse_times("0.5, 1,2,1").unwrap().values, vec![0.5, 1.0, 2.0]);
        assert_eq!(parse_times("0").unwrap().values, vec![0.0]);
        assert_eq!(parse_times("-0,0").unwrap().values, vec![0.0]);
        let many: Vec<String> = (0..MAX_VALUES).map(|i| i.to_string()).collect();
        assert_eq!(parse_times(&many.join(",")).unwrap().values.len(), MAX_VALUES);
        let over = many.join(",") + ",0.5";
        assert!(parse_times(&over).unwrap_err().contains("limit"));
        assert!(parse_times("1,,2").unwrap_err().contains("empty item"));
        assert!(parse_times("-1").unwrap_err().contains("out of range"));
        assert!(parse_times("inf").unwrap_err().contains("out of range"));
        assert!(parse_times("NaN").unwrap_err().contains("out of range"));
        assert!(parse_times("1..3").unwrap_err().contains("not a number"));
    }

    #[test]
    fn ranges_and_lists() {
        assert_eq!(parse("0..3").unwrap().values, vec![0, 1, 2, 3]);
        assert_eq!(parse("5").unwrap().values, vec![5]);
        assert_eq!(parse("1,4, 9").unwrap().values, vec![1, 4, 9]);
        assert_eq!(parse("0..1,7").unwrap().values, vec![0, 1, 7]);
        assert_eq!(parse("2..2").unwrap().values, vec![2]);
        // Repeats are dropped, first occurrence kept.
        assert_eq!(parse("1,1,2,0..2").unwrap().values, vec![1, 2, 0]);
    }

    #[test]
    fn whole_numbers_as_people_write_them() {
        for (text, value) in [
            ("1000000", 1_000_000),
            ("1_000_000", 1_000_000),
            ("1e6", 1_000_000),
            ("1E6", 1_000_000),
            ("1e+6", 1_000_000),
            ("2.5e3", 2500),
            ("2.50e1", 25),
            ("1.0", 1),
            ("+7", 7),
            (" 12 ", 12),
            ("0", 0),
            ("0e999", 0),
            ("00.000", 0),
            ("1e19", 10_000_000_000_000_000_000),
            ("18446744073709551615", u64::MAX),
            ("18_446_744_073_709_551_615", u64::MAX),
            ("1844674407370955161.5e1", u64::MAX),
            ("1200e-2", 12),
        ] {
            assert_eq!(whole(text), Ok(value), "{text}");
        }
        for (text, why) in [
            ("1.5e0", NotWhole::NotWhole),
            ("1.5", NotWhole::NotWhole),
            ("1e-3", NotWhole::NotWhole),
            ("1250e-2", NotWhole::NotWhole),
            ("1e", NotWhole::NotWhole),
            ("e5", NotWhole::NotWhole),
            (".", NotWhole::NotWhole),
            ("", NotWhole::NotWhole),
            ("_1", NotWhole::NotWhole),
            ("1_", NotWhole::NotWhole),
            ("1_e3", NotWhole::NotWhole),
            ("1e_3", NotWhole::NotWhole),
            ("inf", NotWhole::NotWhole),
            ("NaN", NotWhole::NotWhole),
            ("0x10", NotWhole::NotWhole),
            ("1 000", NotWhole::NotWhole),
            ("-1", NotWhole::Negative),
            ("-1e3", NotWhole::Negative),
            ("18446744073709551616", NotWhole::TooLarge),
            ("1e20", NotWhole::TooLarge),
            ("1e99999999999999999999", NotWhole::TooLarge),
        ] {
            assert_eq!(whole(text), Err(why), "{text}");
        }
    }

    #[test]
    fn lists_take_whole_numbers_as_people_write_them() {
        assert_eq!(parse("1e3,1_001..1002").unwrap().values, vec![1000, 1001, 1002]);
        assert!(parse("1.5").unwrap_err().contains("not a whole number"));
        assert!(parse("1e30").unwrap_err().contains("too large"));
    }

    #[test]
    fn other_range_syntaxes_get_a_hint() {
        for text in ["0-50", "0:50", "0...50", "0..=50", " 0 - 50 "] {
            let err = parse(text).unwrap_err();
            assert!(err.contains("(did you mean 0..50?)"), "{text}: {err}");
        }
        assert!(!parse("x-y").unwrap_err().contains("did you mean"));
    }

    #[test]
    fn errors() {
        assert!(parse("5..2").unwrap_err().contains("start 5 exceeds the end 2"));
        assert!(parse("-1").unwrap_err().contains("negative"));
        assert!(parse("x").unwrap_err().contains("not a whole number"));
        assert!(parse("").unwrap_err().contains("empty item"));
        assert!(parse("1,,2").unwrap_err().contains("empty item"));
        assert!(parse("0..100000000").unwrap_err().contains("limit"));
        assert!(parse("0..18446744073709551615").unwrap_err().contains("limit"));
    }
}
