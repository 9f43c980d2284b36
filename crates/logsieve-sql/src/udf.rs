//! SQL functions over the session: `matches(line, 'watchlist')`, and
//! `grep(line, 'pattern' [, 'flags'])`, the command line's search.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{Array, BooleanArray, ListBuilder, UInt32Builder};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use crate::Source;

/// `matches(line, 'name')`: the indices (ascending, as in
/// `watchlist_<name>.idx`) of watchlist `name`'s patterns that `line`
/// holds; an empty list when none.
#[derive(Debug)]
pub struct Matches {
    source: Arc<dyn Source>,
    signature: Signature,
}

impl Matches {
    /// The function over `source`'s watchlists.
    pub fn new(source: Arc<dyn Source>) -> Matches {
        let sig = |a: DataType| TypeSignature::Exact(vec![a, DataType::Utf8]);
        Matches {
            source,
            signature: Signature::one_of(
                vec![sig(DataType::Utf8), sig(DataType::Binary)],
                Volatility::Stable,
            ),
        }
    }
}

impl PartialEq for Matches {
    fn eq(&self, o: &Matches) -> bool {
        Arc::ptr_eq(&self.source, &o.source)
    }
}

impl Eq for Matches {}

impl Hash for Matches {
    fn hash<H: Hasher>(&self, h: &mut H) {
        "matches".hash(h);
    }
}

/// The item type of `matches`' list.
fn item() -> Arc<Field> {
    Arc::new(Field::new("item", DataType::UInt32, true))
}

impl ScalarUDFImpl for Matches {
    fn name(&self) -> &str {
        "matches"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::List(item()))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let name = match &args.args[1] {
            ColumnarValue::Scalar(ScalarValue::Utf8(Some(s))) => s.clone(),
            _ => {
                return exec_err!("matches(line, 'name'): the watchlist's name is a string literal")
            }
        };
        let snap = self
            .source
            .snapshot()
            .map_err(datafusion::common::DataFusionError::Execution)?;
        let Some(w) = snap.session().watchlist(&name) else {
            let known: Vec<String> = snap
                .session()
                .watchlists()
                .iter()
                .map(|w| w.name().to_string())
                .collect();
            return exec_err!(
                "matches: no watchlist {name:?} (defined: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        };
        let arrays = ColumnarValue::values_to_arrays(&args.args[..1])?;
        let lines = &arrays[0];
        let mut out = ListBuilder::new(UInt32Builder::new()).with_field(item());
        let mut add = |bytes: Option<&[u8]>| match bytes {
            None => out.append_null(),
            Some(b) => {
                out.values().append_slice(&w.patterns_in(b));
                out.append(true);
            }
        };
        if let Some(a) = lines
            .as_any()
            .downcast_ref::<datafusion::arrow::array::StringArray>()
        {
            for i in 0..a.len() {
                add(a.is_valid(i).then(|| a.value(i).as_bytes()));
            }
        } else if let Some(a) = lines
            .as_any()
            .downcast_ref::<datafusion::arrow::array::BinaryArray>()
        {
            for i in 0..a.len() {
                add(a.is_valid(i).then(|| a.value(i)));
            }
        } else {
            return exec_err!("matches: the first argument is a string or binary column");
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}

/// `grep(line, 'pattern' [, 'flags'])`: the line matches as `logsieve
/// [-F] [-i] [-w] [-x] pattern` selects it ([`crate::pushdown::grep_text`]
/// reads the flags). Pushed down, the engine answers it; elsewhere (a
/// projection, an `OR` with a test the engine does not answer) each line
/// is tested here, by the same query's CPU matcher.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Grep {
    signature: Signature,
}

impl Grep {
    /// The function.
    pub fn new() -> Grep {
        let sig = |a: DataType, n: usize| {
            let mut v = vec![a];
            v.extend(std::iter::repeat_n(DataType::Utf8, n));
            TypeSignature::Exact(v)
        };
        Grep {
            signature: Signature::one_of(
                vec![
                    sig(DataType::Utf8, 1),
                    sig(DataType::Binary, 1),
                    sig(DataType::Utf8, 2),
                    sig(DataType::Binary, 2),
                ],
                Volatility::Immutable,
            ),
        }
    }
}

impl Default for Grep {
    fn default() -> Grep {
        Grep::new()
    }
}

impl ScalarUDFImpl for Grep {
    fn name(&self) -> &str {
        "grep"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let text = |i: usize| match args.args.get(i) {
            None => Ok(String::new()),
            Some(ColumnarValue::Scalar(ScalarValue::Utf8(Some(s)))) => Ok(s.clone()),
            Some(_) => exec_err!(
                "grep(line, pattern, flags): the pattern and the flags are string literals"
            ),
        };
        let t = crate::pushdown::grep_text(&text(1)?, &text(2)?)
            .map_err(datafusion::common::DataFusionError::Execution)?;
        let q = crate::select::query(&[&t])
            .map_err(|e| datafusion::common::DataFusionError::Execution(format!("grep: {e}")))?;
        let arrays = ColumnarValue::values_to_arrays(&args.args[..1])?;
        let lines = &arrays[0];
        let out: BooleanArray = if let Some(a) = lines
            .as_any()
            .downcast_ref::<datafusion::arrow::array::StringArray>()
        {
            (0..a.len())
                .map(|i| {
                    a.is_valid(i)
                        .then(|| q.is_match_line(a.value(i).as_bytes()))
                })
                .collect()
        } else if let Some(a) = lines
            .as_any()
            .downcast_ref::<datafusion::arrow::array::BinaryArray>()
        {
            (0..a.len())
                .map(|i| a.is_valid(i).then(|| q.is_match_line(a.value(i))))
                .collect()
        } else {
            return exec_err!("grep: the first argument is a string or binary column");
        };
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}
