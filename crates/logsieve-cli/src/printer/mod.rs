//! Output: the standard text printer, ripgrep's JSON Lines, the per-pattern
//! report and the stats reports. Printers write to any `Write`; they choose
//! nothing about the search.

pub mod json;
pub mod per_pattern;
pub mod standard;
pub mod stats;

pub use json::JsonPrinter;
pub use standard::Printer;
