//! The report's table: its rows, printed as markdown or as one JSON object a line, and
//! drawn as a bar chart (`chart.rs`) with `--svg`.

use std::path::PathBuf;

use serde::Serialize;

use crate::chart;
use crate::raw::R;

/// Where the finished report goes.
pub(crate) struct Output {
    pub(crate) json: bool,
    pub(crate) svg: Option<PathBuf>,
}

pub(crate) struct Row {
    pub(crate) name: String,
    pub(crate) lazycl: f64,
    pub(crate) baseline: f64,
    pub(crate) unit: &'static str,
    pub(crate) baseline_name: &'static str,
}

/// A row as `--json` writes it: one object a line (a ratio without a baseline is null).
#[derive(Serialize)]
pub(crate) struct JsonRow<'a> {
    pub(crate) name: &'a str,
    pub(crate) device: &'a str,
    pub(crate) lazycl: f64,
    pub(crate) baseline: f64,
    pub(crate) baseline_name: &'a str,
    pub(crate) unit: &'a str,
    pub(crate) ratio: f64,
}

pub(crate) struct Report {
    pub(crate) device: String,
    pub(crate) rows: Vec<Row>,
}

impl Report {
    pub(crate) fn add(
        &mut self,
        name: impl Into<String>,
        lazycl: f64,
        baseline: f64,
        unit: &'static str,
        baseline_name: &'static str,
    ) {
        let row = Row {
            name: name.into(),
            lazycl,
            baseline,
            unit,
            baseline_name,
        };
        eprintln!(
            "  {:<48} {:>12.3} {:>12.3} {} ({})",
            row.name, row.lazycl, row.baseline, row.unit, row.baseline_name
        );
        self.rows.push(row);
    }

    /// Prints the rows (a table, or JSON lines) and draws the chart if one was asked for.
    pub(crate) fn finish(&self, out: &Output) -> R<()> {
        self.print(out.json)?;
        match &out.svg {
            Some(path) => chart::write(self, path),
            None => Ok(()),
        }
    }

    pub(crate) fn print(&self, json: bool) -> R<()> {
        if json {
            for r in &self.rows {
                let row = JsonRow {
                    name: &r.name,
                    device: &self.device,
                    lazycl: r.lazycl,
                    baseline: r.baseline,
                    baseline_name: r.baseline_name,
                    unit: r.unit,
                    ratio: r.lazycl / r.baseline,
                };
                println!("{}", serde_json::to_string(&row).map_err(|e| e.to_string())?);
            }
            return Ok(());
        }
        println!("device: {}\n", self.device);
        println!("| measurement | lazycl | baseline | unit | baseline is | ratio |");
        println!("|---|---:|---:|---|---|---:|");
        for r in &self.rows {
            println!(
                "| {} | {:.3} | {:.3} | {} | {} | {:.2} |",
                r.name,
                r.lazycl,
                r.baseline,
                r.unit,
                r.baseline_name,
                r.lazycl / r.baseline
            );
        }
        Ok(())
    }
}
