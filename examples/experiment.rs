//! Reproduces Sec. 8 of Kirsch and Mitzenmacher (Figures 1 and 2 and a
//! table) on lesshash's filters. See docs/paper-reproduction.md.
//!
//! ```text
//! cargo run --release --features experiment --example experiment -- \
//!     [--quick] [--trials N] [--max-inserts N] [--c 4,8,12,16] \
//!     [--n 5000,10000,50000,100000,500000] [--variants all|every|paper|ID,...] [--seed S] \
//!     [--threads N] [--csv FILE] [--markdown FILE] [--plot DIR] [--from-csv FILE,...]
//! ```
//!
//! * `--quick`: 250 trials per point, capped at 2.5e6 inserts per variant
//!   and point (under a minute on two cores). Without it: 10,000 trials, as
//!   in the paper; `--max-inserts` caps the largest n.
//! * The table goes to stdout, progress to stderr; `--csv` writes every row,
//!   `--markdown` the tables, `--plot DIR` writes
//!   `DIR/paper-figure1.svg` (the paper's layouts), `DIR/paper-figure2.svg`
//!   and, when other layouts were run, `DIR/layouts-figure1.svg` (every
//!   layout).
//! * `--from-csv FILE[,FILE...]`: run nothing; read the rows of earlier
//!   `--csv` outputs (histograms included) and write the tables and figures
//!   (and, with `--csv`, one CSV) from them.
//! * `--variants`: `all` (the default: every layout and scheme but the
//!   duplicates), `every`, `paper` (the paper's five) or a list of
//!   `layout/scheme` ids such as `blocked/double,split-block/independent`.
//!   A variant's rows do not depend on which others run with it (the items
//!   of a trial depend only on the seed, the point and the trial), so runs
//!   of disjoint lists add up to the run of their union.
//!
//! The arguments are parsed by hand: a dozen flags of three types do not
//! justify a parser dependency for the crate's users (examples share the
//! crate's dependency graph), and the `lesshash` CLI can call the same
//! `lesshash::experiment` API with its own parser.

use std::path::PathBuf;
use std::time::Instant;

use lesshash::experiment::{self, Config, Variant, plot};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

struct Args {
    config: Config,
    csv: Option<PathBuf>,
    markdown: Option<PathBuf>,
    plot: Option<PathBuf>,
    from_csv: Option<String>,
    threads: Option<usize>,
    command: String,
}

fn usage() -> &'static str {
    "usage: experiment [--quick] [--trials N] [--max-inserts N|none] [--c LIST] [--n LIST] \
     [--variants all|every|paper|ID,...] [--seed S] [--threads N] [--csv FILE] [--markdown FILE] [--plot DIR] [--from-csv FILE,...]"
}

fn list<T: std::str::FromStr>(flag: &str, s: &str) -> Res<Vec<T>> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| format!("{flag}: cannot parse `{x}`").into())
        })
        .collect()
}

fn parse_args() -> Res<Args> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let quick = argv.iter().any(|a| a == "--quick");
    let mut config = if quick {
        Config::quick()
    } else {
        Config::paper()
    };
    let (mut csv, mut markdown, mut plot, mut threads) = (None, None, None, None);
    let mut from_csv = None;
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        if flag == "--quick" {
            continue;
        }
        if flag == "--help" || flag == "-h" {
            println!("{}", usage());
            std::process::exit(0);
        }
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{}", usage()))?;
        match flag.as_str() {
            "--trials" => config.trials = value.parse().map_err(|_| "--trials: not a number")?,
            "--max-inserts" => {
                config.max_inserts = if value == "none" {
                    None
                } else {
                    Some(value.parse().map_err(|_| "--max-inserts: not a number")?)
                }
            }
            "--c" => config.bits_per_key = list("--c", value)?,
            "--n" => config.set_sizes = list("--n", value)?,
            "--seed" => config.seed = value.parse().map_err(|_| "--seed: not a number")?,
            "--variants" => {
                config.variants = match value.as_str() {
                    "all" => Variant::all(),
                    "every" => Variant::every(),
                    "paper" => Variant::paper(),
                    ids => ids
                        .split(',')
                        .map(|id| {
                            Variant::from_id(id.trim()).ok_or_else(|| {
                                format!(
                                    "--variants: `all`, `every`, `paper` or a list of \
                                     layout/scheme ids; cannot parse `{id}`"
                                )
                            })
                        })
                        .collect::<Result<_, _>>()?,
                }
            }
            "--threads" => threads = Some(value.parse().map_err(|_| "--threads: not a number")?),
            "--csv" => csv = Some(PathBuf::from(value)),
            "--markdown" => markdown = Some(PathBuf::from(value)),
            "--plot" => plot = Some(PathBuf::from(value)),
            "--from-csv" => from_csv = Some(value.clone()),
            other => return Err(format!("unknown flag {other}\n{}", usage()).into()),
        }
    }
    Ok(Args {
        config,
        csv,
        markdown,
        plot,
        from_csv,
        threads,
        command: argv.join(" "),
    })
}

