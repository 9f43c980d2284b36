//! The request and response types of the query routes (every field
//! documented: they are the OpenAPI document's schemas).

use super::*;

/// How patterns are read.
#[derive(Deserialize, ToSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SyntaxName {
    /// Fixed strings (`-F`).
    Literal,
    /// Regular expressions (the default, as the CLI).
    #[default]
    Regex,
    /// `*` any run of bytes, `?` one byte (`--wildcard`).
    Wildcard,
    /// Within `fuzzy_k` edits (`--fuzzy K`).
    Fuzzy,
}

/// What a search answers with.
#[derive(Deserialize, ToSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OutputKind {
    /// Selected lines as NDJSON in ripgrep's `--json` schema (the default).
    #[default]
    Lines,
    /// One JSON object: the selected lines per file and in total.
    Count,
    /// NDJSON: one `{"type":"only_match","data":{"path","line_number",
    /// "absolute_offset","match","patterns"}}` per match (the offset is the
    /// match's), then `{"type":"summary","data":{"matched_lines","matches"}}`.
    OnlyMatching,
    /// One JSON object: the files with a selected line.
    FilesWithMatches,
}

/// Which backend runs the query (the routing point decides for `auto`).
#[derive(Deserialize, ToSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BackendName {
    /// The routing point chooses.
    #[default]
    Auto,
    /// The CPU engine.
    Cpu,
    /// The GPU, or an error (422) saying why not.
    Gpu,
}

impl BackendName {
    pub(crate) fn choice(self) -> BackendChoice {
        match self {
            BackendName::Auto => BackendChoice::Auto,
            BackendName::Cpu => BackendChoice::Cpu,
            BackendName::Gpu => BackendChoice::Gpu,
        }
    }
}

/// A request type whose first fields are the query's, as `POST
/// /api/v1/search` names them (`patterns` or `watchlist`, `syntax`,
/// `fuzzy_k`, `ignore_case`, `word`, `line`): written once for the
/// search, the tail and the per-pattern counts.
macro_rules! with_query_fields {
    ($(#[$m:meta])* pub struct $name:ident { $($rest:tt)* }) => {
        $(#[$m])*
        pub struct $name {
            /// Patterns; a line is selected when any matches (`-e`,
            /// repeatable). Required unless `watchlist` is given.
            #[serde(default)]
            pub patterns: Vec<String>,
            /// A watchlist's name instead of `patterns` (its patterns and
            /// `-i`, as compiled when it was defined; the other query
            /// fields not set).
            #[serde(default)]
            pub watchlist: Option<String>,
            /// How the patterns are read (default `regex`).
            #[serde(default)]
            pub syntax: SyntaxName,
            /// Edits allowed with `syntax: fuzzy` (0..=3, default 1).
            #[schema(maximum = 3)]
            #[serde(default)]
            pub fuzzy_k: Option<u8>,
            /// `-i`.
            #[serde(default)]
            pub ignore_case: bool,
            /// `-w`: whole words.
            #[serde(default)]
            pub word: bool,
            /// `-x`: whole lines.
            #[serde(default)]
            pub line: bool,
            $($rest)*
        }
    };
}
pub(crate) use with_query_fields;

with_query_fields! {
/// `POST /api/v1/search`.
#[derive(Deserialize, ToSchema, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// `-v`: select lines that do not match.
    #[serde(default)]
    pub invert: bool,
    /// `lines` (default), `count`, `only_matching`, `files_with_matches`.
    #[serde(default)]
    pub output: OutputKind,
    /// `-m`: at most this many selected lines per file.
    #[serde(default)]
    pub max_count: Option<u64>,
    /// `-B`: context lines before each match (`lines` output).
    #[serde(default)]
    pub before: u64,
    /// `-A`: context lines after each match (`lines` output).
    #[serde(default)]
    pub after: u64,
    /// Lines at or after this time (`2026-11-20T10:00`, epoch seconds, or a
    /// duration before the newest line: `15m`), through the stats columns;
    /// empty: no bound.
    #[schema(
        pattern = r"^ *(([0-9]{1,6}(ms|s|m|h|d|w)){1,4}|[0-9]{10}|[0-9]{13}|20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z?)?)? *$"
    )]
    #[serde(default)]
    pub since: Option<String>,
    /// Lines before this time (same forms as `since`; empty: no bound).
    #[schema(
        pattern = r"^ *(([0-9]{1,6}(ms|s|m|h|d|w)){1,4}|[0-9]{10}|[0-9]{13}|20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z?)?)? *$"
    )]
    #[serde(default)]
    pub until: Option<String>,
    /// Only these served files (by name, as `/health`'s loader named them;
    /// an unknown name is a 400).
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// Add the routing decision (`count`, `files_with_matches`).
    #[serde(default)]
    pub explain: bool,
    /// `auto` (default), `cpu`, `gpu`.
    #[serde(default)]
    pub backend: BackendName,
    /// At most this many selected lines in this answer (`lines`,
    /// `only_matching`); the response header `x-logsieve-next-cursor`
    /// then holds the cursor of the next page, when there is one.
    #[serde(default)]
    pub limit: Option<u64>,
    /// Where the page starts: a previous answer's `x-logsieve-next-cursor`.
    #[serde(default)]
    pub cursor: Option<String>,
}
}

/// Which backend ran, and why.
#[derive(Serialize, ToSchema)]
pub struct BackendInfo {
    /// What ran: `cpu/memmem x2`, `gpu/scan`, ...
    pub name: String,
    /// Why it ran there (a GPU failure that fell back says so).
    pub reason: String,
    /// The routing point's choice: `cpu` or `gpu/KERNEL`.
    pub route: String,
    /// The routing point's reason.
    pub route_reason: String,
    /// True when the request forced the backend.
    pub forced: bool,
    /// Search time in ms.
    pub elapsed_ms: f64,
    /// The planner's decision in words, when `explain` was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<String>,
}

