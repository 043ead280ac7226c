//! The report as an SVG bar chart (`--svg FILE`): one horizontal bar per row, its ratio
//! lazycl / baseline on a log scale, drawn from the line at 1.0 (lazycl equal to its
//! baseline), the row's name on the left and both figures on the right. A bar is green
//! where lazycl is ahead — below 1 for times, above 1 for rates — and orange where it is
//! behind; a row without a baseline (a reference that was not given) has no bar.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::raw::R;
use crate::table::{Report, Row};

/// Pixels: a row's height, the font's size, and the most characters of a row's name
/// shown (longer names end in "...").
const ROW_HEIGHT: u32 = 22;
const FONT_SIZE: u32 = 13;
const MAX_NAME: usize = 100;

const AHEAD: RGBColor = RGBColor(46, 139, 87);
const BEHIND: RGBColor = RGBColor(230, 126, 34);

/// Whether a smaller figure is better: the unit is a time. Other units are rates.
fn lower_is_better(unit: &str) -> bool {
    matches!(unit, "s" | "ms" | "µs" | "us" | "ns")
}

/// The ratio a row's bar shows, `None` when it has none to show (no baseline, or a
/// figure of zero).
fn ratio(row: &Row) -> Option<f64> {
    let r = row.lazycl / row.baseline;
    (r.is_finite() && r > 0.0).then_some(r)
}

/// `v` with two significant digits, as the axis labels it.
fn short(v: f64) -> String {
    let digits = (1 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

fn name(row: &Row) -> String {
    if row.name.chars().count() <= MAX_NAME {
        row.name.clone()
    } else {
        let cut: String = row.name.chars().take(MAX_NAME - 3).collect();
        format!("{cut}...")
    }
}

/// The row's ratio (two decimals, as the table gives it, or two significant digits below
/// 0.1) and figures.
fn figures(row: &Row) -> String {
    match ratio(row) {
        Some(r) => format!(
            "{}  ({:.3} against {:.3} {}, {})",
            if r >= 0.1 { format!("{r:.2}") } else { short(r) },
            row.lazycl,
            row.baseline,
            row.unit,
            row.baseline_name
        ),
        None => format!("{:.3} {} (no baseline)", row.lazycl, row.unit),
    }
}

/// Writes the chart of `rep`'s rows to `path`.
pub fn write(rep: &Report, path: &Path) -> R<()> {
    if rep.rows.is_empty() {
        return Err("the report has no rows to chart".into());
    }
    let err = |e: DrawingAreaErrorKind<_>| format!("cannot draw {}: {e}", path.display());
    let n = rep.rows.len();
    // The axis: every ratio and 1.0, with room either side.
    let (lo, hi) = rep
        .rows
        .iter()
        .filter_map(ratio)
        .fold((1.0f64, 1.0f64), |(lo, hi), r| (lo.min(r), hi.max(r)));
    let (lo, hi) = (lo / 1.5, hi * 1.5);
    // Widths from the naive font's estimate (0.46 of the font's size a character).
    let char_px = f64::from(FONT_SIZE) * 0.46;
    let widest = |text: &dyn Fn(&Row) -> String| {
        rep.rows
            .iter()
            .map(|r| text(r).chars().count())
            .max()
            .unwrap_or(0) as f64
            * char_px
    };
    let left = widest(&name) as u32 + 24;
    let right = widest(&figures) as u32 + 24;
    let (width, height) = (left + 560 + right, 70 + ROW_HEIGHT * n as u32 + 60);

    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("lazycl / baseline, {}", rep.device),
            ("sans-serif", FONT_SIZE + 5),
        )
        .margin(10)
        .set_label_area_size(LabelAreaPosition::Left, left)
        .set_label_area_size(LabelAreaPosition::Right, right)
        .set_label_area_size(LabelAreaPosition::Bottom, 40)
        .build_cartesian_2d((lo..hi).log_scale(), 0.0..n as f64)
        .map_err(err)?;
    let label = |v: &f64| short(*v);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_desc(
            "lazycl / baseline (log scale; green: lazycl ahead, orange: behind; \
             times are ahead below 1, rates above 1)",
        )
        .x_label_formatter(&label)
        .label_style(("sans-serif", FONT_SIZE))
        .draw()
        .map_err(err)?;

    // Row i (from the top) spans y = n - i - 1 .. n - i.
    let top = |i: usize| (n - i) as f64;
    // A bar is at least 2 pixels long, so that a ratio near 1 on a wide axis still shows
    // which side it is on (its figures give the ratio itself).
    let least = (hi / lo).powf(2.0 / 560.0);
    chart
        .draw_series(rep.rows.iter().enumerate().filter_map(|(i, row)| {
            let r = ratio(row)?;
            let ahead = (r < 1.0) == lower_is_better(row.unit);
            let color = if ahead { AHEAD } else { BEHIND };
            let end = if r >= 1.0 {
                r.max(least)
            } else {
                r.min(1.0 / least)
            };
            Some(Rectangle::new(
                [(1.0, top(i) - 0.2), (end, top(i) - 0.8)],
                color.filled(),
            ))
        }))
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(1.0, 0.0), (1.0, n as f64)],
            BLACK.stroke_width(2),
        )))
        .map_err(err)?;

    let text = ("sans-serif", FONT_SIZE).into_font();
    let left_of = text.color(&BLACK).pos(Pos::new(HPos::Right, VPos::Center));
    let right_of = text.color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, row) in rep.rows.iter().enumerate() {
        let (x0, y) = chart.backend_coord(&(lo, top(i) - 0.5));
        let (x1, _) = chart.backend_coord(&(hi, top(i) - 0.5));
        root.draw(&Text::new(name(row), (x0 - 8, y), left_of.clone()))
            .map_err(err)?;
        root.draw(&Text::new(figures(row), (x1 + 8, y), right_of.clone()))
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}
