//! Shard files (`gcsim merge FILES`): reading never panics or hangs,
//! whatever the text, and every error is one line. The input is one shard
//! file, or two separated by a NUL byte.
//!
//! Random text almost never carries a matching checksum, so each document
//! that deserialises is also resealed (`ShardFile::new` writes a fresh
//! checksum) and read back: the write → read round trip must succeed and
//! give the same file, and the checks after the checksum (the union's
//! checks of each file against the first, and the merge when the run is
//! small) see fuzzed contents.
#![no_main]

use std::sync::Once;

use gcsim::engine::Silent;
use gcsim::shard::ShardFile;
use gcsim::shard::fold::Union;
use gcsim::shard::units::Sealed;
use libfuzzer_sys::fuzz_target;

/// Trials × workers up to which a merge (which recomputes the pilot) runs.
const MERGE_WORK: u64 = 20_000;

fn one_line(e: impl std::fmt::Display) {
    let message = e.to_string();
    assert!(!message.contains('\n'), "a multi-line error: {message:?}");
}

/// Reads one document as `gcsim merge` does, then resealed.
fn read(name: &str, text: &str) -> Option<ShardFile> {
    if let Err(e) = ShardFile::parse(name, text) {
        one_line(e);
    }
    let bare: ShardFile = serde_json::from_str(text).ok()?;
    bare.coverage().ok()?;
    // A shard's file through the engine's view of it; a partial merge's as it is.
    let sealed = if bare.shard.index.is_some() {
        ShardFile::new(&bare.study, &bare.config, &bare.part())
    } else {
        bare.sealed()
    };
    let written = serde_json::to_string(&sealed).expect("a shard file serialises");
    match ShardFile::parse(name, &written) {
        Ok(back) => assert_eq!(back, sealed, "{written}"),
        Err(e) => panic!("a written shard is refused: {e}\n{written}"),
    }
    Some(sealed)
}

fuzz_target!(|data: &[u8]| {
    static ROOT: Once = Once::new();
    // Trace paths in the seeds are relative to the repository.
    ROOT.call_once(|| std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).unwrap());
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut files = Vec::new();
    for (i, doc) in text.splitn(2, '\0').enumerate() {
        if let Some(f) = read(&format!("part{i}.json"), doc) {
            files.push((format!("part{i}.json"), f));
        }
    }
    if files.is_empty() {
        return;
    }
    for set in [&files[..1], &files[..]] {
        let mut union: Option<Union> = None;
        let mut refused = false;
        for (name, f) in set {
            let added = match union.as_mut() {
                None => Union::new(name, f.clone()).map(|u| union = Some(u)),
                Some(u) => u.add(name, f.clone()),
            };
            if let Err(e) = added {
                one_line(e);
                refused = true;
                break;
            }
        }
        let Some(union) = union.filter(|_| !refused) else {
            continue;
        };
        // The partial merge of what was read reads back as written.
        let file = union.clone().into_file();
        let written = serde_json::to_string(&file).expect("a partial merge serialises");
        match ShardFile::parse("partial.json", &written) {
            Ok(back) => assert_eq!(back, file, "{written}"),
            Err(e) => panic!("a written partial merge is refused: {e}\n{written}"),
        }
        let study = union.study().clone();
        if study.trials().saturating_mul(study.n() as u64) <= MERGE_WORK
            && let Err(e) = union.finish(&Silent)
        {
            one_line(e);
        }
    }
});
