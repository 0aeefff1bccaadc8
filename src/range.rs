//! Integer lists for `--s`, `--m`, `--k` (and scenario keys): `A..B` (both ends included), a
//! comma list, or a mix (`0..4,10,20..22`); and lists of times for
//! `--timeout` (`0.5,1,2`).

/// Most values one list may hold (a guard in the spirit of hyperfine's `RangeStep`).
pub const MAX_VALUES: usize = 100_000;

/// A parsed list and the text it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntList {
    /// The values, in the order given, each once (a repeated value would
    /// repeat a configuration's row).
    pub values: Vec<usize>,
    /// The text as given, for the output's config.
    pub text: String,
}

fn number(s: &str) -> Result<usize, String> {
    let s = s.trim();
    s.parse::<usize>().map_err(|_| {
        if s.starts_with('-') {
            format!("`{s}` is negative; accepted: whole numbers >= 0, as A..B or a comma list")
        } else {
            format!(
                "`{s}` is not a whole number; accepted: A..B (both ends included) or a comma list, e.g. 0..50 or 1,2,4"
            )
        }
    })
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
        match item.split_once("..") {
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
        let v: f64 = item.parse().map_err(|_| {
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
