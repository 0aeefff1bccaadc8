//! The dependency template of the ST job against the edges the artifact's
//! model gives stage 1 (compute order f0 f1 f2 b0 f3 b1 b2 b3 of 1F1B), and
//! of the synthetic interleaved job (vpp = 2) against the artifact's whole
//! model of it.

use std::collections::BTreeSet;
use std::path::Path;

use super::Graph;
use crate::whatif::meta::LayoutSpec;
use crate::whatif::table::OpTrace;

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/whatif")
        .join(name)
}

fn graph_of(trace: &str) -> Graph {
    let trace = OpTrace::read(&data(trace)).unwrap();
    let layout = LayoutSpec::default().resolve(&trace).unwrap();
    let first = trace.step.iter().copied().min().unwrap();
    let rows = (0..trace.len())
        .filter(|&i| trace.step[i] == first && trace.dp_rank[i] == 0)
        .collect();
    Graph::build(&trace, &layout, rows, "the template".into()).unwrap()
}

fn deps_of(g: &Graph, name: &str) -> BTreeSet<String> {
    let v = g
        .nodes
        .iter()
        .position(|n| n.name() == name)
        .unwrap_or_else(|| panic!("no {name}"));
    g.deps[v].iter().map(|&u| g.nodes[u as usize].name()).collect()
}

#[test]
fn stage_one_of_st_has_the_artifacts_edges() {
    let g = graph_of("trace-ST.parquet");
    let expect = [
        (
            "forward-compute_0_1",
            &["forward-recv_0_1", "params-all-gather_0_1"][..],
        ),
        ("forward-compute_3_1", &["forward-recv_3_1", "backward-compute_0_1"]),
        ("backward-compute_0_1", &["backward-recv_0_1", "forward-compute_2_1"]),
        // The first backward receive waits for the forward two before the first backward.
        ("backward-recv_0_1", &["forward-compute_1_1"]),
        ("backward-recv_1_1", &["backward-compute_0_1", "backward-recv_0_1"]),
        ("backward-send_0_1", &["backward-compute_0_1", "forward-compute_1_1"]),
        ("forward-recv_0_1", &[]),
        ("gc_0_1", &["backward-compute_3_1"]),
        ("optimizer-clip-main-grad_0_1", &["grads-reduce-scatter_0_1"]),
    ];
    for (op, deps) in expect {
        let want: BTreeSet<String> = deps.iter().map(|d| d.to_string()).collect();
        assert_eq!(deps_of(&g, op), want, "{op}");
    }
    // 25 collectives of two (24 send/recv pairs, the embedding of stages 0
    // and 3), 8 data-parallel singletons, the clip of all 4 stages.
    let sizes: Vec<usize> = g.groups.iter().map(Vec::len).collect();
    assert_eq!(sizes.iter().filter(|&&s| s == 2).count(), 25);
    assert_eq!(sizes.iter().filter(|&&s| s == 1).count(), 8);
    assert_eq!(sizes.iter().filter(|&&s| s == 4).count(), 1);
}

/// The collective holding `name`, by name.
fn group_of(g: &Graph, name: &str) -> BTreeSet<String> {
    let v = g.nodes.iter().position(|n| n.name() == name).unwrap() as u32;
    let members = g
        .groups
        .iter()
        .find(|m| m.contains(&v))
        .unwrap_or_else(|| panic!("{name}: no collective"));
    members.iter().map(|&u| g.nodes[u as usize].name()).collect()
}

fn names(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The interleaved edges of the synthetic job (dp 2, pp 4, vpp 2, 8
/// microbatches; stage s, chunk c holds global chunk 4c + s). Stage 0 runs
/// the forwards of chunk 0 (f0-f3), chunk 1 (f4-f7), chunk 0 (f8-f11)...:
/// the receives of chunk 0 have no sender (gmc 0 is the model's first
/// chunk) and its first is not recorded, so forward-recv_k_0 feeds
/// forward-compute_{k+1}_0; the receives of chunk 1 meet the sends of
/// chunk 0 on the last stage, the hop from stage 3 back to stage 0
/// (`get_sender_stage` in the artifact's dependency_model.py).
#[test]
fn the_interleaved_job_has_the_hop_from_the_last_stage_to_the_first() {
    let g = graph_of("synthetic/trace-VPP.parquet");
    // f4 of stage 0 (chunk 1, microbatch 0) waits for the receive that
    // meets stage 3's first send, and for chunk 1's parameters.
    assert_eq!(
        deps_of(&g, "forward-compute_4_0"),
        names(&["forward-compute_3_0", "forward-recv_3_0", "params-all-gather_1_0"])
    );
    assert_eq!(
        group_of(&g, "forward-recv_3_0"),
        names(&["forward-recv_3_0", "forward-send_0_3"])
    );
    assert_eq!(
        group_of(&g, "forward-recv_11_0"),
        names(&["forward-recv_11_0", "forward-send_8_3"])
    );
    // Stage 3's sends of chunk 1 (global chunk 7, the last) and stage 0's
    // receives of chunk 0 wait for nobody.
    assert_eq!(group_of(&g, "forward-send_4_3"), names(&["forward-send_4_3"]));
    assert_eq!(group_of(&g, "forward-recv_0_0"), names(&["forward-recv_0_0"]));
    // Backward, the other way: stage 0's chunk-1 gradients go to stage 3's chunk 0.
    assert_eq!(
        group_of(&g, "backward-send_0_0"),
        names(&["backward-recv_4_3", "backward-send_0_0"])
    );
    assert_eq!(group_of(&g, "backward-send_4_0"), names(&["backward-send_4_0"]));
    // Within the pipeline the neighbours meet in order.
    assert_eq!(
        group_of(&g, "forward-send_0_1"),
        names(&["forward-recv_0_2", "forward-send_0_1"])
    );
}

/// Every edge, collective and data-parallel sync of the synthetic job's
/// template equals the artifact's model of it (its setup_dependency, as
/// wia.py pickles it, written out by data/whatif/synthetic/dump_model.py).
#[test]
fn the_interleaved_job_has_the_artifacts_whole_model() {
    let g = graph_of("synthetic/trace-VPP.parquet");
    let text = std::fs::read_to_string(data("synthetic/model-VPP.json")).unwrap();
    let model: serde_json::Value = serde_json::from_str(&text).unwrap();
    let deps = model["deps"].as_object().unwrap();
    assert_eq!(deps.len(), g.len());
    for (op, want) in deps {
        let want: BTreeSet<String> = want
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().into())
            .collect();
        assert_eq!(deps_of(&g, op), want, "{op}");
    }
    let named = |v: &[u32]| -> Vec<String> {
        let mut n: Vec<String> = v.iter().map(|&u| g.nodes[u as usize].name()).collect();
        n.sort();
        n
    };
    let mut ours: Vec<Vec<String>> = g.groups.iter().map(|m| named(m)).collect();
    ours.sort();
    let theirs: Vec<Vec<String>> = serde_json::from_value(model["groups"].clone()).unwrap();
    assert_eq!(ours, theirs);
    let synced: Vec<u32> = (0..g.len() as u32).filter(|&v| g.dp_sync[v as usize]).collect();
    let theirs: Vec<String> = serde_json::from_value(model["dp_sync"].clone()).unwrap();
    assert_eq!(named(&synced), theirs);
}
