//! The experiment's results as text: CSV (written and parsed back, so a
//! long run can be reported later) and the Markdown tables of
//! docs/paper-reproduction.md.

#![forbid(unsafe_code)]

use std::fmt::Write as _;

use super::{Row, Skipped, Variant, invalid};
use lesshash::Error;

/// The header of [`csv`]: the columns, in order.
///
/// `c,k,n,m` are the point and the built filter's bits; `variant` is
/// [`Variant::id`], `paper` its [`Variant::paper_name`] (empty outside the
/// paper's five); `trials` is T, `queries` q; `p`, `ideal_fpr`, `model_fpr`,
/// `false_positives`, `mean_fpr`, `std_err`, `ci95_low`, `ci95_high` are the
/// [`Row`] fields of those names; `binomial_std_err`, `mean_over_p` and
/// `z_vs_ideal` are derived ([`Row::binomial_std_err`], `mean_fpr / p`,
/// [`Row::z_vs_ideal`]); `q_counts` is the histogram of Q, `;`-separated
/// counts for Q = 0, 1, 2, ...
pub const CSV_HEADER: &str = "c,k,n,m,variant,paper,trials,queries,p,ideal_fpr,model_fpr,false_positives,mean_fpr,std_err,binomial_std_err,ci95_low,ci95_high,mean_over_p,z_vs_ideal,q_counts";

/// The rows as CSV with the [`CSV_HEADER`] line. Fields are numbers, names
/// without commas and the `;`-separated histogram, so nothing needs quoting.
/// Rates are written in the shortest form that reads back to the same
/// `f64`, so [`parse_csv`] restores the rows exactly.
pub fn csv(rows: &[Row]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rows {
        let hist = r
            .q_counts
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(";");
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{:e},{:e},{:e},{},{:e},{:e},{:.4e},{:e},{:e},{:.5},{:.3},{hist}",
            r.bits_per_key,
            r.hashes,
            r.items,
            r.bits,
            r.variant.id(),
            r.variant.paper_name().unwrap_or(""),
            r.trials,
            r.queries,
            r.p,
            r.ideal_fpr,
            r.model_fpr,
            r.false_positives,
            r.mean_fpr,
            r.std_err,
            r.binomial_std_err(),
            r.ci95.0,
            r.ci95.1,
            r.mean_fpr / r.p,
            r.z_vs_ideal(),
        );
    }
    s
}

/// Reads rows back from [`csv`]'s output (to redraw the figures of a
/// committed run without running it again). The derived columns are not
/// read; they follow from the others.
///
/// # Errors
/// [`Error::InvalidParameter`] (`csv`) naming the line and column of the
/// first field that does not parse, a wrong header or a wrong field count.
pub fn parse_csv(text: &str) -> Result<Vec<Row>, Error> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, header)) if header.trim_end() == CSV_HEADER => {}
        _ => {
            return Err(invalid(
                "csv",
                format!("line 1: expected the header `{CSV_HEADER}`"),
            ));
        }
    }
    let columns: Vec<&str> = CSV_HEADER.split(',').collect();
    let mut rows = Vec::new();
    for (i, line) in lines {
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        let bad = |col: usize, why: &str| {
            invalid(
                "csv",
                format!("line {}, column `{}`: {why}", i + 1, columns[col]),
            )
        };
        if fields.len() != columns.len() {
            return Err(invalid(
                "csv",
                format!(
                    "line {}: {} fields, expected {}",
                    i + 1,
                    fields.len(),
                    columns.len()
                ),
            ));
        }
        fn num<T: std::str::FromStr>(
            fields: &[&str],
            col: usize,
            bad: &dyn Fn(usize, &str) -> Error,
        ) -> Result<T, Error> {
            fields[col]
                .parse()
                .map_err(|_| bad(col, &format!("cannot parse `{}`", fields[col])))
        }
        let variant = Variant::from_id(fields[4])
            .ok_or_else(|| bad(4, &format!("unknown variant `{}`", fields[4])))?;
        let q_counts = if fields[19].is_empty() {
            Vec::new()
        } else {
            fields[19]
                .split(';')
                .map(|x| {
                    x.parse()
                        .map_err(|_| bad(19, &format!("cannot parse count `{x}`")))
                })
                .collect::<Result<_, _>>()?
        };
        rows.push(Row {
            bits_per_key: num(&fields, 0, &bad)?,
            hashes: num(&fields, 1, &bad)?,
            items: num(&fields, 2, &bad)?,
            bits: num(&fields, 3, &bad)?,
            variant,
            trials: num(&fields, 6, &bad)?,
            queries: num(&fields, 7, &bad)?,
            p: num(&fields, 8, &bad)?,
            ideal_fpr: num(&fields, 9, &bad)?,
            model_fpr: num(&fields, 10, &bad)?,
            false_positives: num(&fields, 11, &bad)?,
            mean_fpr: num(&fields, 12, &bad)?,
            std_err: num(&fields, 13, &bad)?,
            ci95: (num(&fields, 15, &bad)?, num(&fields, 16, &bad)?),
            q_counts,
        });
    }
    Ok(rows)
}

