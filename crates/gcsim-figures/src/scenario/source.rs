//! The scenario file as text: errors placed on their line, and the keys
//! that `[[study]]` and `[[train]]` tables share (the cluster, the schemes and
//! their parameter lists, the label and the output files) read once for
//! both.

use std::path::Path;

use toml::Spanned;

use super::{ListValue, ScenarioError, TimesValue, safe_name};
use gcsim::comm::{Comm, CommError, Link};
use gcsim::dist::Dist;
use gcsim::load::LoadModel;
use gcsim::param::Param;
use gcsim::range::{self, IntList, TimeList};
use gcsim::scheme::SchemeKind;
use gcsim::sweep::{self, Expanded, Ranges, SweepError};
use gcsim::workers::{self, Workers};

/// The scenario's text and where it came from.
pub(super) struct Source<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

/// The cluster keys of one level (the file, or a table), each `None`
/// where that level does not set it.
pub(super) struct ClusterKeys<'a> {
    pub(super) n: Option<&'a Spanned<usize>>,
    pub(super) dist: Option<&'a Spanned<String>>,
    pub(super) workers: Option<&'a Spanned<Vec<String>>>,
    pub(super) shuffle_placement: Option<&'a Spanned<bool>>,
    pub(super) comm_time: Option<&'a Spanned<f64>>,
    pub(super) comm_dist: Option<&'a Spanned<String>>,
    pub(super) link: Option<&'a Spanned<String>>,
    pub(super) decode_time: Option<&'a Spanned<f64>>,
    pub(super) load_model: Option<&'a Spanned<String>>,
    pub(super) unit_time: Option<f64>,
}

/// The [`ClusterKeys`] of a parsed table or file whose `n` is `$n`.
macro_rules! cluster_keys {
    ($t:expr, $n:expr) => {
        $crate::scenario::source::ClusterKeys {
            n: $n,
            dist: $t.dist.as_ref(),
            workers: $t.workers.as_ref(),
            shuffle_placement: $t.shuffle_placement.as_ref(),
            comm_time: $t.comm_time.as_ref(),
            comm_dist: $t.comm_dist.as_ref(),
            link: $t.link.as_ref(),
            decode_time: $t.decode_time.as_ref(),
            load_model: $t.load_model.as_ref(),
            unit_time: $t.unit_time,
        }
    };
}
pub(super) use cluster_keys;

/// The [`GridKeys`] of a parsed table.
macro_rules! grid_keys {
    ($t:expr) => {
        $crate::scenario::source::GridKeys {
            schemes: &$t.schemes,
            s: &$t.s,
            m: &$t.m,
            k: &$t.k,
            d: &$t.d,
            timeout: &$t.timeout,
            speculate_after: $t.speculate_after,
            speculate_factor: $t.speculate_factor,
            parts: &$t.parts,
            p: &$t.p,
            q: &$t.q,
        }
    };
}
pub(super) use grid_keys;

