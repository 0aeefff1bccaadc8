//! The columns of a per-op trace, shared by its Parquet and CSV readers.

use super::optype::OpType;

/// The integer columns a trace must have, in [`OpTrace`]'s field order.
pub const INT_COLUMNS: [&str; 8] = ["dp_rank", "stage", "rank", "step", "seq_id", "mc", "gmc", "mb_id"];
/// The time columns (seconds).
pub const TIME_COLUMNS: [&str; 2] = ["start_ts", "duration"];

/// Every column a trace must have, for error messages.
pub fn required_columns() -> String {
    let mut all: Vec<&str> = INT_COLUMNS[..4].to_vec();
    all.push("optype");
    all.extend(TIME_COLUMNS);
    all.extend(&INT_COLUMNS[4..]);
    all.join(", ")
}

/// A trace's columns as read, before validation: the integer columns in
/// [`INT_COLUMNS`]' order, the times in [`TIME_COLUMNS`]' order.
pub(crate) struct RawColumns {
    pub ints: Vec<Vec<i64>>,
    pub times: Vec<Vec<f64>>,
    pub optype: Vec<OpType>,
}

/// The op type a name in the `optype` column stands for.
pub(crate) fn parse_optype(name: &str) -> Result<OpType, String> {
    OpType::from_name(name).ok_or_else(|| format!("column optype is {name:?}; accepted: {}", OpType::names()))
}
