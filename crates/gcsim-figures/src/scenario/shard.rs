//! A scenario split by configuration: `gcsim scenario FILE --shard I/K`
//! runs whole units of the scenario and writes their files, and
//! `gcsim scenario FILE --merge` puts together what only the whole
//! scenario writes (the printed tables in file order, the report).
//!
//! A unit is a `[[study]]` together with every study a `[[figure]]` overlay
//! draws beside it (the overlay is drawn in that unit, from its studies'
//! rows), a `[[train]]` table, or a `[[plan]]` table. Each runs exactly as in
//! the single process (a study's trials are its own, on its own seed), so
//! its files are the single run's, byte for byte. Units go to shards round
//! robin, in the order studies, trains, plans ([`gcsim::shard::units::assign`]
//! with equal costs).
//!
//! Partial result (JSON, `format = "gcsim-scenario-shard"`, `version = 1`),
//! at `<out-dir>/<name>-shards/part-I-of-K.json`:
//!
//! ```text
//! {
//!   "format": "gcsim-scenario-shard", "version": 1, "gcsim": "0.1.0",
//!   "shard": {"index": 1, "count": 3},
//!   "scenario": "a1b2c3d4",          // CRC-32 of the file's text and --trials
//!   "assignment": [0, 1, 2, 0],      // 0-based shard of each unit
//!   "items": [{"item": {"study": 0}, "stdout": "...", "sections": [...]}, ...],
//!   "checksum": "1a2b3c4d"
//! }
//! ```

use serde::{Deserialize, Serialize};

use super::Scenario;
use super::page::Section;
use gcsim::shard::ShardId;
use gcsim::shard::units::{PartError, Sealed, UnitsError, check_cover, checksum, read_part};

/// The format name in every scenario shard file.
pub const FORMAT: &str = "gcsim-scenario-shard";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// One table of a scenario, by its index among the tables of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Item {
    /// A `[[study]]`.
    Study(usize),
    /// A `[[figure]]` overlay.
    Figure(usize),
    /// A `[[train]]`.
    Train(usize),
    /// A `[[plan]]`.
    Plan(usize),
}

impl Scenario {
    /// Every table, in the order the whole scenario runs them: studies,
    /// overlays, trains, plans.
    pub fn items(&self) -> Vec<Item> {
        let studies = (0..self.studies.len()).map(Item::Study);
        let figures = (0..self.overlays.len()).map(Item::Figure);
        let trains = (0..self.trains.len()).map(Item::Train);
        studies
            .chain(figures)
            .chain(trains)
            .chain((0..self.plans.len()).map(Item::Plan))
            .collect()
    }

    /// The units a sharded scenario runs whole, each its tables in the
    /// order of [`Scenario::items`]: the studies joined by overlays (by
    /// their first study), each with its overlays; then each train; then
    /// each plan.
    pub fn units(&self) -> Vec<Vec<Item>> {
        // Union-find over the studies, joined by each overlay.
        let mut root: Vec<usize> = (0..self.studies.len()).collect();
        fn find(root: &mut [usize], i: usize) -> usize {
            let mut r = i;
            while root[r] != r {
                r = root[r];
            }
            root[i] = r;
            r
        }
        for o in &self.overlays {
            for pair in o.studies.windows(2) {
                let (a, b) = (find(&mut root, pair[0]), find(&mut root, pair[1]));
                root[a.max(b)] = a.min(b);
            }
        }
        let mut units: Vec<Vec<Item>> = Vec::new();
        let mut unit_of_root = vec![usize::MAX; self.studies.len()];
        for i in 0..self.studies.len() {
            let r = find(&mut root, i);
            if unit_of_root[r] == usize::MAX {
                unit_of_root[r] = units.len();
                units.push(Vec::new());
            }
            units[unit_of_root[r]].push(Item::Study(i));
        }
        for (j, o) in self.overlays.iter().enumerate() {
            if let Some(&first) = o.studies.first() {
                let r = find(&mut root, first);
                units[unit_of_root[r]].push(Item::Figure(j));
            }
        }
        units.extend((0..self.trains.len()).map(|t| vec![Item::Train(t)]));
        units.extend((0..self.plans.len()).map(|p| vec![Item::Plan(p)]));
        units
    }

    /// The files a table writes, relative to the scenario's directory.
    pub fn outputs_of(&self, item: Item) -> Vec<String> {
        match item {
            Item::Study(i) => self.studies[i].outputs(),
            Item::Figure(j) => {
                let file = &self.overlays[j].figure.file;
                vec![file.clone(), super::figure_data_file(file)]
            }
            Item::Train(t) => self.trains[t].outputs(),
            Item::Plan(p) => self.plans[p].outputs(),
        }
    }
}

