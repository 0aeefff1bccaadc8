//! Reading a per-op trace from Parquet, as the what-if artifact stores it,
//! with the Apache Arrow project's `parquet` crate (column readers, no Arrow
//! arrays).

use std::collections::HashMap;

use bytes::Bytes;
use parquet::basic::Type as Physical;
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType;
use parquet::file::reader::{FileReader, RowGroupReader, SerializedFileReader};

use super::WhatIfError;
use super::columns::{INT_COLUMNS, RawColumns, TIME_COLUMNS, parse_optype, required_columns};
use super::optype::OpType;

/// Reads the trace's columns from a Parquet file's bytes; other columns are
/// ignored. Nulls are refused.
pub(crate) fn read(file: &str, bytes: Vec<u8>) -> Result<RawColumns, WhatIfError> {
    let bad = |e: parquet::errors::ParquetError| WhatIfError::new(format!("{file}: not a readable Parquet file: {e}"));
    let reader = SerializedFileReader::new(Bytes::from(bytes)).map_err(bad)?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let find = |name: &str| (0..schema.num_columns()).find(|&c| schema.column(c).path().string() == name);
    let names: Vec<&str> = INT_COLUMNS
        .iter()
        .chain(&TIME_COLUMNS)
        .chain(&["optype"])
        .copied()
        .collect();
    let missing: Vec<&str> = names.iter().copied().filter(|c| find(c).is_none()).collect();
    if !missing.is_empty() {
        return Err(WhatIfError::new(format!(
            "{file}: the schema has no column {}; a per-op trace has the columns {}",
            missing.join(", "),
            required_columns()
        )));
    }
    let mut raw = RawColumns {
        ints: vec![Vec::new(); 8],
        times: vec![Vec::new(); 2],
        optype: Vec::new(),
    };
    let mut offset = 0;
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g).map_err(bad)?;
        let rows = usize::try_from(group.metadata().num_rows()).unwrap_or(0);
        let ctx = Ctx {
            file,
            group: group.as_ref(),
            rows,
            offset,
        };
        for (k, name) in INT_COLUMNS.iter().enumerate() {
            raw.ints[k].extend(ctx.ints(find(name).unwrap_or_default(), name)?);
        }
        for (k, name) in TIME_COLUMNS.iter().enumerate() {
            raw.times[k].extend(ctx.floats(find(name).unwrap_or_default(), name)?);
        }
        raw.optype.extend(ctx.optypes(find("optype").unwrap_or_default())?);
        offset += rows;
    }
    Ok(raw)
}

/// One row group being read.
struct Ctx<'a> {
    file: &'a str,
    group: &'a dyn RowGroupReader,
    rows: usize,
    /// Rows in the groups before this one, for messages.
    offset: usize,
}

impl Ctx<'_> {
    fn error(&self, what: String) -> WhatIfError {
        WhatIfError::new(format!("{}: {what}", self.file))
    }

    fn reader(&self, c: usize) -> Result<ColumnReader, WhatIfError> {
        self.group
            .get_column_reader(c)
            .map_err(|e| self.error(format!("cannot read a column: {e}")))
    }

    /// Every value of a column, refusing nulls.
    fn values<T: DataType>(&self, mut reader: ColumnReaderImpl<T>, name: &str) -> Result<Vec<T::T>, WhatIfError> {
        let mut values = Vec::with_capacity(self.rows);
        let mut levels = Vec::with_capacity(self.rows);
        let mut records = 0;
        while records < self.rows {
            let before = values.len();
            let (read, _, _) = reader
                .read_records(self.rows - records, Some(&mut levels), None, &mut values)
                .map_err(|e| self.error(format!("column {name}: {e}")))?;
            if read == 0 {
                break;
            }
            if values.len() - before < read {
                let max = levels.iter().copied().max().unwrap_or(0);
                let null = levels.iter().position(|&l| l < max).unwrap_or(0);
                return Err(self.error(format!(
                    "row {}: column {name} is null; every row needs a value",
                    self.offset + records + null + 1
                )));
            }
            levels.clear();
            records += read;
        }
        if records != self.rows {
            return Err(self.error(format!("column {name} has {records} values for {} rows", self.rows)));
        }
        Ok(values)
    }

    fn ints(&self, c: usize, name: &str) -> Result<Vec<i64>, WhatIfError> {
        match self.reader(c)? {
            ColumnReader::Int32ColumnReader(r) => Ok(self.values(r, name)?.into_iter().map(i64::from).collect()),
            ColumnReader::Int64ColumnReader(r) => self.values(r, name),
            _ => Err(self.wrong_type(c, name, "integers")),
        }
    }

    fn floats(&self, c: usize, name: &str) -> Result<Vec<f64>, WhatIfError> {
        match self.reader(c)? {
            ColumnReader::FloatColumnReader(r) => Ok(self.values(r, name)?.into_iter().map(f64::from).collect()),
            ColumnReader::DoubleColumnReader(r) => self.values(r, name),
            _ => Err(self.wrong_type(c, name, "floats (seconds)")),
        }
    }

    fn optypes(&self, c: usize) -> Result<Vec<OpType>, WhatIfError> {
        let ColumnReader::ByteArrayColumnReader(r) = self.reader(c)? else {
            return Err(self.wrong_type(c, "optype", "strings"));
        };
        let mut known: HashMap<Vec<u8>, OpType> = HashMap::new();
        let values = self.values(r, "optype")?;
        let mut out = Vec::with_capacity(values.len());
        for (i, v) in values.iter().enumerate() {
            let t = match known.get(v.data()) {
                Some(&t) => t,
                None => {
                    let name = String::from_utf8_lossy(v.data());
                    let t = parse_optype(&name).map_err(|e| self.error(format!("row {}: {e}", self.offset + i + 1)))?;
                    known.insert(v.data().to_vec(), t);
                    t
                }
            };
            out.push(t);
        }
        Ok(out)
    }

    fn wrong_type(&self, c: usize, name: &str, want: &str) -> WhatIfError {
        let physical: Physical = self.group.metadata().column(c).column_type();
        self.error(format!("column {name} holds {physical} values; accepted: {want}"))
    }
}