/// One file's count.
#[derive(Serialize, ToSchema)]
pub struct FileCount {
    /// The file's name.
    pub path: String,
    /// Selected lines in it.
    pub count: u64,
}

/// `output: count`.
#[derive(Serialize, ToSchema)]
pub struct CountResponse {
    /// Selected lines over the files searched.
    pub total: u64,
    /// Per file, in corpus order (files with no selected line included).
    pub files: Vec<FileCount>,
    /// The backend and route.
    pub backend: BackendInfo,
}

/// `output: files_with_matches`.
#[derive(Serialize, ToSchema)]
pub struct FilesResponse {
    /// Files with a selected line, in corpus order.
    pub files: Vec<String>,
    /// The backend and route.
    pub backend: BackendInfo,
}

/// The JSON body of a search (`count` or `files_with_matches`): the
/// document's name for "one of the two", as `anyOf` because a corpus with
/// no files gives a body that fits both. Only the OpenAPI document uses it.
pub struct SearchJson;

impl utoipa::PartialSchema for SearchJson {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::AnyOfBuilder::new()
            .item(utoipa::openapi::Ref::from_schema_name("CountResponse"))
            .item(utoipa::openapi::Ref::from_schema_name("FilesResponse"))
            .into()
    }
}

impl utoipa::ToSchema for SearchJson {}

/// `POST /api/v1/stats`: `logsieve stats --json` over the served columns.
#[derive(Deserialize, ToSchema, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct StatsRequest {
    /// Only lines matching one of these (none: every line).
    #[serde(default)]
    pub patterns: Vec<String>,
    /// How the patterns are read (default `regex`).
    #[serde(default)]
    pub syntax: SyntaxName,
    /// Edits allowed with `syntax: fuzzy`.
    #[schema(maximum = 3)]
    #[serde(default)]
    pub fuzzy_k: Option<u8>,
    /// `-i`.
    #[serde(default)]
    pub ignore_case: bool,
    /// `-w`.
    #[serde(default)]
    pub word: bool,
    /// `-v`.
    #[serde(default)]
    pub invert: bool,
    /// Window start (as `search`'s `since`).
    #[schema(
        pattern = r"^ *(([0-9]{1,6}(ms|s|m|h|d|w)){1,4}|[0-9]{10}|[0-9]{13}|20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z?)?)? *$"
    )]
    #[serde(default)]
    pub since: Option<String>,
    /// Window end, exclusive.
    #[schema(
        pattern = r"^ *(([0-9]{1,6}(ms|s|m|h|d|w)){1,4}|[0-9]{10}|[0-9]{13}|20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z?)?)? *$"
    )]
    #[serde(default)]
    pub until: Option<String>,
    /// Fields to count by, nested (`level`, `host`, the server's `--field`s).
    #[serde(default)]
    pub count_by: Vec<String>,
    /// Histogram bucket width (`30s`, `1m`, `1h`).
    #[serde(default)]
    pub histogram: Option<String>,
    /// Only these served files (as `search`'s `files`; an unknown name is
    /// a 400): the stats of their lines alone (`oldest`, `newest` and the
    /// histogram's span theirs too; `since`/`until` durations still count
    /// back from the newest line served). Fewer files than served are
    /// counted on the CPU.
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// `auto` (default), `cpu`, `gpu`.
    #[serde(default)]
    pub backend: BackendName,
}

with_query_fields! {
/// `POST /api/v1/patterns`: per-pattern lines and occurrences (the
/// patterns an IOC list).
#[derive(Deserialize, ToSchema, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct PatternsRequest {
    /// Only patterns that occur (`--patterns-matched`).
    #[serde(default)]
    pub only_matched: bool,
    /// Lines at or after this time (as `search`'s `since`): counts over
    /// the lines in the window only (counted on the CPU).
    #[schema(
        pattern = r"^ *(([0-9]{1,6}(ms|s|m|h|d|w)){1,4}|[0-9]{10}|[0-9]{13}|20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z?)?)? *$"
    )]
    #[serde(default)]
    pub since: Option<String>,
    /// Lines before this time (as `search`'s `until`).
    #[schema(
        pattern = r"^ *(([0-9]{1,6}(ms|s|m|h|d|w)){1,4}|[0-9]{10}|[0-9]{13}|20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z?)?)? *$"
    )]
    #[serde(default)]
    pub until: Option<String>,
    /// Only these served files (as `search`'s `files`; an unknown name is
    /// a 400).
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// `auto` (default), `cpu`, `gpu`.
    #[serde(default)]
    pub backend: BackendName,
}
}

/// One pattern's counts.
#[derive(Serialize, ToSchema)]
pub struct PatternRow {
    /// Its index in the request.
    pub index: usize,
    /// `{"text": ...}` (or `{"bytes": base64}`).
    #[schema(value_type = Object)]
    pub pattern: Value,
    /// Lines that contain it, as if searched alone.
    pub lines: u64,
    /// Its non-overlapping occurrences.
    pub occurrences: u64,
}

/// The per-pattern answer (`--count-per-pattern --json` as one object).
#[derive(Serialize, ToSchema)]
pub struct PatternsResponse {
    /// One row per pattern (only those found with `only_matched`).
    pub patterns: Vec<PatternRow>,
    /// Patterns asked for.
    pub patterns_total: usize,
    /// Patterns found.
    pub patterns_matched: usize,
    /// The backend that counted.
    pub backend: BackendInfo,
}
