//! `[[plan]]` tables: a `gcsim plan` search rerun from the scenario file,
//! its recommendation on the report page.
//!
//! ```toml
//! [[plan]]
//! label = "pick"                        # files: <label>.csv, <label>.json
//! schemes = ["uncoded", "frc", "crc"]   # the keys are `gcsim plan`'s flags,
//! objective = "p99"                     #   dashes written as underscores
//! max_load = 6
//! ```
//!
//! The file's cluster keys (n, dist, workers, load_model, unit_time, the
//! communication keys, the collective's keys and time_unit), trials,
//! iterations and seed apply where the table does not set them, and so do
//! the keys of a pipeline job (`parallel`, `microbatches`, ...): the plan
//! then searches the schemes across that layout's replicas. The flags are
//! checked by the command line's own parser before anything runs (see the
//! binary's scenario job).

use toml::{Spanned, Table, Value};

use super::source::{Source, Taken};
use super::{ScenarioError, result_file};
use gcsim::export::Format;

/// Keys the file gives every `[[plan]]` that does not set them.
const INHERITED: [&str; 20] = [
    "n",
    "dist",
    "workers",
    "shuffle_placement",
    "comm_time",
    "comm_dist",
    "link",
    "decode_time",
    "load_model",
    "unit_time",
    "trials",
    "iterations",
    "trace_bootstrap",
    "seed",
    "aggregation",
    "latency",
    "bandwidth",
    "gradient_size",
    "buckets",
    "time_unit",
];

/// Flags of `gcsim plan` that a `[[plan]]` cannot take: the scenario decides
/// where and how the results are written.
const REFUSED: [&str; 6] = ["format", "out", "columns", "shard", "threads", "quiet"];

/// One `[[plan]]` table: the `gcsim plan` arguments it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioPlan {
    /// Names the output files.
    pub label: String,
    /// The arguments after `gcsim plan`, inherited keys first.
    pub args: Vec<String>,
    /// The table's first line, for errors the command line's parser finds.
    pub line: usize,
}

impl ScenarioPlan {
    /// The formats of the result files.
    pub const RESULT_FORMATS: [Format; 2] = [Format::Csv, Format::Json];

    /// The name of the result file in `format`: `<label>.<format>`.
    pub fn result_file(&self, format: Format) -> String {
        result_file(&self.label, format)
    }

    /// Every file the plan writes.
    pub fn outputs(&self) -> Vec<String> {
        Self::RESULT_FORMATS.map(|f| self.result_file(f)).to_vec()
    }
}

/// The flag of a key: `max_load` → `--max-load`; `schemes` (as `[[study]]`
/// spells it) → `--scheme`.
fn flag(key: &str) -> String {
    let key = if key == "schemes" { "scheme" } else { key };
    format!("--{}", key.replace('_', "-"))
}

/// `--flag value` for one key; a repeated flag for `workers`, a comma list
/// for any other array, the bare flag for `true`, nothing for `false`.
fn push_key(args: &mut Vec<String>, key: &str, value: &Value) -> Result<(), String> {
    let scalar = |v: &Value| match v {
        Value::String(s) => Ok(s.clone()),
        Value::Integer(i) => Ok(i.to_string()),
        Value::Float(f) => Ok(f.to_string()),
        _ => Err(format!(
            "key `{key}`: accepted: a string, a number, true/false, or an array of strings or numbers"
        )),
    };
    match value {
        Value::Boolean(true) => args.push(flag(key)),
        Value::Boolean(false) => {}
        Value::Array(items) if key == "workers" => {
            for item in items {
                args.extend([flag(key), scalar(item)?]);
            }
        }
        Value::Array(items) => {
            let items = items.iter().map(scalar).collect::<Result<Vec<_>, _>>()?;
            args.extend([flag(key), items.join(",")]);
        }
        other => args.extend([flag(key), scalar(other)?]),
    }
    Ok(())
}

/// One `[[plan]]` table, its label and files recorded in `taken`; `top` is
/// the file's top-level keys, `trials` the `--trials` that overrides them
/// and the table's.
pub(super) fn plan(
    src: &Source,
    top: &Table,
    table: &Spanned<Table>,
    trials: Option<u64>,
    taken: &mut Taken,
) -> Result<ScenarioPlan, ScenarioError> {
    let span = || Some(table.span());
    let t = table.get_ref();
    let label = match t.get("label") {
        Some(Value::String(l)) => Spanned::new(table.span(), l.clone()),
        Some(_) => return src.err(span(), "[[plan]]: key `label`: accepted: a string"),
        None => return src.err(span(), "[[plan]]: missing field `label`"),
    };
    let label = src.label(&label, "plan", taken)?;
    let owner = format!("plan `{label}`");
    let mut args = Vec::new();
    let given = |k: &str| t.contains_key(k) || (k == "trials" && trials.is_some());
    if let Some(trials) = trials {
        args.extend(["--trials".to_string(), trials.to_string()]);
    }
    for key in INHERITED.iter().chain(&super::parallel::KEYS).filter(|k| !given(k)) {
        if let Some(value) = top.get(*key) {
            push_key(&mut args, key, value).or_else(|e| src.err(span(), format!("{owner}: {e}")))?;
        }
    }
    for (key, value) in t
        .iter()
        .filter(|(k, _)| k.as_str() != "label" && !(k.as_str() == "trials" && trials.is_some()))
    {
        if REFUSED.contains(&key.as_str()) {
            return src.err(
                span(),
                format!(
                    "{owner}: key `{key}`: a [[plan]] writes {label}.csv and {label}.json; its table goes to the screen"
                ),
            );
        }
        if !key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return src.err(
                span(),
                format!(
                    "{owner}: key `{key}`: the keys are `gcsim plan`'s flags, written with underscores (e.g. max_load)"
                ),
            );
        }
        push_key(&mut args, key, value).or_else(|e| src.err(span(), format!("{owner}: {e}")))?;
    }
    for format in ScenarioPlan::RESULT_FORMATS {
        src.claim(taken, &result_file(&label, format), &owner, "label", table.span())?;
    }
    Ok(ScenarioPlan {
        label,
        args,
        line: src.line_of(table.span().start),
    })
}
