//! An answer written as a table, CSV, JSON, NDJSON or an Arrow IPC
//! stream.

use std::io::Write;

use datafusion::arrow::error::ArrowError;

use crate::Answer;

/// Reads an Arrow IPC stream (a server's answer to `format: arrow`).
pub use datafusion::arrow::ipc::reader::StreamReader;

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// An aligned text table (and a row count).
    Table,
    /// CSV with a header row.
    Csv,
    /// One JSON array of objects.
    Json,
    /// One JSON object per line.
    Ndjson,
    /// An Arrow IPC stream.
    Arrow,
}

impl Format {
    /// Every format, by name.
    pub const ALL: [(&'static str, Format); 5] = [
        ("table", Format::Table),
        ("csv", Format::Csv),
        ("json", Format::Json),
        ("ndjson", Format::Ndjson),
        ("arrow", Format::Arrow),
    ];

    /// The format named `s`.
    pub fn from_name(s: &str) -> Option<Format> {
        Format::ALL.iter().find(|(n, _)| *n == s).map(|&(_, f)| f)
    }
}

/// Writes `a` to `out` as `f`.
pub fn write(out: &mut dyn Write, a: &Answer, f: Format) -> Result<(), ArrowError> {
    use datafusion::arrow::{csv, ipc, json};
    // No batch: one empty one, so CSV has its header and Arrow its schema.
    let empty = [datafusion::arrow::array::RecordBatch::new_empty(
        a.schema.clone(),
    )];
    let batches = if a.batches.is_empty() {
        &empty[..]
    } else {
        &a.batches[..]
    };
    match f {
        Format::Table => {
            let t = datafusion::arrow::util::pretty::pretty_format_batches(batches)?;
            writeln!(out, "{t}")?;
            let more = if a.truncated { " (more were cut)" } else { "" };
            writeln!(
                out,
                "{} row{}{more}",
                a.rows,
                if a.rows == 1 { "" } else { "s" }
            )?;
        }
        Format::Csv => {
            let mut w = csv::WriterBuilder::new().with_header(true).build(out);
            for b in batches {
                w.write(b)?;
            }
        }
        // An empty answer is `[]`, as any JSON reader wants.
        Format::Json if a.rows == 0 => writeln!(out, "[]")?,
        Format::Json => {
            let mut w = json::ArrayWriter::new(&mut *out);
            for b in &a.batches {
                w.write(b)?;
            }
            w.finish()?;
            writeln!(out)?;
        }
        Format::Ndjson => {
            let mut w = json::LineDelimitedWriter::new(out);
            for b in &a.batches {
                w.write(b)?;
            }
            w.finish()?;
        }
        Format::Arrow => {
            let mut w = ipc::writer::StreamWriter::try_new(out, &a.schema)?;
            for b in batches {
                w.write(b)?;
            }
            w.finish()?;
        }
    }
    Ok(())
}
