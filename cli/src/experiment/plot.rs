//! The paper's two figures as SVG, drawn with `plotters`.
//!
//! * [`figure1`] ([`rate_figure`] for any layouts): the measured rate over
//!   p against n, one panel per c, one
//!   marker per variant with its 95% binomial interval as an error bar, and
//!   each layout's exact rate (dashed) and two-hash model (dotted) as lines.
//! * [`figure2`]: the histogram of Q at one point for chosen variants,
//!   against `T phi(x; qp, qp(1-p))`, the normal curve of the paper's
//!   Figure 2.
//!
//! Colours are fixed per variant (the order of [`Variant::all`]) and marker
//! shapes per layout, so a variant looks the same in every figure and its
//! legend entry carries the same label as the tables.

#![forbid(unsafe_code)]

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Row, Variant, invalid};
use lesshash::{Error, Layout, Scheme};

/// Tableau 10: distinguishable colours for up to ten variants.
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn draw_error(e: impl std::fmt::Display) -> Error {
    Error::Io {
        context: "drawing a figure",
        source: std::io::Error::other(e.to_string()),
    }
}

/// The colour of a variant: by its position in [`Variant::all`] (a left-out
/// variant takes its stand-in's colour; it answers the same).
fn colour(v: Variant) -> RGBColor {
    let v = v.same_answers_as().unwrap_or(v);
    let i = Variant::all().iter().position(|&x| x == v).unwrap_or(0);
    COLOURS[i % COLOURS.len()]
}

/// The marker of a variant: by its layout's position in [`Layout::ALL`].
fn shape(v: Variant) -> usize {
    Layout::ALL.iter().position(|&l| l == v.layout).unwrap_or(0)
}

/// Draws a marker of `shape` at pixel position `(x, y)` on `area`.
fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    shape: usize,
    colour: RGBColor,
) -> Result<(), Error> {
    let r = 4;
    let result = match shape % 4 {
        0 => area.draw(&Circle::new((x, y), r, colour.filled())),
        1 => area.draw(&Polygon::new(
            vec![(x, y - r - 1), (x - r - 1, y + r), (x + r + 1, y + r)],
            colour.filled(),
        )),
        2 => area.draw(&Rectangle::new(
            [(x - r, y - r), (x + r, y + r)],
            colour.stroke_width(2),
        )),
        _ => area.draw(&Cross::new((x, y), r, colour.stroke_width(2))),
    };
    result.map_err(draw_error)
}

