//! The shape of the source: each crate keeps to its side of the command
//! line (the simulator imports no clap, progress bar or plotting), no import
//! circle between a crate's top-level modules, and no source file longer
//! than 600 lines (`scripts/module-graph.py` draws a crate's graph).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// No source file is longer than this: past it, a file is split by
/// responsibility.
const LONG_FILE: usize = 600;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Each top-level module of the library (`src/x.rs` or `src/x/`) and the
/// top-level modules its code (comments left out) names as `crate::y`.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let top = |p: &Path| {
        let rel = p.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .to_string();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files
        .iter()
        .map(|p| top(p))
        .filter(|m| !matches!(m.as_str(), "lib" | "main" | "cli"))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for file in &files {
        let from = top(file);
        if !modules.contains(&from) {
            continue;
        }
        for line in fs::read_to_string(file).unwrap().lines() {
            let code = line.split("//").next().unwrap();
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if name != from && modules.contains(&name) {
                    graph.get_mut(&from).unwrap().insert(name);
                }
            }
        }
    }
    graph
}

/// The modules that lie on a circle: those from which a path leads back to
/// themselves.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    for start in graph.keys() {
        // Depth-first search from `start`, remembering the path.
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((node, path)) = stack.pop() {
            for next in &graph[&node] {
                if next == start {
                    found.push((start.clone(), path.clone()));
                    stack.clear();
                    break;
                }
                if seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    found
}

/// The workspace's root folder.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Each crate's source folder, by the crate's name.
const CRATES: [(&str, &str); 3] = [
    ("gcsim", "crates/gcsim/src"),
    ("gcsim-figures", "crates/gcsim-figures/src"),
    ("gcsim-cli", "src"),
];

#[test]
fn no_import_circle_between_modules() {
    for (name, src) in CRATES {
        let graph = module_graph(&root().join(src));
        assert!(graph.len() > 1, "{name}: {graph:?}");
        let found = circles(&graph);
        assert!(
            found.is_empty(),
            "{name}: import circles (module: path back to it): {}",
            found
                .iter()
                .map(|(m, path)| format!("{m}: {} -> {m}", path.join(" -> ")))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    let core = module_graph(&root().join("crates/gcsim/src"));
    assert!(core.contains_key("engine") && core.contains_key("study"), "{core:?}");
}

/// The crates a package depends on to build (not its tests), by its
/// manifest, with the workspace's own crates among them.
fn dependencies(manifest: &str) -> BTreeSet<String> {
    let text = fs::read_to_string(root().join(manifest)).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    let mut names: BTreeSet<String> = doc["dependencies"].as_table().unwrap().keys().cloned().collect();
    if let Some(targets) = doc.get("target").and_then(|t| t.as_table()) {
        for target in targets.values() {
            if let Some(deps) = target.get("dependencies").and_then(|d| d.as_table()) {
                names.extend(deps.keys().cloned());
            }
        }
    }
    names
}

/// The command line's crates: parsing, progress bars, terminal handling.
const COMMAND_LINE: [&str; 9] = [
    "clap",
    "clap_complete",
    "clap_mangen",
    "indicatif",
    "anyhow",
    "roff",
    "tempfile",
    "libc",
    "signal-hook",
];

/// The figures' crates.
const PLOTTING: [&str; 2] = ["plotters", "svg2pdf"];

#[test]
fn each_crate_keeps_to_its_side() {
    let core = dependencies("crates/gcsim/Cargo.toml");
    let figures = dependencies("crates/gcsim-figures/Cargo.toml");
    let cli = dependencies("Cargo.toml");
    // The manifests are read: the simulator has its engine's crates.
    assert!(core.contains("rand") && core.contains("rayon"), "{core:?}");
    for name in COMMAND_LINE.iter().chain(&PLOTTING) {
        assert!(!core.contains(*name), "the simulator (crates/gcsim) depends on {name}");
    }
    assert!(!core.iter().any(|d| d.starts_with("gcsim-")), "{core:?}");
    for name in COMMAND_LINE {
        assert!(
            !figures.contains(name),
            "the figures (crates/gcsim-figures) depend on {name}"
        );
    }
    assert!(
        figures.contains("gcsim") && !figures.contains("gcsim-cli"),
        "{figures:?}"
    );
    assert!(cli.contains("gcsim") && cli.contains("gcsim-figures"), "{cli:?}");
    // The same by the code, tests included: no crate below the command line
    // names its parser or progress bars, and the simulator no plotting.
    let parsing = ["clap", "clap_complete", "clap_mangen", "indicatif"];
    for (name, src, banned) in [
        ("gcsim", "crates/gcsim/src", &[parsing.as_slice(), &PLOTTING][..]),
        ("gcsim-figures", "crates/gcsim-figures/src", &[parsing.as_slice()][..]),
    ] {
        let mut files = Vec::new();
        rust_files(&root().join(src), &mut files);
        for file in &files {
            for line in fs::read_to_string(file).unwrap().lines() {
                let code = line.split("//").next().unwrap();
                for crate_name in banned.iter().flat_map(|b| b.iter()) {
                    let path = format!("{}::", crate_name.replace('-', "_"));
                    let used = code
                        .match_indices(&path)
                        .any(|(i, _)| !code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':'));
                    assert!(!used, "{name}: {} names {crate_name}: {line}", file.display());
                }
            }
        }
    }
}

#[test]
fn the_circle_finder_finds_circles() {
    let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")];
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in edges {
        graph.entry(from.into()).or_default().insert(to.into());
        graph.entry(to.into()).or_default();
    }
    let on_circle: BTreeSet<String> = circles(&graph).into_iter().map(|c| c.0).collect();
    assert_eq!(on_circle, ["a", "b", "c"].map(String::from).into());
    graph.get_mut("c").unwrap().remove("a");
    assert!(circles(&graph).is_empty());
}

#[test]
fn no_file_is_longer_than_600_lines() {
    let mut files = Vec::new();
    for dir in [
        "src",
        "tests",
        "crates/gcsim/src",
        "crates/gcsim/benches",
        "crates/gcsim/examples",
        "crates/gcsim-figures/src",
        "python/src",
    ] {
        rust_files(&root().join(dir), &mut files);
    }
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = fs::read_to_string(f).unwrap().lines().count();
            (lines > LONG_FILE).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(files.len() > 100, "{} files read", files.len());
    assert!(long.is_empty(), "files over {LONG_FILE} lines: {}", long.join(", "));
}
