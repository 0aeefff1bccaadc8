//! Reading `--aggregation` lists and bandwidths with their units.

use super::Algorithm;

/// The names `--aggregation` accepts.
pub const NAMES: &str = "master, ring, tree, halving-doubling, hierarchical:gpus-per-node=G,intra-bandwidth=B";

/// A bandwidth in bytes per second: a number with an optional unit of
/// bytes (`B/s`, `kB/s`, `MB/s`, `GB/s`, `TB/s`, `KiB/s` … `TiB/s`) or of
/// bits (`bit/s`, `kbit/s`, `Mbit/s`, `Gbit/s`, `Tbit/s`, also written
/// `Gb/s` or `Gbps`), e.g. `25GB/s`, `100Gbit/s`; a bare number is bytes
/// per second. Decimal prefixes are powers of 1000.
pub fn parse_bandwidth(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim();
    let accepted = "accepted: a number > 0 of bytes per second, optionally with B/s, kB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, or bits: bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s (Gb/s, Gbps) (e.g. 25GB/s, 100Gbit/s)";
    let factor = match bandwidth_unit(unit) {
        Some(f) => f,
        None => return Err(format!("`{t}`: unknown unit `{unit}`; {accepted}")),
    };
    match crate::range::real(number) {
        Some(x) if x.is_finite() && x > 0.0 && (x * factor).is_finite() => Ok(x * factor),
        _ => Err(format!("`{t}` is not a bandwidth; {accepted}")),
    }
}

/// Bytes per second in one `unit`; lower-case `b` is a bit, upper-case a byte.
fn bandwidth_unit(unit: &str) -> Option<f64> {
    if unit.is_empty() {
        return Some(1.0);
    }
    let (prefix, rest) = match unit.chars().next()? {
        c @ ('k' | 'K' | 'M' | 'G' | 'T') => (Some(c.to_ascii_uppercase()), &unit[1..]),
        _ => (None, unit),
    };
    let (binary, rest) = match rest.strip_prefix('i') {
        Some(r) if prefix.is_some() => (true, r),
        _ => (false, rest),
    };
    let bits = match rest {
        "B/s" | "Bps" => false,
        "b/s" | "bit/s" | "bps" if !binary => true,
        _ => return None,
    };
    let power = match prefix {
        None => 0,
        Some('K') => 1,
        Some('M') => 2,
        Some('G') => 3,
        Some(_) => 4,
    };
    let base: f64 = if binary { 1024.0 } else { 1000.0 };
    Some(base.powi(power) / if bits { 8.0 } else { 1.0 })
}

/// `--aggregation`: one name or a comma list of names (`ring,tree`); None
/// stands for `master`. The keys of `hierarchical:` continue the list item
/// they follow, so `hierarchical:gpus-per-node=8,intra-bandwidth=300GB/s,ring`
/// is two items.
pub fn parse_aggregations(text: &str) -> Result<Vec<Option<Algorithm>>, String> {
    let mut items: Vec<String> = Vec::new();
    for token in text.split(',') {
        let token = token.trim();
        match items.last_mut() {
            Some(last) if token.contains('=') && !token.contains(':') && last.contains(':') => {
                last.push(',');
                last.push_str(token);
            }
            _ => items.push(token.to_string()),
        }
    }
    let parsed: Vec<Option<Algorithm>> = items.iter().map(|i| parse_one(i)).collect::<Result<_, _>>()?;
    for (i, a) in parsed.iter().enumerate() {
        if parsed[..i].contains(a) {
            return Err(format!("`{}` is given twice", items[i]));
        }
    }
    Ok(parsed)
}

fn parse_one(item: &str) -> Result<Option<Algorithm>, String> {
    let (name, keys) = match item.split_once(':') {
        Some((n, k)) => (n.trim(), Some(k)),
        None => (item.trim(), None),
    };
    let algorithm = match name {
        "master" => None,
        "ring" => Some(Algorithm::Ring),
        "tree" => Some(Algorithm::Tree),
        "halving-doubling" => Some(Algorithm::HalvingDoubling),
        "hierarchical" => return hierarchical(keys.unwrap_or("")).map(Some),
        "" => return Err(format!("an empty name; accepted: {NAMES}")),
        other => return Err(format!("unknown aggregation `{other}`; accepted: {NAMES}")),
    };
    match keys {
        Some(k) => Err(format!("`{name}` takes no keys (`{k}`); only hierarchical has keys")),
        None => Ok(algorithm),
    }
}

fn hierarchical(keys: &str) -> Result<Algorithm, String> {
    let (mut gpus, mut intra) = (None, None);
    for pair in keys.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("hierarchical: `{pair}` is not key=value"))?;
        match key.trim() {
            "gpus-per-node" => {
                let g = crate::range::whole(value)
                    .ok()
                    .filter(|g| (1..=1_000_000).contains(g))
                    .map(|g| g as usize)
                    .ok_or_else(|| {
                        format!("hierarchical: gpus-per-node `{}` is out of range; accepted: a whole number from 1 to 1000000", value.trim())
                    })?;
                gpus = Some(g);
            }
            "intra-bandwidth" => {
                intra = Some(parse_bandwidth(value).map_err(|e| format!("hierarchical: intra-bandwidth {e}"))?)
            }
            other => {
                return Err(format!(
                    "hierarchical: unknown key `{other}`; accepted: gpus-per-node, intra-bandwidth"
                ));
            }
        }
    }
    match (gpus, intra) {
        (Some(gpus_per_node), Some(intra_bandwidth)) => Ok(Algorithm::Hierarchical {
            gpus_per_node,
            intra_bandwidth,
        }),
        _ => Err(
            "hierarchical needs its node: give hierarchical:gpus-per-node=G,intra-bandwidth=B (e.g. hierarchical:gpus-per-node=8,intra-bandwidth=300GB/s)"
                .to_string(),
        ),
    }
}
