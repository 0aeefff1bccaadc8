//! Shard files (`gcsim merge FILES`): reading never panics or hangs,
//! whatever the text, and every error is one line. The input is one shard
//! file, or two separated by a NUL byte.
//!
//! Random text almost never carries a matching checksum, so each document
//! that deserialises is also resealed (`ShardFile::new` writes a fresh
//! checksum) and read back: the write → read round trip must succeed and
//! give the same file, and the checks after the checksum (`same_run`, and
//! merge's checks of the shard set when the run is small) see fuzzed
//! contents.
#![no_main]

use std::sync::Once;

use gcsim::engine::Silent;
use gcsim::shard::runs::merge_shards;
use gcsim::shard::{self, ShardFile};
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
    let sealed = ShardFile::new(&bare.study, &bare.config, &bare.part());
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
        match shard::same_run(set) {
            Ok((study, _)) => {
                if study.trials().saturating_mul(study.n() as u64) <= MERGE_WORK {
                    let parts: Vec<_> = set.iter().map(|(_, f)| f.part()).collect();
                    if let Err(e) = merge_shards(&study, &parts, &Silent) {
                        one_line(e);
                    }
                }
            }
            Err(e) => one_line(e),
        }
    }
});
