//! The campaign's results table: one row per trial, one column per factor and per metric,
//! written as `results.csv` and `results.jsonl` (the same rows and columns, in trial order).
//!
//! Columns: `trial`, `world` (when the world is a factor), each factor by its name, `repetition`,
//! `seed`, `status` (`ok` | `failed` | `timeout` | `crashed` | `pending`), `exit_code`,
//! `attempts`, `wall_s`, then the metrics read from the trial's results.json: `reason`,
//! `stop_reason`, `error`, `steps`, `sim_time`, `pose.<entity>.{x,y,z,yaw}` for each collected
//! entity, `monitor.<address>.<member>` for every monitor report's scalar members, and
//! `endpoint.<address>.<member>` for each collected endpoint's scalar members (lists stay in
//! results.json). Metric columns appear in the order trials first report them.

use std::io::Write;
use std::path::Path;

use serde_json::Value as Json;

use crate::campaign::document::Campaign;
use crate::campaign::expand::Trial;
use crate::campaign::run::{read_status, trial_dir, TrialStatus};

/// The scalar leaves of `v` under `prefix` (`a.b.c`), lists skipped.
fn leaves(v: &Json, prefix: &str, out: &mut Vec<(String, Json)>) {
    match v {
        Json::Object(m) => {
            for (k, x) in m {
                leaves(x, &format!("{prefix}.{k}"), out);
            }
        }
        Json::Array(_) => {}
        other => out.push((prefix.to_string(), other.clone())),
    }
}

/// Yaw (rad) of an `[x, y, z, w]` quaternion.
fn yaw(q: &[f64]) -> f64 {
    crate::math::yaw_of(&[q[3], q[0], q[1], q[2]])
}

/// The metric cells of one trial's results.json.
pub fn metrics(c: &Campaign, results: &Json) -> Vec<(String, Json)> {
    let mut out = Vec::new();
    for k in ["reason", "stop_reason", "error", "steps", "sim_time"] {
        out.push((k.to_string(), results.get(k).cloned().unwrap_or(Json::Null)));
    }
    for e in &c.collect.poses {
        let p = &results["poses"][e];
        let pos: Vec<f64> = p["position"]
            .as_array()
            .map(|a| a.iter().filter_map(Json::as_f64).collect())
            .unwrap_or_default();
        let q: Vec<f64> = p["orientation"]
            .as_array()
            .map(|a| a.iter().filter_map(Json::as_f64).collect())
            .unwrap_or_default();
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            out.push((
                format!("pose.{e}.{axis}"),
                pos.get(i).map(|&v| Json::from(v)).unwrap_or_default(),
            ));
        }
        let y = if q.len() == 4 { Json::from(yaw(&q)) } else { Json::Null };
        out.push((format!("pose.{e}.yaw"), y));
    }
    if c.collect.monitors {
        if let Some(m) = results["monitors"].as_object() {
            for (addr, r) in m {
                leaves(&r["value"], &format!("monitor.{addr}"), &mut out);
            }
        }
    }
    for addr in &c.collect.endpoints {
        leaves(&results["endpoints"][addr]["value"], &format!("endpoint.{addr}"), &mut out);
    }
    out
}

/// One trial's row (factor and bookkeeping cells, then its metrics when it has results).
pub fn row(
    c: &Campaign,
    t: &Trial,
    status: Option<&TrialStatus>,
    results: Option<&Json>,
) -> Vec<(String, Json)> {
    let mut r: Vec<(String, Json)> = vec![("trial".into(), Json::from(t.index))];
    if c.world_is_factor {
        r.push(("world".into(), Json::from(t.world.written.clone())));
    }
    r.extend(t.levels.iter().cloned());
    r.push(("repetition".into(), Json::from(t.repetition)));
    r.push(("seed".into(), Json::from(t.seed)));
    let (st, code, attempts, wall) = match status {
        Some(s) => (
            Json::from(s.status.clone()),
            s.exit_code.map(Json::from).unwrap_or_default(),
            Json::from(s.attempts),
            Json::from(s.wall_s),
        ),
        None => (Json::from("pending"), Json::Null, Json::from(0), Json::Null),
    };
    r.push(("status".into(), st));
    r.push(("exit_code".into(), code));
    r.push(("attempts".into(), attempts));
    r.push(("wall_s".into(), wall));
    if let Some(res) = results {
        r.extend(metrics(c, res));
    }
    r
}

/// A CSV cell: strings as they are, numbers and booleans as JSON writes them, null empty.
fn csv_cell(v: &Json) -> String {
    match v {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every trial's row, from what is on disk under `dir`.
pub fn rows(c: &Campaign, trials: &[Trial], dir: &Path) -> Vec<Vec<(String, Json)>> {
    trials
        .iter()
        .map(|t| {
            let td = trial_dir(dir, t.index);
            let status = read_status(&td);
            // A failed re-run keeps the earlier good results.json; its own summary is the row's.
            let failed = td.join("results.failed.json");
            let file = if status.as_ref().is_some_and(|s| !s.is_ok()) && failed.is_file() {
                failed
            } else {
                td.join("results.json")
            };
            let results = std::fs::read_to_string(file)
                .ok()
                .and_then(|s| serde_json::from_str::<Json>(&s).ok());
            row(c, t, status.as_ref(), results.as_ref())
        })
        .collect()
}

/// The table's files: `results.csv`, `results.jsonl`.
pub const TABLE_FILES: [&str; 2] = ["results.csv", "results.jsonl"];

/// Refuse, before any trial runs, a table file that exists and is not a plain file (a symbolic
/// link — to `/dev/full`, say —, a folder, a device): the table would be written through it, or
/// fail, only after every trial had run.
pub fn check_table_files(dir: &Path) -> Result<(), String> {
    for name in TABLE_FILES {
        let p = dir.join(name);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if !m.file_type().is_file() => {
                return Err(format!(
                    "{} is not a plain file (a symbolic link, a folder or a device): the results \
                     table is written there after the trials; remove it (the table is rewritten \
                     from the trial folders) and run again",
                    p.display()
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Write `results.csv` and `results.jsonl` under `dir`.
pub fn write_table(c: &Campaign, trials: &[Trial], dir: &Path) -> Result<(), String> {
    let rows = rows(c, trials, dir);
    let mut columns: Vec<String> = Vec::new();
    for r in &rows {
        for (k, _) in r {
            if !columns.contains(k) {
                columns.push(k.clone());
            }
        }
    }
    let csv_path = dir.join("results.csv");
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", csv_path.display());
    let mut w = csv::Writer::from_path(&csv_path).map_err(|e| err(&e))?;
    w.write_record(&columns).map_err(|e| err(&e))?;
    let mut jsonl = String::new();
    for r in &rows {
        let get =
            |k: &str| r.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default();
        let cells: Vec<String> = columns.iter().map(|k| csv_cell(&get(k))).collect();
        w.write_record(&cells).map_err(|e| err(&e))?;
        // Columns in table order (a serde_json Map would sort them).
        let fields: Vec<String> =
            columns.iter().map(|k| format!("{}:{}", Json::from(k.clone()), get(k))).collect();
        jsonl.push('{');
        jsonl.push_str(&fields.join(","));
        jsonl.push_str("}\n");
    }
    w.flush().map_err(|e| err(&e))?;
    let jp = dir.join("results.jsonl");
    let mut f = std::fs::File::create(&jp).map_err(|e| format!("{}: {e}", jp.display()))?;
    f.write_all(jsonl.as_bytes()).map_err(|e| format!("{}: {e}", jp.display()))?;
    Ok(())
}
