//! The shape of the source: each crate keeps to its side of the command
//! line (the simulator imports no clap, progress bar or plotting), no import
//! circle between a crate's top-level modules, no two sibling files that
//! import each other, no source file longer than 600 lines and no new
//! function longer than 100 (`scripts/module-graph.py` draws a crate's
//! graph).

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

/// The sibling modules of one folder that each names the other: as
/// `super::x` (or `super::super::x` from an `x/mod.rs`), or by the path
/// `crate::folder::x`. Comments and the code after a file's first
/// `#[cfg(test)]` (its tests) are left out.
fn mutual_siblings(dir: &Path, module_path: &str) -> Vec<(String, String)> {
    let mut modules: BTreeMap<String, PathBuf> = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() && path.join("mod.rs").exists() {
            modules.insert(name, path.join("mod.rs"));
        } else if path.extension().is_some_and(|e| e == "rs")
            && !matches!(name.as_str(), "mod" | "lib" | "main" | "tests")
        {
            modules.insert(name, path);
        }
    }
    let mut uses: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (name, file) in &modules {
        let text = fs::read_to_string(file).unwrap();
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap()
            .lines()
            .map(|l| l.split("//").next().unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        let up = if file.ends_with("mod.rs") {
            "super::super::"
        } else {
            "super::"
        };
        for other in modules.keys().filter(|o| *o != name) {
            let named = |prefix: &str| {
                let path = format!("{prefix}{other}");
                code.match_indices(&path).any(|(i, _)| {
                    let before = code[..i].chars().next_back();
                    let after = code[i + path.len()..].chars().next();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                        && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            };
            let by_path = !module_path.is_empty() && named(&format!("crate::{module_path}::"));
            if named(up) || by_path {
                uses.entry(name).or_default().insert(other);
            }
        }
    }
    let mut pairs = Vec::new();
    for (a, used) in &uses {
        for b in used {
            if a < b && uses.get(b).is_some_and(|u| u.contains(a)) {
                pairs.push((a.to_string(), b.to_string()));
            }
        }
    }
    pairs
}

/// Every folder below `src` with its module path (`engine::trial`).
fn folders(src: &Path, path: &str, out: &mut Vec<(PathBuf, String)>) {
    out.push((src.to_path_buf(), path.to_string()));
    for entry in fs::read_dir(src).unwrap() {
        let sub = entry.unwrap().path();
        if sub.is_dir() {
            let name = sub.file_name().unwrap().to_string_lossy().to_string();
            let inner = if path.is_empty() {
                name
            } else {
                format!("{path}::{name}")
            };
            folders(&sub, &inner, out);
        }
    }
}

#[test]
fn no_two_sibling_files_import_each_other() {
    let mut found = Vec::new();
    let mut checked = 0;
    for (_, src) in CRATES {
        let mut dirs = Vec::new();
        folders(&root().join(src), "", &mut dirs);
        for (dir, path) in dirs {
            checked += 1;
            for (a, b) in mutual_siblings(&dir, &path) {
                found.push(format!("{}: {a} and {b}", dir.display()));
            }
        }
    }
    assert!(checked > 20, "{checked} folders");
    assert!(
        found.is_empty(),
        "sibling files that import each other: {}",
        found.join("; ")
    );
}

#[test]
fn the_sibling_check_finds_a_pair() {
    let dir = std::env::temp_dir().join(format!("gcsim-siblings-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("a.rs"), "use super::b::B;\npub struct A;\n").unwrap();
    fs::write(dir.join("b.rs"), "pub struct B(crate::m::a::A);\n").unwrap();
    fs::write(dir.join("c.rs"), "// super::a in a comment\nuse super::a::A;\n").unwrap();
    let pairs = mutual_siblings(&dir, "m");
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(pairs, [("a".to_string(), "b".to_string())]);
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

/// Every Rust file of the crates, their benchmarks and examples, and the
/// Python module (the integration tests apart).
fn source_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "src",
        "crates/gcsim/src",
        "crates/gcsim/benches",
        "crates/gcsim/examples",
        "crates/gcsim-figures/src",
        "python/src",
    ] {
        rust_files(&root().join(dir), &mut files);
    }
    files
}

#[test]
fn no_file_is_longer_than_600_lines() {
    let mut files = source_files();
    rust_files(&root().join("tests"), &mut files);
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

/// No function is longer than this many lines, from its signature to its
/// closing brace.
const LONG_FUNCTION: usize = 100;

/// The name of the function a line opens (`pub(crate) const fn name<T>(`),
/// if it opens one.
fn opens_function(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    loop {
        let before = rest;
        for word in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "unsafe ",
            "async ",
            "extern \"C\" ",
        ] {
            rest = rest.strip_prefix(word).unwrap_or(rest);
        }
        if rest == before {
            break;
        }
    }
    let name = rest.strip_prefix("fn ")?;
    let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&name[..end])
}

/// A line's braces, net, outside comments, strings and character literals.
fn brace_balance(line: &str) -> i64 {
    let code = line.split("//").next().unwrap().replace("'{'", "").replace("'}'", "");
    let (mut depth, mut in_string, mut escaped) = (0, false, false);
    for c in code.chars() {
        match (in_string, c) {
            (true, _) if escaped => escaped = false,
            (true, '\\') => escaped = true,
            (_, '"') => in_string = !in_string,
            (false, '{') => depth += 1,
            (false, '}') => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// Each function of `text` with its name and its length in lines.
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(name) = opens_function(lines[i]) else {
            i += 1;
            continue;
        };
        let (mut depth, mut opened, mut j) = (0, false, i);
        while j < lines.len() {
            let code = lines[j].split("//").next().unwrap();
            depth += brace_balance(lines[j]);
            opened |= code.contains('{');
            if opened && depth <= 0 {
                break;
            }
            if !opened && code.trim_end().ends_with(';') {
                break;
            }
            j += 1;
        }
        if opened {
            out.push((name.to_string(), j - i + 1));
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

#[test]
fn no_function_is_longer_than_100_lines() {
    let files = source_files();
    let mut long = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
        for (name, lines) in function_lengths(&fs::read_to_string(file).unwrap()) {
            if lines > LONG_FUNCTION {
                long.push(format!("{rel}: {name} has {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LONG_FUNCTION} lines: {}",
        long.join("; ")
    );
}

#[test]
fn function_lengths_count_from_signature_to_brace() {
    let text = "/// doc\npub(crate) fn a(x: u8) -> u8 {\n    let s = \"}}{\";\n    if x > 0 { 1 } else { 0 }\n}\n\nfn b();\nconst fn c() {}\n";
    assert_eq!(function_lengths(text), [("a".to_string(), 4), ("c".to_string(), 1)]);
}
