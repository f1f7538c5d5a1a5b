//! `lesshash experiment`: the paper's Sec. 8 reproduction
//! (`lesshash_cli::experiment`, docs/paper-reproduction.md) from the command
//! line, with clap's parsing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use lesshash_cli::experiment::{self, Config, Report, Variant, plot};

/// `--variants`: `all` (every layout with every scheme, less those that
/// answer exactly as another one), `every`, `paper` (the paper's five) or a
/// comma-separated list of `layout/scheme` ids such as
/// `blocked/double,split-block/independent`. A variant's rows do not depend
/// on which others run with it, so runs of disjoint lists add up to the run
/// of their union (`--from-csv A,B`).
fn parse_variants(s: &str) -> Result<Variants, String> {
    Ok(Variants(match s {
        "all" => Variant::all(),
        "every" => Variant::every(),
        "paper" => Variant::paper(),
        ids => ids
            .split(',')
            .map(|id| {
                Variant::from_id(id.trim()).ok_or_else(|| {
                    format!(
                        "`{id}` is not a layout/scheme id (e.g. blocked/double); \
                         expected all, every, paper or a list of ids"
                    )
                })
            })
            .collect::<Result<_, _>>()?,
    }))
}

/// The variants `--variants` named.
#[derive(Clone, Debug)]
struct Variants(Vec<Variant>);

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// 250 trials per point, capped at 2.5e6 inserts per variant and point
    /// (under a minute on two cores). Without it: the paper's 10,000 trials.
    #[arg(long)]
    quick: bool,

    /// Trials per point (overrides --quick's).
    #[arg(long, value_name = "N")]
    trials: Option<u64>,

    /// Cap on inserts per variant and point (`none`: no cap).
    #[arg(long, value_name = "N|none", value_parser = parse_cap)]
    max_inserts: Option<Cap>,

    /// Bits per key c, comma-separated (the paper: 4,8,12,16).
    #[arg(long = "c", value_name = "LIST", value_delimiter = ',')]
    bits_per_key: Option<Vec<u32>>,

    /// Set sizes n, comma-separated (the paper: 5000,...,500000).
    #[arg(long = "n", value_name = "LIST", value_delimiter = ',')]
    set_sizes: Option<Vec<u64>>,

    /// Which filter variants to run: all, every, paper, or a list of
    /// layout/scheme ids (blocked/double,classic/enhanced-cube,...).
    #[arg(long, value_name = "all|every|paper|IDS", default_value = "all", value_parser = parse_variants)]
    variants: Variants,

    /// Seed of the items and the filters' hashing (decimal or 0x hex).
    #[arg(long, value_name = "SEED", value_parser = crate::parse_seed)]
    seed: Option<u64>,

    /// Worker threads (0: one per CPU).
    #[arg(long, short = 't', value_name = "T", default_value_t = 0)]
    threads: usize,

    /// Write every row as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,

    /// Write the tables as Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,

    /// Write DIR/paper-figure1.svg, DIR/paper-figure2.svg and, when layouts
    /// beyond the paper's ran, DIR/layouts-figure1.svg.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,

    /// Run nothing: read the rows of earlier --csv outputs (comma-separated)
    /// and write the tables and figures (and, with --csv, one CSV) from them.
    #[arg(long, value_name = "FILE,...", value_delimiter = ',')]
    from_csv: Option<Vec<PathBuf>>,
}

#[derive(Clone, Copy, Debug)]
struct Cap(Option<u64>);

fn parse_cap(s: &str) -> Result<Cap, String> {
    if s == "none" {
        Ok(Cap(None))
    } else {
        s.parse().map(|n| Cap(Some(n))).map_err(|e| format!("{e}"))
    }
}

impl Args {
    fn config(&self) -> Config {
        let mut c = if self.quick {
            Config::quick()
        } else {
            Config::paper()
        };
        if let Some(t) = self.trials {
            c.trials = t;
        }
        if let Some(Cap(cap)) = self.max_inserts {
            c.max_inserts = cap;
        }
        if let Some(v) = &self.bits_per_key {
            c.bits_per_key = v.clone();
        }
        if let Some(v) = &self.set_sizes {
            c.set_sizes = v.clone();
        }
        c.variants = self.variants.0.clone();
        if let Some(s) = self.seed {
            c.seed = s;
        }
        c
    }
}

