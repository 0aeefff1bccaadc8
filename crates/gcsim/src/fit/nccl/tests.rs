//! The parser on each layout nccl-tests has printed, every refusal, and the
//! weighted line against a second formulation of the same minimum.

use super::*;

const GH200: &str = include_str!("../../../../../tests/data/nccl-tests/gh200-8ranks.txt");
const K80: &str = include_str!("../../../../../tests/data/nccl-tests/k80-4ranks-old-format.txt");

/// A synthetic table in today's layout: 4 ranks, ring times from α = 2 µs
/// and 10 GB/s at 1 KiB, 1 MiB and 1 GiB, in place 1 µs slower.
const NEW: &str = "\
# Collective test starting: all_reduce_perf
#  Rank  0 Group  0 Pid 1 on h device  0 [0x01] GPU
#  Rank  1 Group  0 Pid 1 on h device  1 [0x02] GPU
#  Rank  2 Group  0 Pid 1 on h device  2 [0x03] GPU
#  Rank  3 Group  0 Pid 1 on h device  3 [0x04] GPU
#       size    count   type  redop   root     time  algbw  busbw #wrong     time  algbw  busbw #wrong
#        (B) (elements)                        (us) (GB/s) (GB/s)            (us) (GB/s) (GB/s)
h:1:1 [0] NCCL INFO Launch mode Parallel
           0        0  float    sum     -1     3.00   0.00   0.00      0     4.00   0.00   0.00      0
        1024      256  float    sum     -1 12.1536   0.08   0.13      0 13.1536   0.08   0.12    N/A
     1048576   262144  float    sum     -1 169.2864   6.19   9.29      0 170.2864   6.16   9.24    N/A
  1073741824 268435456 float    sum     -1 161073.2  6.67  10.00      0 161074.2   6.67  10.00    N/A
# Avg bus bandwidth    : 4.9
";

fn options() -> NcclOptions {
    NcclOptions {
        algorithm: Algorithm::Ring,
        ranks: None,
        in_place: false,
        min_size: 0,
        max_size: u64::MAX,
    }
}

fn fit(text: &str, options: &NcclOptions) -> Result<NcclFit, NcclError> {
    fit_text("t.txt", text, options)
}

fn message(text: &str, options: &NcclOptions) -> String {
    fit(text, options).unwrap_err().to_string()
}

/// Σ((t − c₀ − c₁S)/t)² = Σ(1 − c₀·u − c₁·v)² with u = 1/t, v = S/t: an
/// ordinary least squares of 1 on (u, v) without an intercept, solved from
/// its 2×2 normal equations by Cramer's rule.
fn ratio_formulation(points: &[(f64, f64)]) -> (f64, f64) {
    let (mut uu, mut uv, mut vv, mut u1, mut v1) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(s, t) in points {
        let (u, v) = (1.0 / t, s / t);
        uu += u * u;
        uv += u * v;
        vv += v * v;
        u1 += u;
        v1 += v;
    }
    let det = uu * vv - uv * uv;
    ((u1 * vv - v1 * uv) / det, (uu * v1 - uv * u1) / det)
}

#[test]
fn the_weighted_line_is_the_ratio_regression() {
    let table = table::read("gh200", GH200, false).unwrap();
    let points: Vec<(f64, f64)> = table.rows.iter().map(|r| (r.size_bytes as f64, r.time)).collect();
    let line = relative_least_squares(&points);
    let (c0, c1) = ratio_formulation(&points);
    assert!((line.intercept / c0 - 1.0).abs() < 1e-9, "{line:?} vs {c0}");
    assert!((line.slope / c1 - 1.0).abs() < 1e-9, "{line:?} vs {c1}");
}

#[test]
fn a_table_on_the_line_gives_its_latency_and_bandwidth_back() {
    let f = fit(NEW, &options()).unwrap();
    assert_eq!((f.ranks, f.ranks_from), (4, "# Rank lines"));
    assert!((f.latency / 2e-6 - 1.0).abs() < 1e-6, "{}", f.latency);
    assert!((f.bandwidth / 1e10 - 1.0).abs() < 1e-6, "{}", f.bandwidth);
    assert!(f.r_squared > 1.0 - 1e-9 && f.max_relative_error < 1e-6, "{f:?}");
    // The size-0 row is left out; the NCCL INFO line skipped.
    assert_eq!((f.rows.len(), f.table_rows, f.skipped_lines), (3, 4, 1));
    assert_eq!(f.flags, "--aggregation ring --latency 2.000e-6 --bandwidth 10GB/s");
}