/// One Markdown line per skipped point, saying why it was skipped.
pub fn skipped_markdown(skipped: &[Skipped]) -> String {
    skipped
        .iter()
        .map(|s| {
            format!(
                "\nSkipped {} at c = {}, n = {}: {}\n",
                s.variant.label(),
                s.bits_per_key,
                s.items,
                s.reason
            )
        })
        .collect()
}

/// The full table in Markdown: one line per row, rates relative to p.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| c | k | n | variant | T | q | p | exact (layout) / p | measured / p | 95% CI / p | z vs exact |\n\
         |---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {:.4e} | {:.4} | {:.4} | {:.4}–{:.4} | {:+.1} |",
            r.bits_per_key,
            r.hashes,
            r.items,
            r.variant.label(),
            r.trials,
            r.queries,
            r.p,
            r.ideal_fpr / r.p,
            r.mean_fpr / r.p,
            r.ci95.0 / r.p,
            r.ci95.1 / r.p,
            r.z_vs_ideal(),
        );
    }
    s
}

/// A compact Markdown table: one line per point `(c, n)`, one column per
/// variant, each cell the measured rate over p with the 95% interval's
/// half-width.
pub fn markdown_summary(rows: &[Row]) -> String {
    let mut variants: Vec<Variant> = Vec::new();
    let mut points: Vec<(u32, u64)> = Vec::new();
    for r in rows {
        if !variants.contains(&r.variant) {
            variants.push(r.variant);
        }
        if !points.contains(&(r.bits_per_key, r.items)) {
            points.push((r.bits_per_key, r.items));
        }
    }
    let mut s = String::from("| c | k | n | T | p |");
    for v in &variants {
        let _ = write!(s, " {} |", v.label());
    }
    s.push_str("\n|---:|---:|---:|---:|---:|");
    for _ in &variants {
        s.push_str("---:|");
    }
    s.push('\n');
    for &(c, n) in &points {
        let at = |v: Variant| {
            rows.iter()
                .find(|r| r.bits_per_key == c && r.items == n && r.variant == v)
        };
        let Some(first) = rows.iter().find(|r| r.bits_per_key == c && r.items == n) else {
            continue;
        };
        let _ = write!(
            s,
            "| {c} | {} | {n} | {} | {:.4e} |",
            first.hashes, first.trials, first.p
        );
        for &v in &variants {
            match at(v) {
                Some(r) => {
                    let half = (r.ci95.1 - r.ci95.0) / 2.0 / r.p;
                    let _ = write!(s, " {:.3} ± {:.3} |", r.mean_fpr / r.p, half);
                }
                None => s.push_str(" – |"),
            }
        }
        s.push('\n');
    }
    s
}