fn main() -> Res<()> {
    let args = parse_args()?;
    if let Some(t) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()?;
    }
    let config = &args.config;
    let (report, wall) = if let Some(files) = &args.from_csv {
        let mut rows = Vec::new();
        for path in files.split(',') {
            let part = experiment::parse_csv(&std::fs::read_to_string(path)?)?;
            eprintln!("read {} rows from {path}", part.len());
            rows.extend(part);
        }
        (
            experiment::Report {
                rows,
                skipped: Vec::new(),
            },
            None,
        )
    } else {
        let (report, wall) = run(config)?;
        (report, Some(wall))
    };
    let summary = experiment::markdown_summary(&report.rows);
    println!("{summary}");
    let timing = match wall {
        Some(wall) => format!(
            "{wall:.0} s wall time on {} threads",
            rayon::current_num_threads()
        ),
        None => "tables and figures redrawn from the CSV".to_string(),
    };
    eprintln!("{timing}");

    if let Some(path) = &args.csv {
        write(path, &experiment::csv(&report.rows))?;
    }
    if let Some(path) = &args.markdown {
        let mut md = format!(
            "Generated by `cargo run --release --features experiment --example experiment -- {}` \
             ({timing}).\n\n### Measured rate over p per point \
             (± half-width of the 95% binomial interval)\n\n{summary}\n### Every row\n\n{}",
            args.command,
            experiment::markdown_table(&report.rows)
        );
        md.push_str(&experiment::skipped_markdown(&report.skipped));
        write(path, &md)?;
    }
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir)?;
        let fig1 = dir.join("paper-figure1.svg");
        match plot::figure1(&report.rows, &fig1) {
            Ok(()) => eprintln!("wrote {}", fig1.display()),
            Err(e) => eprintln!("figure 1 not drawn: {e}"),
        }
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
            )?;
            eprintln!("wrote {}", layouts.display());
        }
        let fig2 = dir.join("paper-figure2.svg");
        let variants: Vec<Variant> = Variant::paper()
            .into_iter()
            .filter(|v| v.paper_name() != Some("double"))
            .collect();
        match plot::figure2(&report.rows, 8, 5_000, &variants, &fig2) {
            Ok(()) => eprintln!("wrote {}", fig2.display()),
            Err(e) => eprintln!("figure 2 not drawn: {e}"),
        }
    }
    Ok(())
}

fn run(config: &Config) -> Res<(experiment::Report, f64)> {
    eprintln!(
        "c = {:?}, n = {:?}, trials = {} (cap {:?} inserts per point), {} variants, {} threads",
        config.bits_per_key,
        config.set_sizes,
        config.trials,
        config.max_inserts,
        config.variants.len(),
        rayon::current_num_threads()
    );
    let start = Instant::now();
    let mut last = Instant::now();
    let report = experiment::run(config, |rows| {
        if let Some(r) = rows.first() {
            eprintln!(
                "c = {:2}, n = {:6}: {} trials x {} queries, {:.1} s (total {:.0} s)",
                r.bits_per_key,
                r.items,
                r.trials,
                r.queries,
                last.elapsed().as_secs_f64(),
                start.elapsed().as_secs_f64()
            );
        }
        last = Instant::now();
    })?;
    let wall = start.elapsed().as_secs_f64();
    for s in &report.skipped {
        eprintln!(
            "skipped {} at c = {}, n = {}: {}",
            s.variant.label(),
            s.bits_per_key,
            s.items,
            s.reason
        );
    }

    Ok((report, wall))
}

fn write(path: &PathBuf, text: &str) -> Res<()> {
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
