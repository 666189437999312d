//! What every experiment's renderers share: a record as an item of a figure
//! list and the figure list of an experiment (one line per figure in text).

use crate::results::schema::{ResultRecord, Run};
use crate::view::{Figure, FigureItem, FigureList, Mark};
use serde_json::Value;

/// `k=v k=v` of a record's parameters.
pub fn params_text(r: &ResultRecord) -> String {
    r.params
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            o => format!("{k}={o}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A record as an item of a figure list: its metric, its parameters, the
/// figure (marked noisy when its spread is above 5% CV, as the list has
/// always marked it) and its notes.
pub fn figure_item(r: &ResultRecord) -> FigureItem {
    let mut figure = Figure::of(r);
    figure.mark = match (&r.value, &r.stats) {
        (Some(_), Some(st)) if st.is_noisy() => Mark::Noisy,
        _ => Mark::Clean,
    };
    FigureItem {
        name: r.metric.clone(),
        params: params_text(r),
        figure,
        notes: r.notes.clone(),
    }
}

/// The figures of experiment `exp` in `run`, under its name; none when the
/// run has no record of it.
pub fn figure_list(exp: &str, run: &Run) -> Option<FigureList> {
    let items: Vec<FigureItem> = run.records_of(exp).map(figure_item).collect();
    (!items.is_empty()).then(|| FigureList {
        heading: Some(exp.to_string()),
        items,
    })
}