/// The distinct values of a field over rows, in first-seen order.
fn distinct<T: PartialEq + Copy>(rows: &[Row], f: impl Fn(&Row) -> T) -> Vec<T> {
    let mut out = Vec::new();
    for r in rows {
        let v = f(r);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The layouts of the paper's Figure 1: its standard, double and extended
/// schemes use one array (classic), its partition scheme the partitioned
/// layout.
pub const PAPER_LAYOUTS: [Layout; 2] = [Layout::Classic, Layout::Partitioned];

/// Figure 1: measured rate over p against n (log scale), one panel per c,
/// for the rows of the paper's layouts ([`PAPER_LAYOUTS`]).
///
/// # Errors
/// [`Error::InvalidParameter`] (`rows`) if there is nothing to plot;
/// [`Error::Io`] if the file cannot be drawn.
pub fn figure1(rows: &[Row], path: &Path) -> Result<(), Error> {
    let paper: Vec<Row> = rows
        .iter()
        .filter(|r| PAPER_LAYOUTS.contains(&r.variant.layout))
        .cloned()
        .collect();
    rate_figure(
        &paper,
        "False-positive rate over p = (1 - e^(-k/c))^k: Kirsch & Mitzenmacher Sec. 8 (Figure 1)",
        path,
    )
}

/// Figure 1's plot for every row given, whatever its layout, under `title`
/// (the experiment's extra figure for the layouts beyond the paper's).
///
/// # Errors
/// [`Error::InvalidParameter`] (`rows`) if there is nothing to plot;
/// [`Error::Io`] if the file cannot be drawn.
pub fn rate_figure(rows: &[Row], title: &str, path: &Path) -> Result<(), Error> {
    if rows.is_empty() {
        return Err(invalid("rows", "nothing to plot"));
    }
    let cs = distinct(rows, |r| r.bits_per_key);
    let variants = distinct(rows, |r| r.variant);
    let layouts = distinct(rows, |r| r.variant.layout);
    let cols = cs.len().min(2);
    let panel_rows = cs.len().div_ceil(cols);
    let legend_lines = (variants.len() + layouts.len() * 2).div_ceil(3);
    let legend_h = 16 + 18 * legend_lines as u32;
    let (w, h) = (560 * cols as u32, 400 * panel_rows as u32 + 40 + legend_h);
    let base = SVGBackend::new(path, (w, h)).into_drawing_area();
    base.fill(&WHITE).map_err(draw_error)?;
    let root = base.titled(title, ("sans-serif", 17)).map_err(draw_error)?;
    let (top, legend) = root.split_vertically(400 * panel_rows as u32);
    let areas = top.split_evenly((panel_rows, cols));

    for (&c, area) in cs.iter().zip(&areas) {
        let at_c: Vec<&Row> = rows.iter().filter(|r| r.bits_per_key == c).collect();
        let ns = distinct(rows, |r| r.items);
        let (n_lo, n_hi) = ns.iter().fold((f64::MAX, f64::MIN), |(a, b), &n| {
            (a.min(n as f64), b.max(n as f64))
        });
        let (mut y_lo, mut y_hi) = (f64::MAX, f64::MIN);
        for r in &at_c {
            for y in [
                r.ci95.0 / r.p,
                r.ci95.1 / r.p,
                r.ideal_fpr / r.p,
                r.model_fpr / r.p,
            ] {
                y_lo = y_lo.min(y);
                y_hi = y_hi.max(y);
            }
        }
        y_lo = y_lo.min(1.0);
        y_hi = y_hi.max(1.0);
        let pad = (y_hi - y_lo).max(0.02) * 0.08;
        let first = at_c[0];
        let caption = format!("c = {c}, k = {}, p = {:.4e}", first.hashes, first.p);
        let mut chart = ChartBuilder::on(area)
            .caption(caption, ("sans-serif", 15))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d((n_lo / 1.6..n_hi * 1.6).log_scale(), y_lo - pad..y_hi + pad)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc("n (items)")
            .y_desc("FPR / p")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.2}"))
            .light_line_style(WHITE)
            .draw()
            .map_err(draw_error)?;
        // y = 1: the asymptotic p.
        chart
            .draw_series(LineSeries::new(
                [(n_lo / 1.6, 1.0), (n_hi * 1.6, 1.0)],
                BLACK.stroke_width(1),
            ))
            .map_err(draw_error)?;
        // Each layout's exact ideal rate (dashed) and two-hash model (dotted).
        for &layout in &layouts {
            let grey = layout_grey(layout);
            let mut ideal = Vec::new();
            let mut model = Vec::new();
            for &n in &ns {
                if let Some(r) = at_c
                    .iter()
                    .find(|r| r.items == n && r.variant.layout == layout)
                {
                    ideal.push((n as f64, r.ideal_fpr / r.p));
                    let two_hash = Variant {
                        layout,
                        scheme: Scheme::default(),
                    };
                    model.push((n as f64, two_hash.model_fpr(r.bits, n, r.hashes) / r.p));
                }
            }
            chart
                .draw_series(DashedLineSeries::new(ideal, 6, 4, grey.stroke_width(2)))
                .map_err(draw_error)?;
            chart
                .draw_series(DashedLineSeries::new(model, 2, 3, grey.stroke_width(2)))
                .map_err(draw_error)?;
        }
        // The measurements, dodged horizontally so error bars do not overlap.
        // `map_coordinate` gives absolute backend pixels, so they are drawn
        // on the unshifted `base` area (a panel's own area would add its
        // offset a second time).
        let plotting_area = chart.plotting_area();
        let nv = variants.len() as f64;
        for (j, &v) in variants.iter().enumerate() {
            let col = colour(v);
            let dodge = 1.0 + 0.035 * (j as f64 - (nv - 1.0) / 2.0);
            for r in at_c.iter().filter(|r| r.variant == v) {
                let x = r.items as f64 * dodge;
                let lo = plotting_area.map_coordinate(&(x, r.ci95.0 / r.p));
                let hi = plotting_area.map_coordinate(&(x, r.ci95.1 / r.p));
                let mid = plotting_area.map_coordinate(&(x, r.mean_fpr / r.p));
                base.draw(&PathElement::new(vec![lo, hi], col.stroke_width(1)))
                    .map_err(draw_error)?;
                for end in [lo, hi] {
                    base.draw(&PathElement::new(
                        vec![(end.0 - 3, end.1), (end.0 + 3, end.1)],
                        col.stroke_width(1),
                    ))
                    .map_err(draw_error)?;
                }
                marker(&base, mid, shape(v), col)?;
            }
        }
    }
    draw_legend(&legend, &variants, &layouts)?;
    base.present().map_err(draw_error)?;
    Ok(())
}

/// A grey per layout for the formula lines.
fn layout_grey(layout: Layout) -> RGBColor {
    let i = Layout::ALL.iter().position(|&l| l == layout).unwrap_or(0);
    let g = [0u8, 120, 60, 170][i % 4];
    RGBColor(g, g, g)
}

/// The legend strip of Figure 1: one entry per variant and per formula line.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    variants: &[Variant],
    layouts: &[Layout],
) -> Result<(), Error> {
    let (w, _) = area.dim_in_pixel();
    let col_w = (w as i32 - 20) / 3;
    let style = ("sans-serif", 12).into_font().color(&BLACK);
    let mut i = 0;
    let slot = |i: usize| (10 + (i % 3) as i32 * col_w, 10 + (i / 3) as i32 * 18);
    for &v in variants {
        let (x, y) = slot(i);
        marker(area, (x + 10, y + 6), shape(v), colour(v))?;
        area.draw_text(&v.label(), &style, (x + 24, y))
            .map_err(draw_error)?;
        i += 1;
    }
    for &layout in layouts {
        for (dash, what) in [
            (6, "exact, ideal hashing"),
            (2, "model with pair collisions"),
        ] {
            let (x, y) = slot(i);
            let grey = layout_grey(layout);
            let mut xs = x;
            while xs < x + 20 {
                area.draw(&PathElement::new(
                    vec![(xs, y + 6), ((xs + dash).min(x + 20), y + 6)],
                    grey.stroke_width(2),
                ))
                .map_err(draw_error)?;
                xs += dash + if dash == 6 { 4 } else { 3 };
            }
            area.draw_text(&format!("{}: {what}", layout.name()), &style, (x + 24, y))
                .map_err(draw_error)?;
            i += 1;
        }
    }
    Ok(())
}