pub(crate) fn run(args: Args, quiet: bool) -> Result<ExitCode> {
    let config = args.config();
    if let Err(e) = config.validate() {
        let option = match &e {
            lesshash::Error::InvalidParameter { name, .. } => match *name {
                "bits_per_key" => "--c",
                "set_sizes" => "--n",
                "trials" => "--trials",
                "max_inserts" => "--max-inserts",
                "variants" => "--variants",
                other => other,
            },
            _ => "the experiment",
        };
        return Err(anyhow::Error::new(e).context(format!("invalid value for {option}")));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .context("cannot start the worker threads")?;
    let start = Instant::now();
    let report = match &args.from_csv {
        Some(paths) => {
            let mut rows = Vec::new();
            for path in paths {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                rows.extend(
                    experiment::parse_csv(&text)
                        .with_context(|| format!("cannot parse {}", path.display()))?,
                );
            }
            Report {
                rows,
                skipped: Vec::new(),
            }
        }
        None => {
            let points = (config.bits_per_key.len() * config.set_sizes.len()) as u64;
            let bar = crate::progress_count(quiet, points, "experiment points");
            let report = pool
                .install(|| {
                    experiment::run(&config, |rows| {
                        if let Some(r) = rows.first() {
                            bar.set_message(format!("c = {}, n = {}", r.bits_per_key, r.items));
                        }
                        bar.inc(1);
                    })
                })
                .context("invalid experiment parameters")?;
            bar.finish_and_clear();
            report
        }
    };
    let secs = start.elapsed().as_secs_f64();
    for s in &report.skipped {
        if !quiet {
            eprintln!(
                "lesshash: skipped {} at c = {}, n = {}: {}",
                s.variant.label(),
                s.bits_per_key,
                s.items,
                s.reason
            );
        }
    }
    let summary = experiment::markdown_summary(&report.rows);
    let mut out = std::io::stdout().lock();
    writeln!(out, "{summary}")?;
    out.flush()?;

    if let Some(path) = &args.csv {
        write_atomic(path, experiment::csv(&report.rows).as_bytes())?;
    }
    if let Some(path) = &args.markdown {
        let mut md = format!(
            "Generated by `lesshash experiment{}` ({secs:.0} s).\n\n\
             ### Measured rate over p per point (± half-width of the 95% binomial interval)\n\n\
             {summary}\n### Every row\n\n{}",
            std::env::args()
                .skip(2)
                .map(|a| format!(" {a}"))
                .collect::<String>(),
            experiment::markdown_table(&report.rows)
        );
        md.push_str(&experiment::skipped_markdown(&report.skipped));
        write_atomic(path, md.as_bytes())?;
    }
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let fig1 = dir.join("paper-figure1.svg");
        plot::figure1(&report.rows, &fig1)
            .with_context(|| format!("cannot draw {}", fig1.display()))?;
        if report
            .rows
            .iter()
            .any(|r| !plot::PAPER_LAYOUTS.contains(&r.variant.layout))
        {
            let layouts = dir.join("layouts-figure1.svg");
            plot::rate_figure(
                &report.rows,
                "False-positive rate over p on every layout, against each layout's formula \
                 (Sec. 8's experiment; blocked layouts are not in the paper)",
                &layouts,
            )
            .with_context(|| format!("cannot draw {}", layouts.display()))?;
        }
        let fig2 = dir.join("paper-figure2.svg");
        let variants: Vec<Variant> = Variant::paper()
            .into_iter()
            .filter(|v| v.paper_name() != Some("double"))
            .collect();
        if let Err(e) = plot::figure2(&report.rows, 8, 5_000, &variants, &fig2) {
            eprintln!("lesshash: figure 2 not drawn: {e}");
        }
    }
    let trials: u64 = report.rows.iter().map(|r| r.trials).sum();
    if !quiet {
        eprintln!(
            "lesshash: experiment: {} rows, {trials} trials in {secs:.1} s on {} threads",
            report.rows.len(),
            pool.current_num_threads()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a small output file atomically: a temporary file in the same
/// directory, synced, renamed over `path`.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let ctx = || format!("cannot write {}", path.display());
    let name = path.file_name().with_context(ctx)?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(ctx)
}
