//! The dependency template of the ST job against the edges the artifact's
//! model gives stage 1 (compute order f0 f1 f2 b0 f3 b1 b2 b3 of 1F1B).

use std::collections::BTreeSet;
use std::path::Path;

use super::Graph;
use crate::whatif::meta::LayoutSpec;
use crate::whatif::table::OpTrace;

fn st_graph() -> Graph {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/whatif/trace-ST.parquet");
    let trace = OpTrace::read(&path).unwrap();
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
    let g = st_graph();
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