/// Figure 2: the histogram of Q at `(bits_per_key, items)` for each of
/// `variants` that was run there, against `T phi(x; qp, qp(1-p))`.
///
/// # Errors
/// [`Error::InvalidParameter`] (`rows`) if none of the variants was run at
/// that point; [`Error::Io`] if the file cannot be drawn.
pub fn figure2(
    rows: &[Row],
    bits_per_key: u32,
    items: u64,
    variants: &[Variant],
    path: &Path,
) -> Result<(), Error> {
    let panels: Vec<&Row> = variants
        .iter()
        .filter_map(|&v| {
            rows.iter()
                .find(|r| r.bits_per_key == bits_per_key && r.items == items && r.variant == v)
        })
        .collect();
    if panels.is_empty() {
        return Err(invalid(
            "rows",
            format!("no rows at c = {bits_per_key}, n = {items} for the requested variants"),
        ));
    }
    let cols = panels.len().min(2);
    let prow = panels.len().div_ceil(cols);
    let root =
        SVGBackend::new(path, (560 * cols as u32, 380 * prow as u32 + 40)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    let first = panels[0];
    let title = format!(
        "Distribution of Q (n = {items}, c = {bits_per_key}, k = {}, q = {} queries, T = {} trials) vs T·N(qp, qp(1-p)) (Figure 2)",
        first.hashes, first.queries, first.trials
    );
    let root = root
        .titled(&title, ("sans-serif", 15))
        .map_err(draw_error)?;
    let areas = root.split_evenly((prow, cols));
    // A common x range: the union of the observed Q plus the normal's bulk.
    let mu = first.queries as f64 * first.p;
    let sigma = (mu * (1.0 - first.p)).sqrt();
    let q_max = panels.iter().map(|r| r.q_counts.len()).max().unwrap_or(1) as f64;
    let x_hi = q_max.max(mu + 4.0 * sigma).ceil() + 1.0;
    let density = |x: f64, t: f64| {
        t * (-(x - mu).powi(2) / (2.0 * sigma * sigma)).exp()
            / (sigma * (2.0 * std::f64::consts::PI).sqrt())
    };
    let y_hi = panels
        .iter()
        .map(|r| {
            let peak = r.q_counts.iter().copied().max().unwrap_or(0) as f64;
            peak.max(density(mu, r.trials as f64))
        })
        .fold(0.0, f64::max)
        * 1.12;
    for (r, area) in panels.iter().zip(&areas) {
        let t = r.trials as f64;
        let mean_q = r.mean_fpr * r.queries as f64;
        let sd_q = r.std_err * (t.sqrt()) * r.queries as f64;
        let caption = format!(
            "{}: mean Q {:.2}, sd {:.2} (normal: {:.2}, {:.2})",
            r.variant.label(),
            mean_q,
            sd_q,
            mu,
            sigma
        );
        let mut chart = ChartBuilder::on(area)
            .caption(caption, ("sans-serif", 13))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d(-0.5..x_hi, 0.0..y_hi)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc("Q (false positives among the q queries)")
            .y_desc("trials")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .light_line_style(WHITE)
            .draw()
            .map_err(draw_error)?;
        let col = colour(r.variant);
        chart
            .draw_series(r.q_counts.iter().enumerate().map(|(q, &count)| {
                Rectangle::new(
                    [(q as f64 - 0.4, 0.0), (q as f64 + 0.4, count as f64)],
                    col.mix(0.75).filled(),
                )
            }))
            .map_err(draw_error)?
            .label(format!("Q histogram, {}", r.variant.id()))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], col.filled()));
        let steps = 400;
        chart
            .draw_series(LineSeries::new(
                (0..=steps).map(|i| {
                    let x = -0.5 + (x_hi + 0.5) * f64::from(i) / f64::from(steps);
                    (x, density(x, t))
                }),
                BLACK.stroke_width(2),
            ))
            .map_err(draw_error)?
            .label(format!("{} · N({mu:.2}, {:.2})", r.trials, sigma * sigma))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 11))
            .draw()
            .map_err(draw_error)?;
    }
    root.present().map_err(draw_error)?;
    Ok(())
}