#[test]
fn in_place_reads_the_second_time_column() {
    let f = fit(
        NEW,
        &NcclOptions {
            in_place: true,
            ..options()
        },
    )
    .unwrap();
    assert_eq!(f.times, "in-place");
    assert_eq!(f.rows[0].time_us, 13.1536);
    assert_eq!(f.rows[0].busbw_gbps, Some(0.12));
}

#[test]
fn the_layout_without_root_is_read_by_its_header() {
    let table = table::read("k80", K80, false).unwrap();
    assert_eq!(table.rows.len(), 7);
    assert_eq!(table.rows[0].size_bytes, 33554432);
    assert_eq!(table.rows[0].time, 19902e-6);
    assert_eq!(table.rows[0].busbw_gbps, Some(2.53));
    let in_place = table::read("k80", K80, true).unwrap();
    assert_eq!(in_place.rows[6].time, 1258876e-6);
    assert_eq!((table.ranks.len(), table.skipped), (4, 1));
}

#[test]
fn the_ranks_come_from_the_flag_first() {
    let f = fit(
        NEW,
        &NcclOptions {
            ranks: Some(8),
            ..options()
        },
    )
    .unwrap();
    assert_eq!((f.ranks, f.ranks_from, f.a), (8, "--ranks", 14.0));
    let m = message(
        NEW,
        &NcclOptions {
            ranks: Some(1),
            ..options()
        },
    );
    assert!(m.contains("--ranks 2 or more"), "{m}");
}

#[test]
fn other_algorithms_divide_by_their_coefficients() {
    let ring = fit(NEW, &options()).unwrap();
    let tree = fit(
        NEW,
        &NcclOptions {
            algorithm: Algorithm::Tree,
            ..options()
        },
    )
    .unwrap();
    // Tree among 4: a = b = 4; ring: a = 6, b = 1.5. One line, so α·a and b/bandwidth agree.
    assert_eq!((tree.a, tree.b), (4.0, 4.0));
    assert!((tree.latency * 4.0 / (ring.latency * 6.0) - 1.0).abs() < 1e-12);
    assert!((tree.bandwidth / 4.0 / (ring.bandwidth / 1.5) - 1.0).abs() < 1e-12);
}

#[test]
fn refusals_of_the_table_name_the_file_the_line_and_what_is_accepted() {
    let o = options();
    let header = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
    let cases: Vec<(String, NcclOptions, &str)> = vec![
        (String::new(), o.clone(), "t.txt: the file is empty"),
        ("  \n\n".into(), o.clone(), "t.txt: the file is empty"),
        ("# only\n# comments\n".into(), o.clone(), "t.txt: no data rows"),
        (
            "0: 8 2 float sum -1 1 0 0 0 1 0 0 0\n".into(),
            o.clone(),
            "srun --label",
        ),
        (
            "8 2 float sum -1 1 0 0 0 1 0 0 0\n".into(),
            o.clone(),
            "t.txt:1: a data row before the column header",
        ),
        (
            format!("{header}8 2 float sum -1 1.0 0 0 0\n"),
            o.clone(),
            "t.txt:2: 9 fields, but the header at line 1 names 13",
        ),
        (
            format!("{header}8 2 float sum -1 fast 0 0 0 1 0 0 0\n"),
            o.clone(),
            "t.txt:2: time `fast` is not a number",
        ),
        (
            format!("{header}8 2 float sum -1 -1 0 0 0 1 0 0 0\n"),
            o.clone(),
            "time `-1` is not a number of microseconds > 0",
        ),
        (
            format!("{header}8 2 float sum -1 inf 0 0 0 1 0 0 0\n"),
            o.clone(),
            "time `inf`",
        ),
        (
            format!("{header}99999999999999999999 2 float sum -1 1 0 0 0 1 0 0 0\n"),
            o.clone(),
            "is not a whole number of bytes",
        ),
        (
            format!("{header}8 2 float none -1 1 0 0 0 1 0 0 0\n"),
            o.clone(),
            "t.txt:2: redop `none`: this is not an all-reduce",
        ),
        (
            format!("{header}{header}"),
            o.clone(),
            "t.txt:2: a second column header (the first is at line 1)",
        ),
        (
            format!("# Collective test starting: all_gather_perf\n{header}"),
            o.clone(),
            "t.txt:1: the output of all_gather_perf",
        ),
        (
            "#  size count type redop time algbw busbw error\n8 2 float sum 1 0 0 0\n".into(),
            NcclOptions {
                in_place: true,
                ..o.clone()
            },
            "t.txt:1: the header names one time column; --in-place",
        ),
    ];
    check(cases);
}

