//! A record's payload (`data`) read back as its family's typed payload, and
//! what happens when it does not parse: an older record after a field
//! changed type, a hand-edited document. [`ResultRecord::payload`] says
//! which record and which field; `ResultRecord::data_as` (the readers'
//! everyday call) answers None, as for a record without data, and notes the
//! failure for the reader that asked to hear of them ([`collect`]), so that
//! `show` says "not readable: ..." instead of leaving the figure out.
//!
//! The common path costs what it did: one `T::deserialize` of the stored
//! value. Only a payload that fails is looked at again (to name its field).

use super::schema::ResultRecord;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::cell::RefCell;
use std::fmt;

/// A stored payload that is not the `T` its reader expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadError {
    /// The record's key (unique within a run).
    pub key: String,
    /// The record, as `show` names it: experiment, metric, parameters.
    pub record: String,
    /// The field that does not parse, as a path (`points[].ns`); None when
    /// serde names none (a missing field is named in `error`).
    pub field: Option<String>,
    /// serde's error, without its position in the text.
    pub error: String,
}

impl fmt::Display for PayloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "payload of {} does not parse: ", self.record)?;
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        f.write_str(&self.error)
    }
}

impl PayloadError {
    /// The one line a reader prints where the figure would have been.
    pub fn line(&self, run_id: &str) -> String {
        format!("not readable: {self} (run {run_id})")
    }
}

impl ResultRecord {
    /// The record's `data` read as the payload type `T` of its family
    /// (fields an older record lacks take their defaults, where `T` says
    /// so); None when there is no data or it is not a `T`. A payload that
    /// is not a `T` is noted for the reader collecting such failures
    /// ([`collect`]), which says so; [`ResultRecord::payload`] gives the
    /// error to its caller.
    pub fn data_as<T: DeserializeOwned>(&self) -> Option<T> {
        self.payload().unwrap_or_else(|e| {
            note(e);
            None
        })
    }

    /// The record's `data` read as the payload type `T` of its family:
    /// Ok(None) when there is no data, an error naming the record and the
    /// field when the data is not a `T` (fields an older record lacks take
    /// their defaults, where `T` says so).
    pub fn payload<T: DeserializeOwned>(&self) -> Result<Option<T>, PayloadError> {
        let Some(data) = self.data.as_ref() else {
            return Ok(None);
        };
        match T::deserialize(data) {
            Ok(t) => Ok(Some(t)),
            Err(e) => Err(explain::<T>(self, data, &e)),
        }
    }
}

thread_local! {
    /// The failures noted while a [`collect`] runs on this thread.
    static NOTED: RefCell<Option<Vec<PayloadError>>> = const { RefCell::new(None) };
}

/// Note `e` for the [`collect`] running on this thread (if any; once per
/// record and error).
fn note(e: PayloadError) {
    NOTED.with(|n| {
        if let Some(list) = n.borrow_mut().as_mut() {
            if !list.contains(&e) {
                list.push(e);
            }
        }
    });
}

/// Run `f` (a reader) and return, beside what it returns, every payload it
/// tried to read that did not parse, in the order met.
pub fn collect<R>(f: impl FnOnce() -> R) -> (R, Vec<PayloadError>) {
    let outer = NOTED.with(|n| n.borrow_mut().replace(Vec::new()));
    let r = f();
    let mine = NOTED.with(|n| std::mem::replace(&mut *n.borrow_mut(), outer));
    let mine = mine.unwrap_or_default();
    // A collect inside another: the outer one hears of these too.
    for e in &mine {
        note(e.clone());
    }
    (r, mine)
}

/// The error of a payload that failed: which record, and which field
/// (found by reading the value again as pretty-printed text, whose error
/// has a line, and walking back up the keys of the lines above it).
fn explain<T: DeserializeOwned>(
    r: &ResultRecord,
    data: &Value,
    e: &serde_json::Error,
) -> PayloadError {
    let mut out = PayloadError {
        key: r.key.clone(),
        record: r.label(),
        field: None,
        error: e.to_string(),
    };
    let Ok(text) = serde_json::to_string_pretty(data) else {
        return out;
    };
    if let Err(e) = serde_json::from_str::<T>(&text) {
        let msg = e.to_string();
        out.error = match msg.rsplit_once(" at line ") {
            Some((m, _)) => m.to_string(),
            None => msg,
        };
        out.field = field_at(&text, e.line());
    }
    out
}

/// The path of keys to line `line` (1-based) of pretty-printed JSON.
fn field_at(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().take(line).collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let key = |l: &str| {
        let t = l.trim_start().strip_prefix('"')?;
        let (k, rest) = t.split_once("\":")?;
        (!k.contains('"') && rest.starts_with(' ')).then(|| k.to_string())
    };
    let last = lines.last()?;
    let mut path = vec![key(last).unwrap_or_else(|| "[]".into())];
    let mut depth = indent(last);
    for l in lines.iter().rev().skip(1) {
        if indent(l) < depth {
            depth = indent(l);
            path.push(key(l).unwrap_or_else(|| "[]".into()));
        }
    }
    // The outermost `{` of the payload itself names nothing.
    path.pop();
    path.reverse();
    let mut s = String::new();
    for p in path {
        if p != "[]" && !s.is_empty() {
            s.push('.');
        }
        s.push_str(&p);
    }
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, Debug, Default)]
    #[serde(default)]
    struct Point {
        size: u64,
        ns: f64,
    }

    #[derive(Deserialize, Debug, Default)]
    #[serde(default)]
    struct Curve {
        points: Vec<Point>,
        level: Option<String>,
    }

    fn rec(data: Value) -> ResultRecord {
        ResultRecord::new("exp", "figure", "ns", false)
            .with_param("cpu", 0)
            .with_data(data)
    }

    #[test]
    fn a_field_of_the_wrong_type_is_named() {
        let r = rec(json!({"points": [{"size": 4096, "ns": 1.0}, {"size": 8192, "ns": "fast"}]}));
        let e = r.payload::<Curve>().unwrap_err();
        assert_eq!(e.field.as_deref(), Some("points[].ns"), "{e}");
        assert!(e.error.starts_with("invalid type: string \"fast\""), "{e}");
        assert_eq!(
            e.to_string(),
            "payload of exp: figure (cpu=0) does not parse: \
             field `points[].ns`: invalid type: string \"fast\", expected f64"
        );
        let e = rec(json!({"level": 3})).payload::<Curve>().unwrap_err();
        assert_eq!(e.field.as_deref(), Some("level"), "{e}");
        assert!(rec(json!({"points": []})).payload::<Curve>().is_ok());
        let none = ResultRecord::new("exp", "figure", "ns", false);
        assert!(none.payload::<Curve>().unwrap().is_none());
    }

    #[test]
    fn data_as_notes_failures_for_a_collecting_reader() {
        let bad = rec(json!({"level": 3}));
        // Not collecting: nothing kept.
        assert!(bad.data_as::<Curve>().is_none());
        let ((), errs) = collect(|| {
            assert!(bad.data_as::<Curve>().is_none());
            assert!(bad.data_as::<Curve>().is_none());
            let other = rec(json!({"points": 1}));
            let ((), inner) = collect(|| assert!(other.data_as::<Curve>().is_none()));
            assert_eq!(inner.len(), 1);
        });
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[0]
            .line("r1")
            .starts_with("not readable: payload of exp"));
        assert!(collect(|| rec(json!({})).data_as::<Curve>()).1.is_empty());
    }
}