/// A table that simulates schemes on a cluster (`[[study]]`, `[[train]]`):
/// its label, its schemes and their parameter lists ([`GridKeys`]), its
/// cluster keys ([`ClusterKeys`]) in that order, then its own keys.
macro_rules! scheme_table {
    ($(#[$meta:meta])* $vis:vis struct $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        $vis struct $name {
            label: toml::Spanned<String>,
            schemes: toml::Spanned<Vec<String>>,
            s: Option<toml::Spanned<$crate::scenario::ListValue>>,
            m: Option<toml::Spanned<$crate::scenario::ListValue>>,
            k: Option<toml::Spanned<$crate::scenario::ListValue>>,
            d: Option<toml::Spanned<$crate::scenario::ListValue>>,
            timeout: Option<toml::Spanned<$crate::scenario::TimesValue>>,
            speculate_after: Option<f64>,
            speculate_factor: Option<f64>,
            parts: Option<toml::Spanned<$crate::scenario::ListValue>>,
            p: Option<toml::Spanned<$crate::scenario::ListValue>>,
            q: Option<toml::Spanned<$crate::scenario::ListValue>>,
            #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
            n: Option<toml::Spanned<usize>>,
            dist: Option<toml::Spanned<String>>,
            workers: Option<toml::Spanned<Vec<String>>>,
            shuffle_placement: Option<toml::Spanned<bool>>,
            comm_time: Option<toml::Spanned<f64>>,
            comm_dist: Option<toml::Spanned<String>>,
            link: Option<toml::Spanned<String>>,
            decode_time: Option<toml::Spanned<f64>>,
            load_model: Option<toml::Spanned<String>>,
            unit_time: Option<f64>,
            $($(#[$fmeta])* $field: $ty,)*
        }
    };
}
pub(super) use scheme_table;

/// What a table's cluster keys, over the file's, make.
pub(super) struct Cluster {
    pub(super) n: usize,
    pub(super) workers: Workers,
    pub(super) model: LoadModel,
    pub(super) comm: Comm,
}

/// The schemes of a table and their parameter lists.
pub(super) struct GridKeys<'a> {
    pub(super) schemes: &'a Spanned<Vec<String>>,
    pub(super) s: &'a Option<Spanned<ListValue>>,
    pub(super) m: &'a Option<Spanned<ListValue>>,
    pub(super) k: &'a Option<Spanned<ListValue>>,
    pub(super) d: &'a Option<Spanned<ListValue>>,
    pub(super) timeout: &'a Option<Spanned<TimesValue>>,
    pub(super) speculate_after: Option<f64>,
    pub(super) speculate_factor: Option<f64>,
    pub(super) parts: &'a Option<Spanned<ListValue>>,
    pub(super) p: &'a Option<Spanned<ListValue>>,
    pub(super) q: &'a Option<Spanned<ListValue>>,
}

/// The configurations of a table.
pub(super) struct Grid {
    pub(super) kinds: Vec<SchemeKind>,
    pub(super) ranges: Ranges,
    pub(super) expanded: Expanded,
}

/// The labels and output files taken so far, to refuse a second user.
#[derive(Default)]
pub(super) struct Taken {
    /// Each label and the kind of its table (`study`, `train`).
    labels: Vec<(String, &'static str)>,
    /// Each output file name and who writes it (`study `a``).
    files: Vec<(String, String)>,
}

impl Source<'_> {
    pub(super) fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())].matches('\n').count() + 1
    }

    /// The key whose value or name sits at `offset`: the last `key =` on
    /// that line before it, else the key that starts there.
    pub(super) fn key_at(&self, offset: usize) -> Option<&str> {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let start = self.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let end = self.text[offset..].find('\n').map_or(self.text.len(), |i| offset + i);
        let before = &self.text[start..offset];
        let head = match before.rfind('=') {
            Some(eq) => before[..eq].trim_end(),
            None => self.text[offset..end].split('=').next()?.trim_end(),
        };
        let is_key = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        let from = head
            .char_indices()
            .rev()
            .find(|&(_, c)| !is_key(c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let key = &head[from..];
        (!key.is_empty()).then_some(key)
    }

    /// The name of the single-bracket table header (`[figure]`) on the line
    /// at `offset`, if that line is one.
    pub(super) fn table_header_at(&self, offset: usize) -> Option<&str> {
        let offset = offset.min(self.text.len());
        let start = self.text.get(..offset)?.rfind('\n').map_or(0, |i| i + 1);
        let line = self.text[start..].lines().next()?.trim();
        let name = line.strip_prefix('[')?.strip_suffix(']')?.trim();
        let is_key = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        (!name.is_empty() && name.chars().all(is_key)).then_some(name)
    }

    pub(super) fn err<T>(
        &self,
        span: Option<std::ops::Range<usize>>,
        message: impl Into<String>,
    ) -> Result<T, ScenarioError> {
        Err(ScenarioError {
            file: self.path.to_path_buf(),
            line: span.map(|s| self.line_of(s.start)),
            message: message.into(),
        })
    }

    /// The directory that relative paths in the file (traces, data) start from.
    pub(super) fn base(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }

    /// The communication model of the keys comm_time, comm_dist, link and
    /// decode_time; an error points at the key at fault, or at the table.
    fn comm(
        &self,
        time: Option<&Spanned<f64>>,
        dist: Option<&Spanned<String>>,
        link: Option<&Spanned<String>>,
        decode: Option<&Spanned<f64>>,
        label: &Spanned<String>,
    ) -> Result<Comm, ScenarioError> {
        let law = match dist {
            Some(d) => match d.get_ref().parse::<Dist>() {
                Ok(law) => Some(law),
                Err(e) => return self.err(Some(d.span()), format!("key `comm_dist`: {e}")),
            },
            None => None,
        };
        let link = match link {
            Some(l) => match l.get_ref().parse::<Link>() {
                Ok(link) => link,
                Err(e) => return self.err(Some(l.span()), format!("key `link`: {e}")),
            },
            None => Link::Dedicated,
        };
        Comm::new(
            time.map(|t| *t.get_ref()),
            law,
            link,
            decode.map_or(0.0, |d| *d.get_ref()),
        )
        .or_else(|e| {
            let span = match &e {
                CommError::OutOfRange {
                    param: Param::DecodeTime,
                    ..
                } => decode.map(|d| d.span()),
                _ => time.map(|t| t.span()),
            };
            self.err(span.or(Some(label.span())), e.to_string())
        })
    }

    /// The cluster of a table: its own keys over the file's. A table's own
    /// workers or dist wins over the file's; one level may not set both.
    pub(super) fn cluster(
        &self,
        file: &ClusterKeys,
        own: &ClusterKeys,
        label: &Spanned<String>,
    ) -> Result<Cluster, ScenarioError> {
        let Some(n) = own.n.or(file.n) else {
            return self.err(
                Some(label.span()),
                "missing field `n`: give the number of workers, in this table or at the top of the file",
            );
        };
        if *n.get_ref() == 0 {
            return self.err(
                Some(n.span()),
                "key `n`: 0 is out of range; accepted: a whole number >= 1",
            );
        }
        let shuffle_key = own.shuffle_placement.or(file.shuffle_placement);
        let shuffle = shuffle_key.is_some_and(|s| *s.get_ref());
        let (classes, dist_text) = match (own.workers, own.dist) {
            (None, None) => (file.workers, file.dist),
            pair => pair,
        };
        let workers = match (classes, dist_text) {
            (Some(c), Some(_)) => {
                return self.err(
                    Some(c.span()),
                    "keys `workers` and `dist` do not go together: each class names its law",
                );
            }
            (Some(c), None) => {
                let mut list = Vec::new();
                for item in c.get_ref() {
                    match workers::parse_class(item) {
                        Ok(class) => list.push(class),
                        Err(e) => return self.err(Some(c.span()), format!("key `workers`: {e}")),
                    }
                }
                Workers::Classes { classes: list, shuffle }
            }
            (None, _) if shuffle => {
                return self.err(
                    shuffle_key.map(|s| s.span()),
                    "key `shuffle_placement`: it places `workers` classes, and there are none; give workers = [\"COUNT:DIST\", ...] or drop it",
                );
            }
            (None, None) => Workers::Iid(Dist::exp(1.0).expect("valid")),
            (None, Some(d)) => match Workers::from_dist(d.get_ref(), self.base()) {
                Ok(w) => w,
                Err(e) => return self.err(Some(d.span()), format!("key `dist`: {e}")),
            },
        };
        let model_text = own.load_model.or(file.load_model);
        let model_name = model_text.map_or("fixed", |m| m.get_ref().as_str());
        let model = match LoadModel::new(model_name, own.unit_time.or(file.unit_time)) {
            Ok(m) => m,
            Err(e) => return self.err(model_text.map(|m| m.span()), format!("key `load_model`: {e}")),
        };
        let comm = self.comm(
            own.comm_time.or(file.comm_time),
            own.comm_dist.or(file.comm_dist),
            own.link.or(file.link),
            own.decode_time.or(file.decode_time),
            label,
        )?;
        Ok(Cluster {
            n: *n.get_ref(),
            workers,
            model,
            comm,
        })
    }

    /// The configurations of a table's schemes and lists on `n` workers;
    /// `table` (`study `a``) names the table in errors.
    pub(super) fn grid(
        &self,
        n: usize,
        keys: &GridKeys,
        label: &Spanned<String>,
        table: &str,
    ) -> Result<Grid, ScenarioError> {
        let mut kinds = Vec::new();
        for name in keys.schemes.get_ref() {
            match name.parse::<SchemeKind>() {
                Ok(k) => kinds.push(k),
                Err(e) => return self.err(Some(keys.schemes.span()), format!("key `schemes`: {e}")),
            }
        }
        if kinds.is_empty() {
            return self.err(Some(keys.schemes.span()), "key `schemes`: list at least one scheme");
        }
        let ranges = Ranges {
            s: self.list("s", keys.s)?,
            m: self.list("m", keys.m)?,
            k: self.list("k", keys.k)?,
            d: self.list("d", keys.d)?,
            custom: None,
            timeout: self.times("timeout", keys.timeout)?,
            speculate_after: keys.speculate_after,
            speculate_factor: keys.speculate_factor,
            parts: self.list("parts", keys.parts)?,
            p: self.list("p", keys.p)?,
            q: self.list("q", keys.q)?,
        };
        match sweep::expand(n, &kinds, &ranges) {
            Ok(expanded) => Ok(Grid {
                kinds,
                ranges,
                expanded,
            }),
            Err(e) => {
                // Point at the values at fault where they are the cause.
                let values = [keys.s, keys.m, keys.k, keys.d, keys.parts, keys.p, keys.q]
                    .into_iter()
                    .flatten()
                    .next();
                let span = match (&e, values) {
                    (SweepError::AllSkipped(_) | SweepError::Scheme(_), Some(v)) => v.span(),
                    _ => label.span(),
                };
                self.err(Some(span), format!("{table}: {e}"))
            }
        }
    }

    fn list(&self, key: &str, value: &Option<Spanned<ListValue>>) -> Result<Option<IntList>, ScenarioError> {
        let Some(v) = value else { return Ok(None) };
        let text = match v.get_ref() {
            ListValue::Text(t) => t.clone(),
            ListValue::One(x) => x.to_string(),
            ListValue::Many(xs) => xs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","),
        };
        match range::parse(&text) {
            Ok(list) => Ok(Some(list)),
            Err(e) => self.err(Some(v.span()), format!("key `{key}`: {e}")),
        }
    }

    fn times(&self, key: &str, value: &Option<Spanned<TimesValue>>) -> Result<Option<TimeList>, ScenarioError> {
        let Some(v) = value else { return Ok(None) };
        let text = match v.get_ref() {
            TimesValue::Text(t) => t.clone(),
            TimesValue::One(x) => x.to_string(),
            TimesValue::Many(xs) => xs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","),
        };
        match range::parse_times(&text) {
            Ok(list) => Ok(Some(list)),
            Err(e) => self.err(Some(v.span()), format!("key `{key}`: {e}")),
        }
    }

    /// A table's label: file-name-safe, and no other table's; `kind` is
    /// `study` or `train`.
    pub(super) fn label(
        &self,
        label: &Spanned<String>,
        kind: &'static str,
        taken: &mut Taken,
    ) -> Result<String, ScenarioError> {
        let name = label.get_ref();
        if !safe_name(name) {
            return self.err(
                Some(label.span()),
                format!("key `label`: `{name}` must be letters, digits, '-', '_' or '.', and not start with '.'"),
            );
        }
        if let Some((_, other)) = taken.labels.iter().find(|(l, _)| l == name) {
            let plural = |k: &str| {
                if k == "study" {
                    "studies".to_string()
                } else {
                    format!("{k}s")
                }
            };
            let users = if *other == kind {
                format!("two {}", plural(kind))
            } else {
                format!("a {other} and a {kind}")
            };
            return self.err(
                Some(label.span()),
                format!("key `label`: `{name}` is used by {users}; every label names its own output files"),
            );
        }
        taken.labels.push((name.clone(), kind));
        Ok(name.clone())
    }

    /// Records that `owner` (`study `a``) writes `file`, named by `key` at
    /// `span`; refuses a file another output already writes.
    pub(super) fn claim(
        &self,
        taken: &mut Taken,
        file: &str,
        owner: &str,
        key: &str,
        span: std::ops::Range<usize>,
    ) -> Result<(), ScenarioError> {
        if let Some((_, other)) = taken.files.iter().find(|(f, _)| f == file) {
            return self.err(
                Some(span),
                format!(
                    "key `{key}`: `{file}` of {owner} is also written by {other}; give every output its own file name"
                ),
            );
        }
        taken.files.push((file.to_string(), owner.to_string()));
        Ok(())
    }

    /// A figure's file name: a plain `.png`, `.svg` or `.pdf` name.
    pub(super) fn figure_file(&self, key: &str, file: &Spanned<String>) -> Result<String, ScenarioError> {
        let name = file.get_ref();
        let ext_ok = [".png", ".svg", ".pdf"].iter().any(|e| name.ends_with(e));
        if !safe_name(name) || !ext_ok {
            return self.err(
                Some(file.span()),
                format!("key `{key}`: `{name}` must be a plain .png, .svg or .pdf file name"),
            );
        }
        Ok(name.clone())
    }
}