#[test]
fn refusals_of_the_fit_name_the_flag_that_changes_it() {
    let o = options();
    let header = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
    let cases: Vec<(String, NcclOptions, &str)> = vec![
        (
            format!("{header}8 2 float sum -1 1 0 0 0 1 0 0 0\n16 4 float sum -1 2 0 0 0 1 0 0 0\n"),
            o.clone(),
            "t.txt: no `#  Rank N ...` lines to count the ranks from; give the number of ranks with --ranks P",
        ),
        (
            format!("#  Rank 0 Pid 1\n#  Rank 0 Pid 2\n{header}8 2 float sum -1 1 0 0 0 1 0 0 0\n"),
            o.clone(),
            "t.txt:2: rank 0 is listed again (first at line 1)",
        ),
        (
            format!("#  Rank 0 Pid 1\n{header}8 2 float sum -1 1 0 0 0 1 0 0 0\n"),
            o.clone(),
            "1 rank: an all-reduce among fewer than 2 ranks",
        ),
        (
            format!("{header}8 2 float sum -1 1 0 0 0 1 0 0 0\n8 2 float sum -1 2 0 0 0 1 0 0 0\n"),
            NcclOptions {
                ranks: Some(2),
                ..o.clone()
            },
            "1 size(s) above 0 bytes within --min-size and --max-size; the fit needs 2 or more",
        ),
        (
            format!("{header}8 2 float sum -1 9 0 0 0 1 0 0 0\n16 4 float sum -1 5 0 0 0 1 0 0 0\n"),
            NcclOptions {
                ranks: Some(2),
                ..o.clone()
            },
            "the time does not grow with the size over 8 to 16 bytes",
        ),
        (
            format!("{header}1000000 2 float sum -1 100 0 0 0 1 0 0 0\n2000000 4 float sum -1 250 0 0 0 1 0 0 0\n"),
            NcclOptions {
                ranks: Some(2),
                ..o.clone()
            },
            "the fitted latency is negative (intercept -5.000e-5 s): the sizes used (1000000 to 2000000 bytes) are too large",
        ),
    ];
    check(cases);
}

/// Each text is refused with one line holding the expected words.
fn check(cases: Vec<(String, NcclOptions, &str)>) {
    for (text, options, expected) in cases {
        let m = message(&text, &options);
        assert!(m.contains(expected), "{text:?}: {m}");
        assert!(!m.contains('\n'), "{m}");
    }
}

#[test]
fn the_size_window_selects_rows() {
    let f = fit(
        NEW,
        &NcclOptions {
            min_size: 1024,
            max_size: 1 << 20,
            ..options()
        },
    )
    .unwrap();
    let sizes: Vec<u64> = f.rows.iter().map(|r| r.size_bytes).collect();
    assert_eq!(sizes, [1024, 1 << 20]);
}

#[test]
fn sizes_take_the_suffixes_of_all_reduce_perf() {
    assert_eq!(parse_size("8"), Ok(8));
    assert_eq!(parse_size("64K"), Ok(64 << 10));
    assert_eq!(parse_size("128M"), Ok(128 << 20));
    assert_eq!(parse_size("8G"), Ok(8 << 30));
    for bad in ["", "M", "1.5M", "-1", "8T", "99999999999G"] {
        let e = parse_size(bad).unwrap_err();
        assert!(e.contains("accepted: a whole number of bytes"), "{bad}: {e}");
    }
}