/// What a table printed and put on the report page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemRecord {
    /// Which table.
    pub item: Item,
    /// What it printed on stdout.
    pub stdout: String,
    /// Its sections of the report page.
    pub sections: Vec<Section>,
}

/// A scenario shard file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioShardFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`] when written.
    pub version: u32,
    /// gcsim version that wrote it.
    pub gcsim: String,
    /// Which shard.
    pub shard: ShardId,
    /// The scenario's fingerprint ([`fingerprint`]).
    pub scenario: String,
    /// The 0-based shard of each unit.
    pub assignment: Vec<u64>,
    /// The tables this shard ran, in the order of [`Scenario::items`].
    pub items: Vec<ItemRecord>,
    /// CRC-32 of the compact JSON with this field empty, as 8 hex digits.
    pub checksum: String,
}

/// The fingerprint of a scenario run: the CRC-32 of its file's text and
/// the `--trials` that overrides it.
pub fn fingerprint(text: &str, trials: Option<u64>) -> String {
    checksum(&(text, trials))
}

/// The file name of shard `shard`'s partial result.
pub fn part_file(shard: ShardId) -> String {
    format!("part-{}-of-{}.json", shard.index, shard.count)
}

/// The directory of a scenario's partial results, beside its own:
/// `<name>-shards`.
pub fn parts_dir(name: &str) -> String {
    format!("{name}-shards")
}

/// Why scenario shard files cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioShardError {
    /// Not a readable part of this format, version and release.
    #[error(transparent)]
    Part(#[from] PartError),
    /// A part of another scenario, or another --trials.
    #[error(
        "{file}: a shard of another scenario file or --trials than this one; rerun it, or merge with the scenario and --trials its shards ran"
    )]
    Foreign {
        /// The file.
        file: String,
    },
    /// The parts do not make one scenario.
    #[error(transparent)]
    Units(#[from] UnitsError),
}

impl Sealed for ScenarioShardFile {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl ScenarioShardFile {
    /// The file of shard `shard`, with the records of the tables it ran.
    pub fn new(shard: ShardId, scenario: String, assignment: Vec<u64>, items: Vec<ItemRecord>) -> Self {
        Self {
            format: FORMAT.into(),
            version: VERSION,
            gcsim: env!("CARGO_PKG_VERSION").into(),
            shard,
            scenario,
            assignment,
            items,
            checksum: String::new(),
        }
        .sealed()
    }

    /// Reads a scenario shard file's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, ScenarioShardError> {
        let part: Self = read_part(file, text, FORMAT, VERSION)?;
        Ok(part)
    }
}

/// Checks that `files` (name, part) are every shard of `scenario` (whose
/// fingerprint is `print`), once each, and returns every table's record in
/// the order of [`Scenario::items`].
pub fn merge(
    scenario: &Scenario,
    print: &str,
    files: &[(String, ScenarioShardFile)],
) -> Result<Vec<ItemRecord>, ScenarioShardError> {
    let units = scenario.units();
    if let Some((name, _)) = files.iter().find(|(_, f)| f.scenario != print) {
        return Err(ScenarioShardError::Foreign { file: name.clone() });
    }
    let mut held = Vec::new();
    for (name, f) in files {
        if f.shard.count != files[0].1.shard.count {
            return Err(UnitsError::Different(files[0].0.clone(), name.clone(), "splits (--shard I/K)").into());
        }
        if f.assignment.len() != units.len() {
            return Err(ScenarioShardError::Foreign { file: name.clone() });
        }
        // The units whose tables this part holds, ascending.
        let mut own: Vec<usize> = Vec::new();
        for r in &f.items {
            let Some(u) = units.iter().position(|items| items.contains(&r.item)) else {
                return Err(ScenarioShardError::Foreign { file: name.clone() });
            };
            own.push(u);
        }
        own.sort_unstable();
        own.dedup();
        held.push((name.clone(), f.shard, own));
    }
    let assignment = &files.first().map(|f| f.1.assignment.clone()).unwrap_or_default();
    for (name, f) in files {
        if f.assignment != *assignment {
            return Err(UnitsError::Different(files[0].0.clone(), name.clone(), "splits").into());
        }
    }
    check_cover(&held, assignment)?;
    let mut records: Vec<ItemRecord> = files.iter().flat_map(|(_, f)| f.items.iter().cloned()).collect();
    let order = scenario.items();
    if records.len() != order.len() || order.iter().any(|i| !records.iter().any(|r| r.item == *i)) {
        let file = files.first().map(|f| f.0.clone()).unwrap_or_default();
        return Err(ScenarioShardError::Foreign { file });
    }
    records.sort_by_key(|r| order.iter().position(|i| *i == r.item));
    Ok(records)
}
