//! The `lesshash` binary, run as a user would: exit codes, outputs, and
//! every error case's message and status.

// The integration tests' shared helpers (seeded keys, tolerances, CI skips).
#[path = "../../tests/common/mod.rs"]
mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lesshash");

fn lesshash<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(BIN).args(args).output().expect("run lesshash")
}

/// `lesshash ARGS --threads T`, the input from a pipe (`stdin`) or from
/// the file `path` (`-i`); it must succeed (`mode` names the case).
fn run_threads<'a>(
    mut args: Vec<&'a str>,
    threads: &'a str,
    stdin: bool,
    input: &[u8],
    path: &'a str,
    mode: &str,
) -> Output {
    args.extend(["--threads", threads]);
    let o = if stdin {
        lesshash_stdin(&args, input)
    } else {
        args.extend(["-i", path]);
        lesshash(&args)
    };
    assert!(
        o.status.success(),
        "{mode} threads={threads}: {}",
        stderr(&o)
    );
    o
}

fn lesshash_stdin(args: &[&str], stdin: &[u8]) -> Output {
    lesshash_piped(args, stdin, &[])
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Exit status 2, a message containing every `needles`, and no panic.
#[track_caller]
fn assert_error(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "expected {n:?} in: {err}");
    }
}

fn write_lines(path: &Path, lines: impl IntoIterator<Item = String>) {
    let mut s = String::new();
    for l in lines {
        s.push_str(&l);
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
    fn s(&self, name: &str) -> String {
        self.path(name).to_str().unwrap().to_string()
    }
}

fn member(i: u32) -> String {
    format!("user-{i}")
}

/// Builds `filter.lhbf` from members 0..n in `dir`.
fn build_members(dir: &Dir, n: u32, extra: &[&str]) -> String {
    write_lines(&dir.path("keys.txt"), (0..n).map(member));
    let out = dir.s("filter.lhbf");
    let keys = dir.s("keys.txt");
    let mut args = vec!["build", "-i", &keys, "-o", &out, "--fpr", "0.01", "-q"];
    args.extend_from_slice(extra);
    let o = lesshash(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

#[test]
fn build_then_query_exit_codes() {
    let dir = Dir::new();
    let f = build_members(&dir, 10_000, &[]);
    let o = lesshash(&["query", &f, "user-1", "user-9999"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "user-1\tyes\nuser-9999\tyes\n");
    // A key certainly absent: at 1% FPR, one of 50 non-members is absent
    // with probability 1 - 0.01^50.
    let absent: Vec<String> = (0..50).map(|i| format!("nobody-{i}")).collect();
    let mut args = vec!["query", f.as_str(), "user-2"];
    args.extend(absent.iter().map(String::as_str));
    let o = lesshash(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with("user-2\tyes\n"));
    assert!(stdout(&o).contains("\tno\n"));
}

/// Members interleaved with non-members: every member line comes out, in
/// input order; `--invert` prints exactly the other lines.
#[test]
fn filter_keeps_every_member_and_invert_complements() {
    let dir = Dir::new();
    let n = 50_000;
    let f = build_members(&dir, n, &[]);
    let input: Vec<String> = (0..2 * n)
        .map(|i| {
            if i % 2 == 0 {
                member(i / 2)
            } else {
                format!("other-{i}")
            }
        })
        .collect();
    write_lines(&dir.path("in.txt"), input.clone());
    let inp = dir.s("in.txt");

    let kept = lesshash(&["filter", &f, "-i", &inp, "-q"]);
    assert!(kept.status.success(), "{}", stderr(&kept));
    let dropped = lesshash(&["filter", &f, "-i", &inp, "--invert", "-q"]);
    assert!(dropped.status.success());
    let (kept, dropped) = (stdout(&kept), stdout(&dropped));
    let kept: Vec<&str> = kept.lines().collect();
    let dropped: Vec<&str> = dropped.lines().collect();
    assert_eq!(kept.len() + dropped.len(), input.len());
    // Merge the two outputs back by input order: each line in exactly one.
    let (mut a, mut b) = (kept.iter().peekable(), dropped.iter().peekable());
    for line in &input {
        if a.peek() == Some(&&line.as_str()) {
            a.next();
        } else {
            assert_eq!(
                b.next(),
                Some(&line.as_str()),
                "line {line} lost or reordered"
            );
            assert!(!line.starts_with("user-"), "member {line} filtered out");
        }
    }
    let false_positives = kept.len() - n as usize;
    assert!(
        false_positives < 1000,
        "{false_positives} of {n} (target 1%)"
    );

    // stdin, with `-` and without -i, gives the same output.
    let all = std::fs::read(dir.path("in.txt")).unwrap();
    for args in [&["filter", &f][..], &["filter", &f, "-i", "-"][..]] {
        let o = lesshash_stdin(args, &all);
        assert!(o.status.success());
        assert_eq!(stdout(&o).lines().count(), kept.len());
    }
}

#[test]
fn every_layout_and_scheme_builds_and_filters() {
    let dir = Dir::new();
    let input: String = (0..3000).map(|i| member(i) + "\n").collect();
    for layout in lesshash::Layout::ALL {
        for scheme in lesshash::Scheme::ALL {
            let f = build_members(
                &dir,
                3000,
                &["--layout", layout.name(), "--scheme", scheme.name()],
            );
            let info = stdout(&lesshash(&["info", &f]));
            assert!(
                info.contains(layout.name()) && info.contains(scheme.name()),
                "{info}"
            );
            let o = lesshash_stdin(&["filter", &f, "-q"], input.as_bytes());
            assert_eq!(stdout(&o), input, "{} {}", layout.name(), scheme.name());
        }
    }
}

/// The parallel build is bit-for-bit the sequential one.
#[test]
fn threads_give_the_same_filter() {
    let dir = Dir::new();
    let one = std::fs::read(build_members(&dir, 100_000, &["--threads", "1"])).unwrap();
    let four = std::fs::read(build_members(&dir, 100_000, &["--threads", "4"])).unwrap();
    assert!(one == four, "--threads 4 differs from --threads 1");
}

/// Parallel builds cut each chunk's lines into keys on several threads:
/// with a field spec, lines without the field, CRLF ends, a last line
/// without a newline and an input of several 1 MiB chunks, every thread
/// count gives the one-thread filter and the same count of skipped lines.
#[test]
fn threads_cut_lines_like_one_thread() {
    let dir = Dir::new();
    let mut input = String::new();
    let mut skipped = 0;
    for i in 0..300_000u64 {
        if i % 7 == 3 {
            input += &format!("no-field-{i}\n");
            skipped += 1;
        } else if i % 5 == 0 {
            input += &format!("{i},key-{i}\r\n");
        } else {
            input += &format!("{i},key-{i},x\n");
        }
    }
    input += "last,key-last";
    assert!(input.len() > 3 << 20, "several chunks");
    let mut filters = Vec::new();
    for threads in ["1", "2", "3", "8"] {
        let out = dir.s(&format!("t{threads}.lhbf"));
        let o = lesshash_stdin(
            &[
                "build",
                "-o",
                &out,
                "--fpr",
                "0.01",
                "--items",
                "300000",
                "--field",
                "2",
                "-d",
                ",",
                "--threads",
                threads,
            ],
            input.as_bytes(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("{skipped} lines without field 2 skipped")),
            "threads={threads}: {}",
            stderr(&o)
        );
        filters.push(std::fs::read(&out).unwrap());
    }
    assert!(
        filters.iter().all(|f| *f == filters[0]),
        "a thread count changed the filter"
    );
    let o = lesshash_stdin(
        &["filter", &dir.s("t3.lhbf"), "--field", "2", "-d", ",", "-q"],
        b"9,key-last\n9,key-1\n",
    );
    assert_eq!(stdout(&o), "9,key-last\n9,key-1\n");
}

/// Line `i` of [`mixed_input`]: tab-separated, with CRLF ends, empty
/// lines and lines without field 2 among them.
fn mixed_line(i: usize) -> String {
    if i.is_multiple_of(11) {
        "\n".into()
    } else if i % 13 == 2 {
        format!("no-field-{i}\n")
    } else if i % 7 == 1 {
        format!("{i}\tkey-{i}\r\n")
    } else {
        format!("{i}\tkey-{i}\tx\n")
    }
}

/// The length of [`mixed_input`]'s long line: longer than a block of two
/// threads (4 MiB), so the reader's buffer grows.
const LONG_LINE: usize = 5 << 20;

/// The input of the `--threads` tests: `n` [`mixed_line`]s, then the long
/// line (whose field 2 is `long`), then `last` without a newline. Lines
/// `i % 3 == 0` are the members.
fn mixed_input(n: usize, last: &str) -> Vec<u8> {
    let mut input = Vec::new();
    for i in 0..n {
        input.extend_from_slice(mixed_line(i).as_bytes());
        if i == n / 2 {
            input.extend_from_slice(b"long\tlong\t");
            input.resize(input.len() + LONG_LINE, b'x');
            input.push(b'\n');
        }
    }
    input.extend_from_slice(last.as_bytes());
    input
}

/// A summary line without its time and rate, which vary.
fn without_timing(stderr: &str) -> String {
    stderr
        .lines()
        .map(|l| match (l.find(" in "), l.find(" keys/s)")) {
            (Some(a), Some(b)) if a < b => format!("{}{}", &l[..a], &l[b + 8..]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `filter --threads 2, 3, 8` print exactly the one-thread output, in
/// input order, with the same counts, over an input of 12 MB (several
/// blocks of 2 and 3 threads, 4 and 6 MiB; 16 pieces of one block of 8;
/// from a pipe, blocks of whatever the reads gathered) read from a file
/// and from a pipe: whole
/// lines and field 2, plain and inverted, CRLF ends, empty lines, lines
/// without the field, a 5 MiB line and an unterminated last line, which
/// comes out (with a newline) in one mode or the other.
#[test]
fn filter_threads_print_the_one_thread_output() {
    let dir = Dir::new();
    let n = 400_000;
    // Members: every third line, the long line and the last one, as whole
    // lines (`w.lhbf`) and as field 2 (`f.lhbf`); the last line has no
    // field 2, so it is printed by the whole-line filter and by the
    // inverted field filter.
    let last = "last-line-without-newline";
    let input = mixed_input(n, last);
    assert!(input.len() > 12_000_000, "{} bytes", input.len());
    std::fs::write(dir.path("input.txt"), &input).unwrap();
    let mut whole = Vec::new();
    let mut field = Vec::new();
    for i in (0..n).step_by(3) {
        let line = mixed_line(i);
        let line = line.trim_end_matches('\n').trim_end_matches('\r');
        whole.push(line.to_string());
        if let Some(k) = line.split('\t').nth(1) {
            field.push(k.to_string());
        }
    }
    whole.push(format!("long\tlong\t{}", "x".repeat(LONG_LINE)));
    whole.push(last.to_string());
    field.push("long".to_string());
    write_lines(&dir.path("whole.txt"), whole);
    write_lines(&dir.path("field.txt"), field);
    for (keys, f) in [("whole.txt", "w.lhbf"), ("field.txt", "f.lhbf")] {
        let o = lesshash(&[
            "build",
            "-i",
            &dir.s(keys),
            "-o",
            &dir.s(f),
            "--fpr",
            "0.01",
            "-t",
            "1",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let lines = n + 2;
    let input_path = dir.s("input.txt");
    let (w, f) = (dir.s("w.lhbf"), dir.s("f.lhbf"));
    let modes: [(&str, Vec<&str>); 4] = [
        ("whole", vec![w.as_str()]),
        ("whole -v", vec![w.as_str(), "-v"]),
        ("field 2", vec![f.as_str(), "--field", "2"]),
        ("field 2 -v", vec![f.as_str(), "--field", "2", "-v"]),
    ];
    for (mode, args) in &modes {
        let run = |threads: &str, stdin: bool| {
            let mut a = vec!["filter"];
            a.extend(args);
            run_threads(a, threads, stdin, &input, &input_path, mode)
        };
        let one = run("1", false);
        let summary = without_timing(&stderr(&one));
        // Every line a key (whole lines), or the keys of the lines that
        // have field 2, out of every line read.
        assert!(
            summary.starts_with(&format!("lesshash: filtered {lines} keys, "))
                || (mode.starts_with("field")
                    && summary.contains(&format!(" keys of {lines} lines ("))),
            "{mode}: {summary}"
        );
        let printed = one.stdout.iter().filter(|&&b| b == b'\n').count();
        assert!(
            summary.contains(&format!(", {printed} lines ")),
            "{summary}"
        );
        // The last line is printed, with a newline, by exactly these modes.
        let ends_last = one.stdout.ends_with(format!("{last}\n").as_bytes());
        assert_eq!(
            ends_last,
            *mode == "whole" || *mode == "field 2 -v",
            "{mode}"
        );
        for threads in ["2", "3", "8"] {
            for stdin in [false, true] {
                let o = run(threads, stdin);
                assert!(
                    o.stdout == one.stdout,
                    "{mode} threads={threads} stdin={stdin}: {} bytes against {}",
                    o.stdout.len(),
                    one.stdout.len()
                );
                assert_eq!(
                    without_timing(&stderr(&o)),
                    summary,
                    "{mode} threads={threads}"
                );
            }
        }
    }
}

/// `build --threads 2, 3, 8` write the one-thread filter file byte for
/// byte (bits and the header's insert count), with the same counts, from
/// an input of 12 MB (as `filter`'s test) with CRLF ends, empty lines, lines without
/// the field, a 5 MiB line and an unterminated last line: whole lines,
/// field 2, and the `Independent` scheme (which inserts keys, not hashes),
/// from a file and from a pipe.
#[test]
fn build_threads_write_the_one_thread_file() {
    let dir = Dir::new();
    let n = 400_000;
    let input = mixed_input(n, "0\tlast-key");
    std::fs::write(dir.path("input.txt"), &input).unwrap();
    let input_path = dir.s("input.txt");
    let modes: [(&str, Vec<&str>); 3] = [
        ("whole", vec![]),
        ("field 2", vec!["--field", "2"]),
        ("independent", vec!["--scheme", "independent"]),
    ];
    for (mode, args) in &modes {
        // To stdout: a file would be synced, for seconds in all.
        let run = |threads: &str, stdin: bool| {
            let mut a = vec!["build", "-o", "-", "--fpr", "0.01", "--items", "400000"];
            a.extend(args);
            let o = run_threads(a, threads, stdin, &input, &input_path, mode);
            (o.stdout.clone(), without_timing(&stderr(&o)))
        };
        let (one, summary) = run("1", false);
        let keys = if *mode == "field 2" {
            let skipped = (0..n)
                .filter(|i| i.is_multiple_of(11) || i % 13 == 2)
                .count();
            assert!(
                summary.contains(&format!("; {skipped} lines without field 2 skipped")),
                "{summary}"
            );
            n + 2 - skipped
        } else {
            n + 2
        };
        assert!(
            summary.starts_with(&format!("lesshash: built {keys} keys -> ")),
            "{summary}"
        );
        std::fs::write(dir.path("one.lhbf"), &one).unwrap();
        let info = stdout(&lesshash(&["info", &dir.s("one.lhbf")]));
        assert!(info.contains(&format!("inserted         {keys}")), "{info}");
        for threads in ["2", "3", "8"] {
            for stdin in [false, true] {
                let (file, s) = run(threads, stdin);
                assert!(
                    file == one,
                    "{mode} threads={threads} stdin={stdin}: another file"
                );
                assert_eq!(s, summary, "{mode} threads={threads} stdin={stdin}");
            }
        }
    }
}

#[test]
fn stdin_build_without_items_and_last_line_without_newline() {
    let dir = Dir::new();
    let out = dir.s("s.lhbf");
    let o = lesshash_stdin(&["build", "-o", &out, "--fpr", "0.01"], b"a\nb\r\nc");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("built 3 keys"), "{}", stderr(&o));
    assert_eq!(
        lesshash(&["query", &out, "a", "b", "c"]).status.code(),
        Some(0)
    );
    // The last line has no newline; its output line gets one.
    let o = lesshash_stdin(&["filter", &out, "-q"], b"c\nb\r\nc");
    assert_eq!(stdout(&o), "c\nb\r\nc\n");
    let info = stdout(&lesshash(&["info", &out]));
    assert!(info.contains("inserted         3"), "{info}");
}

#[test]
fn field_and_delimiter() {
    let dir = Dir::new();
    let out = dir.s("f.lhbf");
    let o = lesshash_stdin(
        &[
            "build", "-o", &out, "--fpr", "0.001", "--field", "2", "-d", ",",
        ],
        b"x,alice,1\ny,bob\nno-second-field\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 lines without field 2 skipped"),
        "{}",
        stderr(&o)
    );
    let events = b"1,alice\n2,carol\nalice\n3,bob,z\n";
    let o = lesshash_stdin(&["filter", &out, "--field", "2", "-d", ",", "-q"], events);
    assert_eq!(stdout(&o), "1,alice\n3,bob,z\n");
    let o = lesshash_stdin(
        &["filter", &out, "--field", "2", "-d", ",", "-v", "-q"],
        events,
    );
    assert_eq!(stdout(&o), "2,carol\nalice\n");
    // Tab is the default delimiter.
    let o = lesshash_stdin(
        &["filter", &out, "--field", "1", "-q"],
        b"alice\tz\nzed\tq\n",
    );
    assert_eq!(stdout(&o), "alice\tz\n");
}

#[test]
fn merge_and_incompatible_merge() {
    let dir = Dir::new();
    write_lines(&dir.path("a.txt"), (0..500).map(member));
    write_lines(&dir.path("b.txt"), (500..1000).map(member));
    let common = ["--fpr", "0.01", "--items", "1000", "-q"];
    for (src, dst) in [("a.txt", "a.lhbf"), ("b.txt", "b.lhbf")] {
        let (dst, src) = (dir.s(dst), dir.s(src));
        let mut args = vec!["build", "-o", &dst, "-i", &src];
        args.extend_from_slice(&common);
        assert!(lesshash(&args).status.success());
    }
    let o = lesshash(&[
        "merge",
        &dir.s("a.lhbf"),
        &dir.s("b.lhbf"),
        "-o",
        &dir.s("ab.lhbf"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = lesshash(&["query", &dir.s("ab.lhbf"), "user-3", "user-700"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let info = stdout(&lesshash(&["info", &dir.s("ab.lhbf")]));
    assert!(info.contains("inserted         1000"), "{info}");

    // Another size: the message names the file and the parameter.
    let o = lesshash(&[
        "build",
        "-i",
        &dir.s("a.txt"),
        "-o",
        &dir.s("c.lhbf"),
        "--fpr",
        "0.01",
        "--items",
        "5000",
    ]);
    assert!(o.status.success());
    let o = lesshash(&[
        "merge",
        &dir.s("a.lhbf"),
        &dir.s("c.lhbf"),
        &dir.s("b.lhbf"),
        "-o",
        &dir.s("bad.lhbf"),
    ]);
    assert_error(&o, &["c.lhbf", "different --items or --fpr", "`bits`"]);
    assert!(!dir.path("bad.lhbf").exists());
    let o = lesshash(&["merge", &dir.s("a.lhbf"), "-o", &dir.s("one.lhbf")]);
    assert_error(&o, &["FILTER"]);
    // Another seed or layout: the option that set it.
    for (file, option, parameter, value) in [
        ("d.lhbf", "--seed", "`seed`", "7"),
        ("e.lhbf", "--layout", "`layout`", "classic"),
    ] {
        let (input, out) = (dir.s("b.txt"), dir.s(file));
        let mut args = vec!["build", "-i", &input, "-o", &out];
        args.extend_from_slice(&common);
        args.extend_from_slice(&[option, value]);
        assert!(lesshash(&args).status.success());
        let o = lesshash(&[
            "merge",
            &dir.s("a.lhbf"),
            &dir.s(file),
            "-o",
            &dir.s("bad.lhbf"),
        ]);
        assert_error(&o, &[file, &format!("different {option}"), parameter]);
    }
}

/// `--seed random`: a seed drawn from the OS, stored in the file (two
/// builds differ, neither is the default), the members found; `filter`
/// and `query` read it from the file.
#[test]
fn build_with_a_random_seed_stores_it() {
    let dir = Dir::new();
    let f = build_members(&dir, 1_000, &["--seed", "random"]);
    let first = lesshash::BloomFilter::from_bytes(&std::fs::read(&f).unwrap()).unwrap();
    let f = build_members(&dir, 1_000, &["--seed", "random"]);
    let second = lesshash::BloomFilter::from_bytes(&std::fs::read(&f).unwrap()).unwrap();
    assert_ne!(first.seed(), second.seed());
    assert!(![first.seed(), second.seed()].contains(&lesshash::DEFAULT_SEED));
    assert!((0..1_000).all(|i| second.contains(&member(i))));
    let o = lesshash(&["query", &f, &member(7)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn info_reports_the_parameters() {
    let dir = Dir::new();
    let f = build_members(
        &dir,
        10_000,
        &[
            "--layout",
            "partitioned",
            "--scheme",
            "double",
            "--seed",
            "0x2a",
        ],
    );
    let info = stdout(&lesshash(&["info", &f]));
    for needle in [
        "layout           partitioned",
        "scheme           double",
        "seed             0x2a",
        "inserted         10000",
        "hashes (k)       7",
        "fill ratio",
        "estimated items",
        "expected FPR",
        "bits/key",
    ] {
        assert!(info.contains(needle), "{needle:?} missing in:\n{info}");
    }
    // The numbers: the library's, for the file as the library loads it,
    // and the estimates near the truth (10,000 distinct keys).
    let loaded = lesshash::BloomFilter::from_bytes(&std::fs::read(&f).unwrap()).unwrap();
    let value = |label: &str| -> String {
        info.lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("{label:?} missing in:\n{info}"))
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let number = |label: &str| -> f64 {
        let v = value(label);
        let x: f64 = v.trim_end_matches('%').parse().unwrap_or(f64::NAN);
        assert!(x.is_finite(), "{label:?} is {v:?} in:\n{info}");
        x
    };
    assert_eq!(value("hashes (k)"), loaded.num_hashes().to_string());
    assert_eq!(value("bits (m)"), loaded.num_bits().to_string());
    assert_eq!(
        value("bits/key"),
        format!("{:.2}", loaded.num_bits() as f64 / 10_000.0)
    );
    assert_eq!(value("fill ratio"), format!("{:.4}", loaded.fill_ratio()));
    assert_eq!(
        value("estimated items"),
        format!("{:.0}", loaded.estimated_len())
    );
    assert_eq!(
        value("expected FPR"),
        format!("{:.4}%", 100.0 * loaded.expected_fpr())
    );
    // Independent of the code: each of 10,000 keys sets one uniform bit in
    // each of the k sub-arrays of m/k bits, so the fill is 1 - (1 - k/m)^n
    // with a standard deviation of about 0.001 here (band: 5 of them); the
    // estimate's is about 26 keys (band: 150); the rate is near the 1% the
    // filter was sized for.
    let (m, k) = (loaded.num_bits() as f64, f64::from(loaded.num_hashes()));
    let fill = 1.0 - (1.0 - k / m).powf(10_000.0);
    assert!(
        (number("fill ratio") - fill).abs() < 5e-3,
        "{fill} in:\n{info}"
    );
    assert!(
        (number("estimated items") - 10_000.0).abs() < 150.0,
        "{info}"
    );
    let rate = number("expected FPR");
    assert!((0.85..=1.1).contains(&rate), "{info}");
}

/// `--hash folded-multiply`: the file records the family (`info`), and
/// every build path (one thread, the pool's parallel hashing, a stream's
/// spooled hashes) writes the bytes the library builds in that family;
/// queries and `filter` read the family from the file. `--hash` with the
/// independent scheme or a Spark output is refused by name.
#[test]
fn build_with_the_folded_multiply_family() {
    let dir = Dir::new();
    let n = 10_000u32;
    let mut want = lesshash::BloomFilter::builder()
        .expected_items(u64::from(n))
        .fpr(0.01)
        .hash_family(lesshash::HashFamily::FoldedMultiply)
        .key_kind(lesshash::KeyKind::Text)
        .build()
        .unwrap();
    for i in 0..n {
        want.insert(&member(i));
    }
    let xxh3 = std::fs::read(build_members(&dir, n, &[])).unwrap();
    for threads in ["1", "2"] {
        let f = build_members(&dir, n, &["--hash", "folded-multiply", "-t", threads]);
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            bytes == want.to_bytes(),
            "-t {threads}: not the library's bytes"
        );
        assert_ne!(bytes, xxh3);
        assert_eq!(bytes[12], 2, "the header's hash byte");
        let info = stdout(&lesshash(&["info", &f]));
        assert!(info.contains("hash             folded-multiply"), "{info}");
        let o = lesshash(&["query", &f, &member(7), &member(n - 1)]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let all: String = (0..n).map(|i| member(i) + "\n").collect();
    for threads in ["1", "2"] {
        let out = dir.s("stream.lhbf");
        let o = lesshash_stdin(
            &[
                "build",
                "-i",
                "-",
                "-o",
                &out,
                "--fpr",
                "0.01",
                "--hash",
                "folded-multiply",
                "-q",
                "-t",
                threads,
            ],
            all.as_bytes(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            std::fs::read(&out).unwrap() == want.to_bytes(),
            "stream, -t {threads}: not the library's bytes"
        );
    }
    let f = dir.s("filter.lhbf");
    let o = lesshash_stdin(&["filter", &f, "-q"], all.as_bytes());
    assert_eq!(stdout(&o), all, "{}", stderr(&o));
    let info = stdout(&lesshash(&["info", &build_members(&dir, 10, &[])]));
    assert!(info.contains("hash             xxh3-128"), "{info}");
    let keys = dir.s("keys.txt");
    for (extra, needle) in [
        (&["--scheme", "independent"][..], "hash_family"),
        (&["--output-format", "spark-v2"][..], "--hash"),
        (&["--hash", "fast"][..], "folded-multiply"),
    ] {
        let mut args = vec!["build", "-i", &keys, "-o", &f, "--fpr", "0.01", "-q"];
        if !extra.contains(&"--hash") {
            args.extend(["--hash", "folded-multiply"]);
        }
        args.extend_from_slice(extra);
        let o = lesshash(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&o).contains(needle), "{extra:?}: {}", stderr(&o));
    }
}

/// Without `--layout`/`--scheme` the CLI builds what the library builds
/// by default: blocked with double hashing; a chosen layout gets its own
/// default scheme.
#[test]
fn defaults_are_the_librarys() {
    let dir = Dir::new();
    let f = build_members(&dir, 1000, &[]);
    let info = stdout(&lesshash(&["info", &f]));
    for needle in ["layout           blocked", "scheme           double"] {
        assert!(info.contains(needle), "{needle:?} missing in:\n{info}");
    }
    let f = build_members(&dir, 1000, &["--layout", "classic"]);
    let info = stdout(&lesshash(&["info", &f]));
    assert!(info.contains("scheme           enhanced-cube"), "{info}");
}

#[test]
fn bad_arguments_name_the_option() {
    let dir = Dir::new();
    write_lines(&dir.path("k.txt"), (0..10).map(member));
    let (k, o) = (dir.s("k.txt"), dir.s("o.lhbf"));
    for (args, needle) in [
        (vec!["build", "-i", &k, "-o", &o, "--fpr", "1.5"], "--fpr"),
        (vec!["build", "-i", &k, "-o", &o, "--fpr", "x"], "--fpr"),
        (vec!["build", "-i", &k, "-o", &o], "--fpr"),
        (vec!["build", "-i", &k, "--fpr", "0.1"], "--output"),
        (
            vec![
                "build", "-i", &k, "-o", &o, "--fpr", "0.1", "--layout", "nope",
            ],
            "--layout",
        ),
        (
            vec![
                "build", "-i", &k, "-o", &o, "--fpr", "0.1", "--scheme", "nope",
            ],
            "--scheme",
        ),
        (
            vec!["build", "-i", &k, "-o", &o, "--fpr", "0.1", "--items", "3x"],
            "--items",
        ),
        (
            vec![
                "build", "-i", &k, "-o", &o, "--fpr", "0.1", "--seed", "0xzz",
            ],
            "--seed",
        ),
        (
            vec!["build", "-i", &k, "-o", &o, "--fpr", "0.1", "--field", "0"],
            "--field",
        ),
        (
            vec![
                "build", "-i", &k, "-o", &o, "--fpr", "0.1", "--field", "1", "-d", "ab",
            ],
            "--delimiter",
        ),
        (
            vec!["build", "-i", &k, "-o", &o, "--fpr", "0.1", "-d", ","],
            "--field",
        ),
        (vec!["query", &o], "KEY"),
        (vec!["frobnicate"], "frobnicate"),
    ] {
        let out = lesshash(&args);
        assert_error(&out, &[needle]);
    }
    assert!(!dir.path("o.lhbf").exists());
    // A rate too small for the library's limits: argument_errors_are_one_line.
}

#[test]
fn file_errors_are_one_line_and_exit_2() {
    let dir = Dir::new();
    let f = build_members(&dir, 1000, &[]);
    let missing = dir.s("missing.txt");
    // Missing input.
    let o = lesshash(&[
        "build",
        "-i",
        &missing,
        "-o",
        &dir.s("x.lhbf"),
        "--fpr",
        "0.1",
    ]);
    assert_error(&o, &["missing.txt", "cannot open input"]);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let o = lesshash(&["filter", &f, "-i", &missing]);
    assert_error(&o, &["missing.txt"]);
    // Missing filter, for every command that loads one.
    for args in [
        vec!["filter", &*missing],
        vec!["query", &*missing, "k"],
        vec!["info", &*missing],
    ] {
        assert_error(&lesshash(&args), &["missing.txt", "cannot load filter"]);
    }
    // Unwritable output.
    let o = lesshash(&[
        "build",
        "-i",
        &dir.s("keys.txt"),
        "-o",
        &dir.s("no/such/dir/x.lhbf"),
        "--fpr",
        "0.1",
    ]);
    assert_error(&o, &["x.lhbf"]);
}

/// A read error (the input is a directory) is the same one-line error on
/// the parallel paths as on the one-thread ones, which report it from
/// the reading thread itself.
#[cfg(target_os = "linux")]
#[test]
fn read_errors_are_the_same_on_every_thread_count() {
    let dir = Dir::new();
    let f = build_members(&dir, 10, &[]);
    let input = dir.s("");
    let out = dir.s("x.lhbf");
    for cmd in [
        vec!["filter", &f, "-i", &input],
        vec![
            "build", "-i", &input, "-o", &out, "--fpr", "0.1", "--items", "9",
        ],
    ] {
        let errors: Vec<String> = ["1", "3"]
            .iter()
            .map(|t| {
                let mut args = cmd.clone();
                args.extend(["--threads", t]);
                let o = lesshash(&args);
                assert_error(&o, &["cannot read input", "Is a directory"]);
                stderr(&o)
            })
            .collect();
        assert_eq!(errors[0], errors[1], "{}", cmd[0]);
        assert_eq!(errors[0].lines().count(), 1, "{}", errors[0]);
    }
    assert!(!dir.path("x.lhbf").exists());
}

/// Flipped, truncated, extended and foreign bytes: an error naming the
/// file, never a panic.
#[test]
fn corrupt_filter_files_are_errors() {
    let dir = Dir::new();
    let f = build_members(&dir, 1000, &[]);
    let good = std::fs::read(&f).unwrap();
    let bad = dir.path("bad.lhbf");
    let mut cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"not a filter at all, just some text............................................"
                .to_vec(),
            "magic",
        ),
        // What a file that is not a filter looks like, in words.
        (
            b"user1\nuser2\n".to_vec(),
            "it looks like text (its first line: \"user1\")",
        ),
        (
            b"PAR1\x15\x04\x15\x80\x01".to_vec(),
            "it looks like a Parquet file",
        ),
        (Vec::new(), "(the input is empty)"),
        (good[..10].to_vec(), "truncated"),
        (good[..good.len() - 3].to_vec(), "truncated"),
        ([&good[..], b"extra"].concat(), "input length"),
        (Vec::new(), "truncated"),
    ];
    let mut flipped = good.clone();
    flipped[100] ^= 0x10; // a payload bit
    cases.push((flipped, "checksum"));
    let mut header = good.clone();
    header[20] ^= 0xff;
    cases.push((header, ""));
    let (b, keys, m) = (bad.to_str().unwrap(), dir.s("keys.txt"), dir.s("m.lhbf"));
    for (bytes, needle) in cases {
        std::fs::write(&bad, &bytes).unwrap();
        for args in [
            vec!["info", b],
            vec!["query", b, "user-1"],
            vec!["filter", b, "-i", &keys],
            vec!["merge", &f, b, "-o", &m],
        ] {
            let o = lesshash(&args);
            assert_error(&o, &["bad.lhbf", needle]);
            assert!(o.stdout.is_empty());
        }
    }
}

/// A failed build leaves no file at the target path, an existing target
/// untouched, and no temporary file behind.
#[test]
fn failed_build_leaves_the_target_alone() {
    let dir = Dir::new();
    let target = dir.path("t.lhbf");
    let o = lesshash(&[
        "build",
        "-i",
        &dir.s("missing"),
        "-o",
        target.to_str().unwrap(),
        "--fpr",
        "0.1",
    ]);
    assert_error(&o, &["missing"]);
    assert!(!target.exists());
    std::fs::write(&target, b"old contents").unwrap();
    // Reading a directory as input fails after the output's parameters are known.
    let o = lesshash(&[
        "build",
        "-i",
        dir.0.path().to_str().unwrap(),
        "-o",
        target.to_str().unwrap(),
        "--fpr",
        "0.1",
        "--items",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&target).unwrap(), b"old contents");
    let names: Vec<_> = std::fs::read_dir(dir.0.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["t.lhbf"], "a temporary file was left behind");
    // A successful build replaces it.
    let f = build_members(&dir, 10, &[]);
    std::fs::rename(f, &target).unwrap();
    assert!(
        lesshash(&["info", target.to_str().unwrap()])
            .status
            .success()
    );
}

/// `lesshash filter ... | head`: the closed pipe ends the program quietly.
#[test]
fn closed_stdout_exits_quietly() {
    let dir = Dir::new();
    let f = build_members(&dir, 300_000, &[]);
    let mut child = Command::new(BIN)
        .args(["filter", &f, "-i", &dir.s("keys.txt")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("error") && !err.contains("panicked"), "{err}");
}

#[test]
fn demo_runs_small() {
    // 200,000 keys: enough non-members for a 5-sigma band of 11% of the
    // rate (a rate 20% off fails), still about a second in a debug build.
    let o = lesshash(&["demo", "--keys", "200000", "--rounds", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for layout in lesshash::Layout::ALL {
        assert!(out.contains(layout.name()), "{out}");
    }
    for scheme in lesshash::Scheme::ALL {
        assert!(out.contains(scheme.name()), "{out}");
    }
    assert!(
        out.contains("measured") && out.contains("predicted"),
        "{out}"
    );
    // The numbers of every row: the layout's sizing for 200,000 keys at
    // 1%, the layout's rate for that size, and a measured rate within 5
    // standard errors of it (200,000 non-members: 0.022 points at 1%);
    // speeds finite and positive.
    let row = |name: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} row in:\n{out}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let pct = |v: &str| -> f64 {
        let x: f64 = v
            .strip_suffix('%')
            .and_then(|x| x.parse().ok())
            .unwrap_or(f64::NAN);
        assert!(x.is_finite(), "{v:?} in:\n{out}");
        x / 100.0
    };
    let speed = |v: &str| {
        let x: f64 = v.parse().unwrap_or(f64::NAN);
        assert!(x.is_finite() && x > 0.0, "{v:?} in:\n{out}");
    };
    let n = 200_000u64;
    let within = |measured: f64, predicted: f64| {
        let se = (predicted * (1.0 - predicted) / n as f64).sqrt();
        assert!(
            (measured - predicted).abs() < 5.0 * se,
            "measured {measured} vs predicted {predicted} in:\n{out}"
        );
    };
    for layout in lesshash::Layout::ALL {
        let r = row(layout.name());
        let (m, k) = lesshash::BloomFilter::builder()
            .layout(layout)
            .expected_items(n)
            .fpr(0.01)
            .geometry()
            .unwrap();
        assert_eq!(r[1], format!("{:.2}", m as f64 / n as f64), "{layout:?}");
        assert_eq!(r[2], k.to_string(), "{layout:?}");
        speed(&r[3]);
        speed(&r[4]);
        let predicted = layout.fpr(layout.default_scheme(), m, n, k);
        assert_eq!(r[6], format!("{:.3}%", 100.0 * predicted), "{layout:?}");
        within(pct(&r[5]), predicted);
    }
    for scheme in lesshash::Scheme::ALL {
        let r = row(scheme.name());
        let (m, k) = lesshash::BloomFilter::builder()
            .layout(lesshash::Layout::Classic)
            .scheme(scheme)
            .expected_items(n)
            .fpr(0.01)
            .geometry()
            .unwrap();
        let hashes = if scheme.is_two_hash() { 1 } else { k };
        assert_eq!(r[1], format!("{hashes}/key"), "{scheme:?}");
        let predicted = lesshash::Layout::Classic.fpr(scheme, m, n, k);
        assert_eq!(r[3], format!("{:.3}%", 100.0 * predicted), "{scheme:?}");
        within(pct(&r[2]), predicted);
    }
    // Where hashing once pays: three cases, each with insert, member and
    // non-member query as "k-hash ns -> one-hash ns (ratio x)", in units.
    assert!(
        out.contains("ns per key, k = 7 independent hashes -> one XXH3-128"),
        "{out}"
    );
    for case in [
        "in cache, u64 keys (10000 keys)",
        "in cache, 64-byte keys (10000 keys)",
        "larger, u64 keys (200000 keys, 0.2 MiB)",
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(case))
            .unwrap_or_else(|| panic!("no {case:?} row in:\n{out}"));
        let cells: Vec<&str> = line[case.len()..]
            .split(')')
            .filter(|c| !c.trim().is_empty())
            .collect();
        assert_eq!(cells.len(), 3, "{line}");
        for cell in cells {
            // "31.5 -> 17.5 (1.8x, 1.6-2.0" or "28.7 -> 29.0 (noisy: 0.8-1.3x"
            let w: Vec<&str> = cell.split_whitespace().collect();
            assert_eq!((w.len(), w[1]), (5, "->"), "{line}");
            speed(w[0]);
            speed(w[2]);
            let (low, high) = w[4].trim_end_matches('x').split_once('-').unwrap();
            let (low, high): (f64, f64) = (low.parse().unwrap(), high.parse().unwrap());
            assert!(low <= high, "{line}");
            if w[3] == "(noisy:" {
                assert!(low <= 1.0 && high >= 1.0, "{line}");
            } else {
                let ratio: f64 = w[3]
                    .trim_start_matches('(')
                    .trim_end_matches("x,")
                    .parse()
                    .unwrap();
                // The median ratio lies in its spread, which misses 1.0.
                assert!(low - 0.051 <= ratio && ratio <= high + 0.051, "{line}");
                assert!(low > 0.95 || high < 1.05, "{line}");
            }
        }
    }
    assert!(out.contains("(medians of 3 rounds"), "{out}");
}

#[test]
fn experiment_runs_small_and_names_bad_options() {
    let dir = Dir::new();
    let (csv, md, figs) = (dir.s("x.csv"), dir.s("x.md"), dir.s("figs"));
    let o = lesshash(&[
        "experiment",
        "--c",
        "8",
        "--n",
        "2000",
        "--trials",
        "20",
        "--variants",
        "paper",
        "--csv",
        &csv,
        "--markdown",
        &md,
        "--plot",
        &figs,
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("enhanced i^3"), "{}", stdout(&o));
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(rows.lines().count(), 1 + 5, "{rows}");
    assert!(
        std::fs::read_to_string(&md)
            .unwrap()
            .contains("lesshash experiment")
    );
    assert!(dir.path("figs/paper-figure1.svg").exists());
    // Redrawn from the CSV: the same table.
    let again = lesshash(&["experiment", "--from-csv", &csv, "-q"]);
    assert_eq!(stdout(&again), stdout(&o));
    assert_error(&lesshash(&["experiment", "--c", "0"]), &["--c"]);
    assert_error(&lesshash(&["experiment", "--n", "0", "--c", "8"]), &["--n"]);
    assert_error(
        &lesshash(&["experiment", "--variants", "x"]),
        &["--variants", "`x` is not a layout/scheme id"],
    );
    // Disjoint lists of ids, run apart, add up to the run of their union:
    // the rows of a variant do not depend on the others run with it.
    let part = |ids: &str, csv: &str| {
        let args = ["experiment", "--c", "8", "--n", "2000", "--trials", "20"];
        let o = lesshash(&[&args[..], &["--variants", ids, "--csv", csv, "-q"]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let (a, b, both) = (dir.s("a.csv"), dir.s("b.csv"), dir.s("both.csv"));
    part("classic/double,blocked/double", &a);
    part("split-block/enhanced-cube", &b);
    part(
        "classic/double,blocked/double,split-block/enhanced-cube",
        &both,
    );
    let joined = lesshash(&[
        "experiment",
        "--from-csv",
        &format!("{a},{b}"),
        "--plot",
        &figs,
        "-q",
    ]);
    let whole = lesshash(&["experiment", "--from-csv", &both, "-q"]);
    assert!(joined.status.success(), "{}", stderr(&joined));
    assert_eq!(stdout(&joined), stdout(&whole));
    // Blocked layouts ran: the every-layout figure is drawn too.
    assert!(dir.path("figs/layouts-figure1.svg").exists());
}

// ----------------------------------------------- output paths, signals, errors --

/// `lesshash ARGS` run in `dir` (so that an old binary's `-o -` writes a
/// file named `-` there, not in the repository), stdout to `stdout`.
#[cfg(unix)]
fn lesshash_to(dir: &Dir, args: &[&str], stdin: Stdio, stdout: Stdio) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir.0.path())
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("run lesshash")
}

/// The file appended to, as stdout (`>> path`).
#[cfg(unix)]
fn append_to(path: &Path) -> Stdio {
    Stdio::from(std::fs::OpenOptions::new().append(true).open(path).unwrap())
}

/// Exit 2 and exactly one line on stderr.
#[cfg(unix)]
#[track_caller]
fn assert_one_line_error(o: &Output, needles: &[&str]) {
    assert_error(o, needles);
    assert_eq!(stderr(o).lines().count(), 1, "{}", stderr(o));
}

/// The names in `dir`, sorted.
fn names_in(dir: &Dir) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir.0.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// A hostile review found that `-o` renamed a temporary file
/// over whatever was at the path. As root, `-o /dev/null` left `/dev/null` a
/// regular file; a FIFO's reader got nothing; a symlink became a file; `-o -`
/// made a file named `-`. Now a FIFO, a character device and `-o -` are
/// written straight through, and a symlink's target is replaced (the link
/// stays), also when it dangles.
#[cfg(unix)]
#[test]
fn output_to_pipes_devices_stdout_and_symlinks() {
    use std::os::unix::fs::FileTypeExt;
    let dir = Dir::new();
    write_lines(&dir.path("keys.txt"), (0..1000).map(member));
    let build = |out: &str| {
        let args = [
            "build", "-i", "keys.txt", "-o", out, "--fpr", "0.01", "--items", "1000", "-q",
        ];
        lesshash_to(&dir, &args, Stdio::null(), Stdio::piped())
    };
    let o = build("reference.lhbf");
    assert!(o.status.success(), "{}", stderr(&o));
    let reference = std::fs::read(dir.path("reference.lhbf")).unwrap();

    // `-o -`: the filter on stdout, no file named `-`.
    let o = build("-");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dir.path("-").exists(), "`-o -` created a file named `-`");
    assert_eq!(
        o.stdout, reference,
        "`-o -` must write the filter to stdout"
    );

    // A symlink to an existing file, and a dangling one.
    std::fs::write(dir.path("real.lhbf"), b"old").unwrap();
    std::os::unix::fs::symlink("real.lhbf", dir.path("link.lhbf")).unwrap();
    std::os::unix::fs::symlink("later.lhbf", dir.path("dangling.lhbf")).unwrap();
    for (link, target) in [("link.lhbf", "real.lhbf"), ("dangling.lhbf", "later.lhbf")] {
        let o = build(link);
        assert!(o.status.success(), "{}", stderr(&o));
        let meta = std::fs::symlink_metadata(dir.path(link)).unwrap();
        assert!(meta.file_type().is_symlink(), "{link} was replaced");
        assert_eq!(std::fs::read(dir.path(target)).unwrap(), reference);
    }

    // A FIFO: its reader gets the filter, and it stays a FIFO.
    let fifo = dir.path("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = build("pipe");
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(
        meta.file_type().is_fifo(),
        "the FIFO was replaced by a regular file"
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(reader.join().unwrap(), reference);

    // A character device (the /dev/null case), made in the temporary
    // directory so that a failure replaces only this copy. Needs root.
    let null = dir.path("null");
    if Command::new("mknod")
        .args([null.to_str().unwrap(), "c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        let o = build("null");
        assert!(o.status.success(), "{}", stderr(&o));
        let meta = std::fs::symlink_metadata(&null).unwrap();
        assert!(meta.file_type().is_char_device(), "the device was replaced");
    } else {
        common::skip_unless_ci("the character-device part needs mknod (root)");
    }

    // A directory is an error naming it, and nothing is written.
    std::fs::create_dir(dir.path("sub")).unwrap();
    assert_one_line_error(&build("sub"), &["sub", "directory"]);
    assert!(
        names_in(&dir).iter().all(|n| !n.ends_with(".tmp")),
        "{:?}",
        names_in(&dir)
    );
}

/// A hostile review found that `build -i x -o x` replaced the keys with the
/// filter (exit 0), and `filter F -i x >> x` read its own output back (a
/// 5.9 MB file grew to 3.4 GB in 20 s). An input that is the output file
/// (same device and inode: the path, a symlink or a hard link to it) or
/// stdout's file is refused, as `cat` refuses "input file is output file".
#[cfg(unix)]
#[test]
fn an_input_that_is_the_output_is_refused() {
    let dir = Dir::new();
    let f = build_members(&dir, 100, &[]);
    let keys_path = dir.path("keys.txt");
    let keys = std::fs::read(&keys_path).unwrap();
    std::os::unix::fs::symlink("keys.txt", dir.path("sym.txt")).unwrap();
    std::fs::hard_link(&keys_path, dir.path("hard.txt")).unwrap();
    for out in ["keys.txt", "sym.txt", "hard.txt"] {
        let args = ["build", "-i", "keys.txt", "-o", out, "--fpr", "0.1"];
        let o = lesshash_to(&dir, &args, Stdio::null(), Stdio::piped());
        assert_one_line_error(&o, &["keys.txt", "output file", out]);
    }
    assert_eq!(std::fs::read(&keys_path).unwrap(), keys);

    // stdout appended to an input: `-i x >> x`, `< x >> x`, `>> FILTER`.
    let stdin_keys = || Stdio::from(std::fs::File::open(&keys_path).unwrap());
    let cases: [(Vec<&str>, Stdio, &str); 5] = [
        (
            vec!["filter", &f, "-i", "keys.txt"],
            Stdio::null(),
            "keys.txt",
        ),
        (vec!["filter", &f], stdin_keys(), "stdin"),
        (
            vec!["build", "-i", "keys.txt", "-o", "-", "--fpr", "0.1"],
            Stdio::null(),
            "keys.txt",
        ),
        (
            vec!["merge", &f, &f, "-o", "-"],
            Stdio::null(),
            "filter.lhbf",
        ),
        (vec!["query", &f, "user-1"], Stdio::null(), "filter.lhbf"),
    ];
    let filter_bytes = std::fs::read(&f).unwrap();
    for (args, stdin, needle) in cases {
        let target = if needle == "filter.lhbf" {
            Path::new(&f).to_path_buf()
        } else {
            keys_path.clone()
        };
        let o = lesshash_to(&dir, &args, stdin, append_to(&target));
        assert_one_line_error(&o, &[needle, "stdout"]);
        assert_eq!(std::fs::read(&keys_path).unwrap(), keys, "{args:?}");
        assert_eq!(std::fs::read(&f).unwrap(), filter_bytes, "{args:?}");
    }

    // Not regular files: a terminal or /dev/null is routinely both ends.
    let o = lesshash_to(&dir, &["filter", &f], Stdio::null(), Stdio::null());
    assert!(o.status.success(), "{}", stderr(&o));
    // `merge a b -o a` is a union in place: the inputs are loaded first and
    // the result renamed over `a`.
    let g = dir.s("g.lhbf");
    assert!(lesshash(&["merge", &f, &f, "-o", &g]).status.success());
    let o = lesshash(&["merge", &f, &f, "-o", &f]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&f).unwrap(), std::fs::read(&g).unwrap());
}

/// A hostile review found that SIGINT or SIGTERM during a write left the temporary
/// file (757 MB after a SIGINT). The temporary file is now created before
/// the input is read, and a signal removes it and exits 130 or 143. The
/// input is a pipe held open, so the signal arrives while it exists.
#[cfg(unix)]
#[test]
fn signals_remove_the_temporary_file() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let dir = Dir::new();
        let out = dir.s("out.lhbf");
        let mut child = Command::new(BIN)
            .args(["build", "-o", &out, "--fpr", "0.01", "--items", "1000"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"alice\nbob\n").unwrap();
        let start = std::time::Instant::now();
        while !names_in(&dir).iter().any(|n| n.ends_with(".tmp")) {
            if start.elapsed().as_secs() > 20 {
                let _ = child.kill();
                panic!("no temporary file appeared: {:?}", names_in(&dir));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(code), "SIG{signal}");
        assert_eq!(names_in(&dir), Vec::<String>::new(), "SIG{signal}");
    }
}

/// A hostile review found that argument errors were three lines (error, blank, "For
/// more information"), where the README promises one; `--fpr 1e-300` printed
/// a 300-digit decimal (476 characters).
#[test]
fn argument_errors_are_one_line() {
    let dir = Dir::new();
    write_lines(&dir.path("k.txt"), (0..10).map(member));
    let (k, o) = (dir.s("k.txt"), dir.s("o.lhbf"));
    for (args, needle) in [
        (vec!["build", "-i", &k, "-o", &o, "--fpr", "abc"], "--fpr"),
        (vec!["build", "-i", &k, "-o", &o, "--fpr", "0"], "--fpr"),
        (vec!["build", "-i", &k, "-o", &o], "--fpr"),
        (vec!["build", "-i", &k, "--fpr", "0.1", "--fp", "1"], "--fp"),
        (vec!["build", "-i", &k, "-o", &o, "--fpr", "1e300"], "1e300"),
        (vec!["query", &o], "KEY"),
        (vec!["frobnicate"], "frobnicate"),
    ] {
        let out = lesshash(&args);
        assert_error(&out, &[needle]);
        assert_eq!(
            stderr(&out).lines().count(),
            1,
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let out = lesshash(&[
        "build",
        "-i",
        &k,
        "-o",
        &o,
        "--fpr",
        "1e-300",
        "--items",
        "1000000000000",
    ]);
    assert_error(&out, &["fpr", "1e-300"]);
    assert!(stderr(&out).len() < 250, "{}", stderr(&out));
    assert!(!dir.path("o.lhbf").exists());
    // Help and version are not errors.
    assert!(lesshash(&["--help"]).status.success());
    assert!(lesshash(&["--version"]).status.success());
}

/// A hostile review found that with stdout closed (`>&-`) the output was lost with
/// exit status 0 (std reopens a closed stdout on /dev/null); a failing
/// stdout (a full disk) said "No space left on device (os error 28)" twice in
/// one message. Both are now exit 2 with one line; `| head` stays quiet
/// (`closed_stdout_exits_quietly`).
#[cfg(unix)]
#[test]
fn closed_or_failing_stdout_is_an_error() {
    let dir = Dir::new();
    let f = build_members(&dir, 1000, &[]);
    let keys = dir.s("keys.txt");
    let commands: [Vec<&str>; 5] = [
        vec!["filter", &f, "-i", &keys],
        vec!["query", &f, "user-1"],
        vec!["info", &f],
        vec!["build", "-i", &keys, "-o", "-", "--fpr", "0.1"],
        vec!["merge", &f, &f, "-o", "-"],
    ];
    for args in &commands {
        // `exec lesshash ARGS >&-`
        let o = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" >&-")
            .arg(BIN)
            .args(args)
            .current_dir(dir.0.path())
            .output()
            .unwrap();
        assert_one_line_error(&o, &["stdout"]);
    }
    assert!(!dir.path("-").exists());
    // With -o FILE stdout is not written, so a closed one (or /dev/null
    // opened for reading and writing, as Python's subprocess.DEVNULL
    // does: the same to the program) is no error.
    let o = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" \"$@\" >&-")
        .arg(BIN)
        .args(["filter", &f, "-q", "-i", &keys, "-o", "kept.txt"])
        .current_dir(dir.0.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path("kept.txt").exists());
    if !Path::new("/dev/full").exists() {
        common::skip_unless_ci("the /dev/full part needs /dev/full");
        return;
    }
    for args in &commands {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = lesshash_to(&dir, args, Stdio::null(), Stdio::from(full));
        assert_one_line_error(&o, &["stdout", "No space left on device"]);
        assert_eq!(
            stderr(&o).matches("os error 28").count(),
            1,
            "{}",
            stderr(&o)
        );
    }
}

/// A hostile review found that a filter too large for memory was reported as "invalid
/// filter parameters". Only where the kernel refuses an allocation larger
/// than memory (`vm.overcommit_memory` 0 or 2): with 1 it would succeed and
/// the test would write terabytes.
#[cfg(target_os = "linux")]
#[test]
fn allocation_failure_is_not_a_parameter_error() {
    let mode = std::fs::read_to_string("/proc/sys/vm/overcommit_memory").unwrap_or_default();
    if mode.trim() == "1" || mode.is_empty() {
        common::skip_unless_ci(&format!(
            "needs vm.overcommit_memory 0 or 2 (it is {:?})",
            mode.trim()
        ));
        return;
    }
    let dir = Dir::new();
    write_lines(&dir.path("k.txt"), (0..10).map(member));
    let out = lesshash(&[
        "build",
        "-i",
        &dir.s("k.txt"),
        "-o",
        &dir.s("o.lhbf"),
        "--fpr",
        "0.1",
        "--items",
        "7000000000000",
    ]);
    assert_error(&out, &["memory", "bits"]);
    assert!(!stderr(&out).contains("invalid"), "{}", stderr(&out));
    assert_eq!(names_in(&dir), ["k.txt"]);
}

/// `query`, `filter` and `info` map the filter file: under a data-segment
/// limit (`ulimit -d`, which counts heap and anonymous memory, not
/// read-only file maps) far below the filter's size they still answer,
/// while `merge`, which must load the filter, cannot allocate it.
#[cfg(target_os = "linux")]
#[test]
fn a_filter_larger_than_the_memory_limit_is_queried_through_the_map() {
    let dir = Dir::new();
    write_lines(&dir.path("keys.txt"), (0..1000).map(member));
    let (keys, f) = (dir.s("keys.txt"), dir.s("big.lhbf"));
    // 50 million keys at 1%: a 62 MB file, against a 24 MiB limit.
    let o = lesshash(&[
        "build", "-i", &keys, "-o", &f, "--fpr", "0.01", "--items", "50000000", "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::metadata(&f).unwrap().len() > 60_000_000);
    let limited = |args: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -d 24576 && exec \"$0\" {args}"))
            .arg(BIN)
            .output()
            .unwrap()
    };
    for verify in ["", "--skip-checksum"] {
        let o = limited(&format!("query {verify} {f} user-1 user-999"));
        assert_eq!(o.status.code(), Some(0), "{verify}: {}", stderr(&o));
        assert_eq!(stdout(&o), "user-1\tyes\nuser-999\tyes\n");
        let o = limited(&format!("filter {verify} {f} -i {keys} -q"));
        assert_eq!(o.stdout.iter().filter(|&&b| b == b'\n').count(), 1000);
        let o = limited(&format!("info {verify} {f}"));
        assert!(
            stdout(&o).contains("inserted         1000"),
            "{}",
            stdout(&o)
        );
    }
    // The limit is real: loading the same filter fails under it.
    let o = limited(&format!("merge {f} {f} -o {}", dir.s("m.lhbf")));
    assert_error(&o, &["allocate"]);
}

/// `--skip-checksum` opens a damaged payload (and answers from it) where
/// the default refuses it; header and length damage is refused either way.
#[test]
fn skip_checksum_skips_only_the_checksum() {
    let dir = Dir::new();
    let f = build_members(&dir, 1000, &[]);
    let good = std::fs::read(&f).unwrap();
    let bad = dir.s("bad.lhbf");
    let mut flipped = good.clone();
    flipped[100] ^= 0x10;
    std::fs::write(&bad, &flipped).unwrap();
    assert_error(&lesshash(&["query", &bad, "user-1"]), &["checksum"]);
    let o = lesshash(&["query", "--skip-checksum", &bad, "user-1"]);
    assert_eq!(stdout(&o), "user-1\tyes\n", "{}", stderr(&o));
    let o = lesshash(&["info", "--skip-checksum", &bad]);
    assert!(stdout(&o).contains("not checked"), "{}", stdout(&o));
    std::fs::write(&bad, &good[..good.len() - 1]).unwrap();
    assert_error(
        &lesshash(&["query", "--skip-checksum", &bad, "user-1"]),
        &["truncated"],
    );
}

/// A filter that is not a regular file (a pipe) cannot be mapped: it is
/// read whole, with the checksum checked, and answers the same.
#[cfg(unix)]
#[test]
fn a_filter_on_a_pipe_is_read_not_mapped() {
    let dir = Dir::new();
    let f = build_members(&dir, 1000, &[]);
    let bytes = std::fs::read(&f).unwrap();
    let o = lesshash_stdin(&["query", "/dev/stdin", "user-5", "nobody"], &bytes);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("user-5\tyes\n"), "{}", stdout(&o));
    let mut flipped = bytes.clone();
    flipped[100] ^= 0x10;
    let o = lesshash_stdin(&["query", "/dev/stdin", "user-5"], &flipped);
    assert_error(&o, &["checksum"]);
}

/// A filter file truncated in place while `filter` has it mapped: the
/// next query of a page past the new end raises SIGBUS, and the command
/// says so in one line naming the file and exits with status 2, instead
/// of dying of the signal (status 135) with nothing on stderr. The child
/// is caught after it has mapped the filter (its /proc/PID/maps shows the
/// file) and before it reads any key; the file is then cut to one page
/// and the keys sent. Two threads: both may fault, the line is written
/// once.
#[cfg(target_os = "linux")]
#[test]
fn a_filter_file_truncated_while_mapped_is_one_line_and_status_2() {
    use std::io::Write;
    let dir = Dir::new();
    let f = build_members(&dir, 300_000, &[]);
    let mut child = Command::new(BIN)
        .args(["filter", &f, "--threads", "2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lesshash");
    let maps = format!("/proc/{}/maps", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(&maps).is_ok_and(|m| m.contains(f.as_str())) {
        assert!(
            std::time::Instant::now() < deadline,
            "the filter was never mapped"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let keys: String = (0..200_000).map(|i| format!("{}\n", member(i))).collect();
    let mut stdin = child.stdin.take().unwrap();
    // The child may die before it reads everything: a broken pipe here is
    // expected.
    let _ = stdin.write_all(keys.as_bytes());
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "status {:?}, stderr {err:?}",
        o.status
    );
    assert!(
        err.contains(&format!("filter file {f} changed size while in use")),
        "{err:?}"
    );
    assert_eq!(err.lines().count(), 1, "{err:?}");
}

// --------------------------------- builds from a stream in bounded memory --

/// `lesshash ARGS` with `input` written to its stdin (a pipe) by a thread
/// and `env` set; stdout and stderr captured.
fn lesshash_piped(args: &[&str], input: &[u8], env: &[(&str, &str)]) -> Output {
    piped(Command::new(BIN).args(args), input, env)
}

/// `command` with `input` written to its stdin by a thread and `env` set.
fn piped(command: &mut Command, input: &[u8], env: &[(&str, &str)]) -> Output {
    let mut child = command
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lesshash");
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// `n` lines `key-0` to `key-{n-1}`, each with its newline.
fn numbered_keys(n: usize) -> Vec<u8> {
    let mut input = Vec::with_capacity(n * 12);
    for i in 0..n {
        writeln!(input, "key-{i}").unwrap();
    }
    input
}

/// `build` from a pipe without `--items` keeps only each key's 16-byte
/// hash (past `LESSHASH_SPILL_BYTES` in a temporary file) and inserts the hashes once the lines are counted and
/// the filter sized. The filter file is byte for byte the one built from
/// the same lines in a regular file (two passes), the header's insert
/// count included, with the same summary, on 1 and 2 threads, with every
/// hash in memory (the default budget, 64 MiB) and with nearly all of them
/// in the file (a 1 MiB budget for 3 million lines, 48 MB of hashes; 1 KiB
/// for the small input). The small input has CRLF ends, empty lines, lines
/// without field 2 and an unterminated last line, built as whole lines, as
/// field 2 (whose lines without the field count towards the size, as the
/// two passes count them) and with the `Independent` scheme (whose input
/// bytes are kept instead of hashes). A FIFO given with `-i` is read once:
/// the two passes read it to its end, then waited forever on a second open.
#[test]
fn a_piped_build_without_items_is_the_file_build() {
    let dir = Dir::new();
    let big = numbered_keys(3_000_000);
    let mut small: Vec<u8> = (0..20_000)
        .flat_map(|i| mixed_line(i).into_bytes())
        .collect();
    small.extend_from_slice(b"0\tlast-key");
    let cases: [(&str, &[u8], &[&str], &str); 4] = [
        ("3M lines", &big, &[], "1048576"),
        ("mixed", &small, &[], "1024"),
        ("mixed field 2", &small, &["--field", "2"], "1024"),
        (
            "mixed independent",
            &small,
            &["--scheme", "independent"],
            "1024",
        ),
    ];
    let input = dir.s("input.txt");
    for (mode, lines, extra, budget) in cases {
        std::fs::write(&input, lines).unwrap();
        // To stdout: a file would be synced, for seconds in all.
        let mut args = vec!["build", "-o", "-", "--fpr", "0.01"];
        args.extend_from_slice(extra);
        let from_file = run_threads(args.clone(), "1", false, lines, &input, mode);
        let summary = without_timing(&stderr(&from_file));
        if mode == "3M lines" {
            std::fs::write(dir.path("big.lhbf"), &from_file.stdout).unwrap();
            let info = stdout(&lesshash(&["info", &dir.s("big.lhbf")]));
            assert!(info.contains("inserted         3000000"), "{info}");
        }
        for threads in ["1", "2"] {
            for env in [vec![], vec![("LESSHASH_SPILL_BYTES", budget)]] {
                let mut a = args.clone();
                a.extend(["--threads", threads]);
                let o = lesshash_piped(&a, lines, &env);
                let case = format!("{mode} threads={threads} {env:?}");
                assert!(o.status.success(), "{case}: {}", stderr(&o));
                assert!(o.stdout == from_file.stdout, "{case}: another file");
                assert_eq!(without_timing(&stderr(&o)), summary, "{case}");
            }
        }
    }

    #[cfg(unix)]
    {
        let fifo = dir.s("fifo");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let writer = {
            let (fifo, small) = (fifo.clone(), small.clone());
            std::thread::spawn(move || std::fs::write(fifo, small).unwrap())
        };
        let mut child = Command::new(BIN)
            .args(["build", "-i", &fifo, "-o", "-", "--fpr", "0.01", "-q"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed().as_secs() > 30 {
                let _ = child.kill();
                // Unblocks the writer if the child never opened the FIFO.
                let _ = std::fs::OpenOptions::new().read(true).open(&fifo);
                panic!("build -i FIFO did not end in 30 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        writer.join().unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success());
        std::fs::write(&input, &small).unwrap();
        let from_file = lesshash(&["build", "-i", &input, "-o", "-", "--fpr", "0.01", "-q"]);
        assert!(o.stdout == from_file.stdout, "FIFO: another file");
    }
}

/// The memory of a piped build without `--items` does not grow with the
/// input. Under a data-segment limit of 96 MiB
/// (`ulimit -d 98304`, RLIMIT_DATA: the heap and private anonymous maps,
/// where the old code's buffer was), 8 million lines (95 MB) from a pipe,
/// with a spill budget of 1 MiB (so 127 MB of hashes go to the file),
/// build on 1 and 2 threads the file built from the same lines in a
/// regular file without a limit. Measured on the 2-core development
/// machine, the smallest `ulimit -d` that succeeds: 14 MiB on one thread,
/// 46-50 MiB on two (the reader's blocks), peak RSS 18 and 30 MB; the old
/// code, which read the whole input into memory, needed 141 MiB (one
/// thread) and 231 MiB (two), and fails here with "cannot read input
/// stdin: out of memory".
#[cfg(target_os = "linux")]
#[test]
fn a_piped_build_without_items_stays_under_a_memory_limit() {
    let dir = Dir::new();
    let lines = numbered_keys(8_000_000);
    let input = dir.s("input.txt");
    std::fs::write(&input, &lines).unwrap();
    let from_file = lesshash(&["build", "-i", &input, "-o", "-", "--fpr", "0.01", "-q"]);
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    for threads in ["1", "2"] {
        let o = piped(
            Command::new("sh")
                .arg("-c")
                .arg("ulimit -d 98304 && exec \"$0\" \"$@\"")
                .arg(BIN)
                .args([
                    "build",
                    "-o",
                    "-",
                    "--fpr",
                    "0.01",
                    "-q",
                    "--threads",
                    threads,
                ]),
            &lines,
            &[("LESSHASH_SPILL_BYTES", "1048576")],
        );
        assert!(
            o.status.success(),
            "threads={threads}: {:?} {}",
            o.status,
            stderr(&o)
        );
        assert!(
            o.stdout == from_file.stdout,
            "threads={threads}: another file"
        );
    }
}

/// The open files of process `pid` that are in `dir` (their `/proc` links;
/// an unlinked file's ends in " (deleted)").
#[cfg(target_os = "linux")]
fn open_files_in(pid: u32, dir: &Path) -> Vec<PathBuf> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir))
        .collect()
}

/// The file a piped build spills its hashes to is
/// unnamed (created and unlinked at once), in TMPDIR, so it leaves nothing
/// there however the process ends: after a normal end, an error (the
/// filter written to `/dev/full`), a reader of `-o -` gone (the write's
/// EPIPE: Rust ignores SIGPIPE), SIGINT, SIGTERM and even SIGKILL in the
/// middle of the input. In the signal cases the input is held open until
/// the child has the file open in TMPDIR (its `/proc/PID/fd` link), which
/// shows the spill reached the file; a TMPDIR that does not exist is an
/// error naming it. Budget 0: every hash goes to the file.
#[cfg(target_os = "linux")]
#[test]
fn the_spill_file_leaves_nothing_behind() {
    let (tmp, out) = (Dir::new(), Dir::new());
    let tmp_path = std::fs::canonicalize(tmp.0.path()).unwrap();
    let tmpdir = tmp_path.to_str().unwrap().to_string();
    let env = [("TMPDIR", tmpdir.as_str()), ("LESSHASH_SPILL_BYTES", "0")];
    let lines = numbered_keys(200_000);
    let target = out.s("f.lhbf");
    let build = ["build", "-o", &target, "--fpr", "0.01", "-q"];

    let o = lesshash_piped(&build, &lines, &env);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(names_in(&tmp), Vec::<String>::new(), "a normal end");
    assert_eq!(names_in(&out), ["f.lhbf"]);
    std::fs::remove_file(&target).unwrap();

    let missing = format!("{tmpdir}/missing");
    let o = lesshash_piped(&build, &lines, &[("TMPDIR", &missing), env[1]]);
    assert_error(&o, &["cannot create a temporary file in", &missing]);

    let mut child = Command::new(BIN)
        .args(["build", "-o", "-", "--fpr", "0.01", "-q"])
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away
    child.stdin.take().unwrap().write_all(&lines).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "EPIPE: {}", stderr(&o));
    assert_eq!(names_in(&tmp), Vec::<String>::new(), "EPIPE");

    if Path::new("/dev/full").exists() {
        let o = lesshash_piped(&["build", "-o", "/dev/full", "--fpr", "0.01"], &lines, &env);
        assert_error(&o, &["No space left on device"]);
        assert_eq!(names_in(&tmp), Vec::<String>::new(), "an error");
    } else {
        common::skip_unless_ci("the /dev/full part needs /dev/full");
    }

    for (signal, code) in [("INT", Some(130)), ("TERM", Some(143)), ("KILL", None)] {
        let mut child = Command::new(BIN)
            .args(build)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&lines).unwrap();
        let start = std::time::Instant::now();
        while open_files_in(child.id(), &tmp_path).is_empty() {
            if start.elapsed().as_secs() > 20 {
                let _ = child.kill();
                panic!("SIG{signal}: no spill file opened in {tmpdir}");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(names_in(&tmp), Vec::<String>::new(), "SIG{signal}: named");
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.code(), code, "SIG{signal}");
        assert_eq!(names_in(&tmp), Vec::<String>::new(), "SIG{signal}");
        if code.is_some() {
            // The handler removed the output's temporary file too.
            assert_eq!(names_in(&out), Vec::<String>::new(), "SIG{signal}");
        }
    }
}

/// `--keys int`: lines read as 64-bit integers hash as the crate's `u64` /
/// `i64` keys (and Python's ints), so `build --keys int` on 1, 2 and 3
/// threads is the crate's filter of those integers, byte for byte;
/// `filter` and `query` with `--keys int` find them; a line that is not an
/// integer is an error naming it and the option (status 2).
#[test]
fn int_keys_hash_as_the_crates_integers() {
    let dir = Dir::new();
    let ints: Vec<i64> = (-2_000..3_000).map(|i| i * 7919).collect();
    let text: String = ints.iter().map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.path("ints.txt"), &text).unwrap();
    let mut expect = lesshash::BloomFilter::builder()
        .expected_items(ints.len() as u64)
        .fpr(0.01)
        .build()
        .unwrap();
    expect.insert_batch(&ints);
    // The file records that its keys are 64-bit integers.
    expect.set_key_kind(lesshash::KeyKind::Int64);
    for threads in ["1", "2", "3"] {
        let out = dir.s(&format!("ints{threads}.lhbf"));
        let o = lesshash(&[
            "build",
            "-q",
            "--keys",
            "int",
            "-i",
            &dir.s("ints.txt"),
            "-o",
            &out,
            "--fpr",
            "0.01",
            "--threads",
            threads,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            std::fs::read(&out).unwrap(),
            expect.to_bytes(),
            "threads={threads}"
        );
        let o = lesshash(&[
            "filter",
            "-q",
            "--keys",
            "int",
            &out,
            "-i",
            &dir.s("ints.txt"),
            "--threads",
            threads,
        ]);
        assert_eq!(stdout(&o), text, "threads={threads}");
    }
    let o = lesshash(&[
        "query",
        "--keys",
        "int",
        &dir.s("ints1.lhbf"),
        "-15838",
        "0",
    ]);
    assert_eq!(stdout(&o), "-15838\tyes\n0\tyes\n");
    std::fs::write(dir.path("bad.txt"), "1\n2\nthree\n").unwrap();
    let o = lesshash(&[
        "build",
        "-q",
        "--keys",
        "int",
        "-i",
        &dir.s("bad.txt"),
        "-o",
        &dir.s("bad.lhbf"),
        "--fpr",
        "0.01",
    ]);
    assert_error(&o, &["\"three\"", "--keys int"]);
    assert!(!dir.path("bad.lhbf").exists());
}

/// A `--field` that no line has (a wrong field or delimiter): `build`
/// fails naming both instead of writing an empty filter; `filter` warns on
/// stderr, also under `-q`, on 1 and 2 threads. One line with the field is
/// enough for neither to complain.
#[test]
fn a_field_no_line_has_is_an_error_or_a_loud_warning() {
    let dir = Dir::new();
    let lines: String = (0..5_000).map(|i| format!("user-{i},{i}\n")).collect();
    std::fs::write(dir.path("tab.txt"), &lines).unwrap();
    let out = dir.s("f.lhbf");
    let o = lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("tab.txt"),
        "-o",
        &out,
        "--fpr",
        "0.01",
        "--field",
        "2",
    ]);
    assert_error(
        &o,
        &[
            "none of the 5000 lines",
            "field 2",
            "'\\t'",
            "--field and -d",
        ],
    );
    assert!(!dir.path("f.lhbf").exists());
    let o = lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("tab.txt"),
        "-o",
        &out,
        "--fpr",
        "0.01",
        "--field",
        "2",
        "-d",
        ",",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for threads in ["1", "2"] {
        let o = lesshash(&[
            "filter",
            "-q",
            &out,
            "-i",
            &dir.s("tab.txt"),
            "--field",
            "2",
            "--threads",
            threads,
        ]);
        assert!(o.status.success());
        let err = stderr(&o);
        assert!(
            err.contains("warning: none of the 5000 lines") && err.contains("--field and -d"),
            "{err}"
        );
        // The summary counts the keys looked up, not the lines read.
        let o = lesshash(&[
            "filter",
            &out,
            "-i",
            &dir.s("tab.txt"),
            "--field",
            "2",
            "--threads",
            threads,
        ]);
        let err = stderr(&o);
        assert!(
            err.contains("filtered 0 keys in")
                && err.contains("of 5000 lines (5000 without a key), 0 lines possibly present"),
            "{err}"
        );
        let o = lesshash(&[
            "filter",
            "-q",
            &out,
            "-i",
            &dir.s("tab.txt"),
            "--field",
            "2",
            "-d",
            ",",
            "--threads",
            threads,
        ]);
        assert!(
            o.status.success() && stderr(&o).is_empty(),
            "{}",
            stderr(&o)
        );
        assert_eq!(stdout(&o), lines);
    }
}

/// `-` as the filter reads it from stdin, for `query`, `info` and
/// `filter` (whose input must then be a file); both on stdin is an error.
#[test]
fn a_filter_given_as_dash_is_read_from_stdin() {
    let dir = Dir::new();
    let f = build_members(&dir, 1_000, &[]);
    let bytes = std::fs::read(&f).unwrap();
    let o = lesshash_stdin(&["query", "-", &member(3), "nobody-1"], &bytes);
    assert_eq!(stdout(&o), format!("{}\tyes\nnobody-1\tno\n", member(3)));
    let o = lesshash_stdin(&["info", "-"], &bytes);
    assert!(
        o.status.success() && stdout(&o).contains("inserted         1000"),
        "{}",
        stderr(&o)
    );
    std::fs::write(dir.path("probe.txt"), format!("{}\nnobody-2\n", member(9))).unwrap();
    let o = lesshash_stdin(&["filter", "-q", "-", "-i", &dir.s("probe.txt")], &bytes);
    assert_eq!(stdout(&o), format!("{}\n", member(9)), "{}", stderr(&o));
    let o = lesshash_stdin(&["filter", "-"], &bytes);
    assert_error(&o, &["both be stdin"]);
}

/// A key `--keys int` cannot read names the input and its line, on every
/// path: filter and build, one thread and two (the line counted across
/// blocks and pieces), a file and stdin, a field with lines without it
/// before the bad one, build with and without --items.
#[test]
fn a_bad_int_key_names_the_file_and_line() {
    let dir = Dir::new();
    write_lines(&dir.path("ids.txt"), (0..100).map(|i| i.to_string()));
    let f = dir.s("ids.lhbf");
    assert!(
        lesshash(&[
            "build",
            "-q",
            "-i",
            &dir.s("ids.txt"),
            "--keys",
            "int",
            "--fpr",
            "0.01",
            "-o",
            &f
        ])
        .status
        .success()
    );
    // 3.5 MB: the bad line lies in a later block than the first.
    let mut input = String::new();
    for i in 0..300_000u32 {
        match i {
            250_000 => input.push_str("7\tuser-1\n"),
            i if i % 5 == 0 => input.push_str("no field here\n"),
            i => input.push_str(&format!("{i}\t{i}\n")),
        }
    }
    std::fs::write(dir.path("in.txt"), &input).unwrap();
    let path = dir.s("in.txt");
    let out = dir.s("b.lhbf");
    for threads in ["1", "2"] {
        let keys = ["--keys", "int", "--field", "2", "--threads", threads];
        let commands: [Vec<&str>; 3] = [
            vec!["filter", &f],
            vec!["build", "--fpr", "0.1", "-o", &out],
            vec!["build", "--fpr", "0.1", "--items", "300000", "-o", &out],
        ];
        for command in &commands {
            let from_file = [&command[..], &["-i", &path], &keys[..]].concat();
            assert_one_line_error(
                &lesshash(&from_file),
                &[&format!(
                    "{path}, line 250001: key \"user-1\" is not an integer"
                )],
            );
            let from_stdin = [&command[..], &keys[..]].concat();
            assert_one_line_error(
                &lesshash_stdin(&from_stdin, input.as_bytes()),
                &["stdin, line 250001: key \"user-1\" is not an integer"],
            );
        }
        // Whole lines: the first line is the bad key.
        let o = lesshash(&[
            "filter",
            &f,
            "-i",
            &path,
            "--keys",
            "int",
            "--threads",
            threads,
        ]);
        assert_one_line_error(&o, &[&format!("{path}, line 1: key \"no field here\"")]);
    }
    assert!(!dir.path("b.lhbf").exists());
}

/// `filter` with a Spark Bloom filter file (tests/data/spark, written by a
/// real Spark): the lines and CSV records it keeps are exactly those
/// Spark's class may hold (`SparkBloomFilter`, checked against Spark's own
/// answers in tests/spark.rs): `--keys int` as longs, text as bytes, on one
/// thread and on two; `--invert` keeps the rest.
/// `build --output-format spark-v2` makes the bytes a real Spark's
/// `df.stat.bloomFilter(col, n, 0.03)` made (tests/data/spark, its long and
/// string cases: Spark 4.3's default version 2, seed 0), from a file, from
/// stdin without --items, and from a CSV column; version 1 and a seed give
/// the library's filter of the same sizing and keys; the options that do
/// not apply are refused by name.
#[test]
fn build_writes_spark_filters() {
    use lesshash::spark::{SparkBloomFilter, SparkVersion};
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/spark");
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("cases.json")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (name, kind) in [("stat_long", "int"), ("stat_string", "text")] {
        let case = cases["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap();
        let keys: Vec<String> = case["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| match k {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        let n = keys.len().to_string();
        let golden = std::fs::read(data.join(format!("{name}.bin"))).unwrap();
        let input = dir.path().join(format!("{name}.txt"));
        write_lines(&input, keys.iter().cloned());
        let out = dir.path().join(format!("{name}.bin"));
        let common = [
            "--keys",
            kind,
            "--fpr",
            "0.03",
            "--output-format",
            "spark-v2",
        ];
        let file = [
            &["build", "-i", input.to_str().unwrap(), "--items", &n][..],
            &common[..],
            &["-o", out.to_str().unwrap()][..],
        ]
        .concat();
        for threads in ["1", "2"] {
            let o = lesshash(&[&file[..], &["-t", threads]].concat());
            assert!(o.status.success(), "{name}: {}", stderr(&o));
            assert!(
                stderr(&o).contains("Spark's Bloom filter version 2"),
                "{}",
                stderr(&o)
            );
            assert_eq!(std::fs::read(&out).unwrap(), golden, "{name} -t {threads}");
        }
        // stdin, counted as it is read (the keys spooled, not their hashes).
        let body: String = keys.iter().map(|k| format!("{k}\n")).collect();
        let piped = [&["build", "-o", out.to_str().unwrap()][..], &common[..]].concat();
        let o = lesshash_stdin(&piped, body.as_bytes());
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert_eq!(std::fs::read(&out).unwrap(), golden, "{name} from stdin");
        // A CSV column.
        let csv = dir.path().join(format!("{name}.csv"));
        let rows: String = keys
            .iter()
            .map(|k| format!("x,\"{}\"\n", k.replace('"', "\"\"")))
            .collect();
        std::fs::write(&csv, format!("other,key\n{rows}")).unwrap();
        let o = lesshash(
            &[
                &["build", "-i", csv.to_str().unwrap(), "--column", "key"][..],
                &common[..],
                &["-o", out.to_str().unwrap()][..],
            ]
            .concat(),
        );
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert_eq!(std::fs::read(&out).unwrap(), golden, "{name} from CSV");
    }
    // Version 1, and version 2 with a seed: the library's filter of Spark's
    // sizing for the same keys.
    let ints: Vec<i64> = (0..3000i64)
        .map(|i| i * 7_919_993 - 11_000_000_000)
        .collect();
    let input = dir.path().join("ints.txt");
    write_lines(&input, ints.iter().map(i64::to_string));
    let out = dir.path().join("ints.bin");
    for (format, version, seed) in [
        ("spark-v1", SparkVersion::V1, None),
        ("spark-v2", SparkVersion::V2, Some(4_294_967_289u64)),
    ] {
        let mut args = vec![
            "build".to_string(),
            "-i".into(),
            input.to_str().unwrap().into(),
            "--keys".into(),
            "int".into(),
            "--fpr".into(),
            "0.01".into(),
            "--output-format".into(),
            format.into(),
            "-o".into(),
            out.to_str().unwrap().into(),
        ];
        if let Some(seed) = seed {
            args.extend(["--seed".into(), seed.to_string()]);
        }
        let o = lesshash(&args);
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        let sized = SparkBloomFilter::with_fpp(version, 3000, 0.01).unwrap();
        let mut want = SparkBloomFilter::with_bits(
            version,
            sized.num_bits(),
            sized.num_hashes(),
            seed.map_or(0, |s| s as u32 as i32),
        )
        .unwrap();
        ints.iter().for_each(|&k| want.insert_long(k));
        assert_eq!(
            std::fs::read(&out).unwrap(),
            want.to_spark_bytes(),
            "{format}"
        );
        assert_eq!(want.seed(), if seed.is_some() { -7 } else { 0 });
    }
    // What does not apply is refused by name, before the output is made.
    let base = [
        "build",
        "-i",
        input.to_str().unwrap(),
        "--keys",
        "int",
        "--fpr",
        "0.01",
        "-o",
        out.to_str().unwrap(),
    ];
    for (extra, needle) in [
        (
            &["--output-format", "spark-v1", "--seed", "5"][..],
            "version 1 has no seed",
        ),
        (
            &["--output-format", "spark-v2", "--seed", "4294967296"][..],
            "--seed 4294967296 is not a Spark seed",
        ),
        (
            &["--output-format", "spark-v2", "--layout", "classic"][..],
            "--layout, --scheme and --hash do not apply",
        ),
        (
            &["--output-format", "spark-v2", "--scheme", "double"][..],
            "--layout, --scheme and --hash do not apply",
        ),
        (&["--output-format", "spark-v3"][..], "spark-v3"),
    ] {
        let o = lesshash(&[&base[..], extra].concat());
        assert_error(&o, &[needle]);
    }
}

/// `merge` of Spark Bloom filter files: two filters built from the halves
/// of a key set (the same sizing, version and seed) merge into the bytes
/// `build` makes from all the keys, in either version, and in place (`-o`
/// one of the inputs); a filter of another version, or a lesshash filter
/// beside a Spark one, is refused naming both files, and the output is not
/// created.
#[test]
fn merge_unites_spark_filters() {
    let dir = tempfile::tempdir().unwrap();
    let ints: Vec<i64> = (0..3000i64)
        .map(|i| i * 7_919_993 - 11_000_000_000)
        .collect();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_lines(Path::new(&path("all.txt")), ints.iter().map(i64::to_string));
    write_lines(
        Path::new(&path("a.txt")),
        ints[..1500].iter().map(i64::to_string),
    );
    write_lines(
        Path::new(&path("b.txt")),
        ints[1500..].iter().map(i64::to_string),
    );
    let build = |input: &str, format: &str, out: &str| {
        let o = lesshash(&[
            "build",
            "-i",
            &path(input),
            "--items",
            "3000",
            "--keys",
            "int",
            "--fpr",
            "0.01",
            "--output-format",
            format,
            "-o",
            &path(out),
        ]);
        assert!(o.status.success(), "{format} {input}: {}", stderr(&o));
    };
    for format in ["spark-v1", "spark-v2"] {
        build("all.txt", format, "all.bin");
        build("a.txt", format, "a.bin");
        build("b.txt", format, "b.bin");
        let want = std::fs::read(path("all.bin")).unwrap();
        assert_ne!(std::fs::read(path("a.bin")).unwrap(), want);
        let o = lesshash(&[
            "merge",
            &path("a.bin"),
            &path("b.bin"),
            "-o",
            &path("m.bin"),
        ]);
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("merged 2 Spark filters"),
            "{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read(path("m.bin")).unwrap(), want, "{format}");
        // In place: the inputs are read before the output is replaced.
        let o = lesshash(&[
            "merge",
            &path("a.bin"),
            &path("b.bin"),
            "-o",
            &path("a.bin"),
        ]);
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        assert_eq!(
            std::fs::read(path("a.bin")).unwrap(),
            want,
            "{format} in place"
        );
    }
    // all.bin and b.bin are version 2 now; a version 1 filter beside them.
    build("a.txt", "spark-v1", "v1.bin");
    let o = lesshash(&[
        "merge",
        &path("b.bin"),
        &path("v1.bin"),
        "-o",
        &path("bad.bin"),
    ]);
    assert_error(
        &o,
        &["cannot merge", "v1.bin", "b.bin", "equal version, bits"],
    );
    let o = lesshash(&[
        "build",
        "-i",
        &path("a.txt"),
        "--keys",
        "int",
        "--fpr",
        "0.01",
        "-o",
        &path("lh.lhbf"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = lesshash(&[
        "merge",
        &path("b.bin"),
        &path("lh.lhbf"),
        "-o",
        &path("bad.bin"),
    ]);
    assert_error(&o, &["cannot merge", "lh.lhbf", "is not"]);
    assert!(!dir.path().join("bad.bin").exists());
}

#[test]
fn filter_with_a_spark_filter() {
    use lesshash::spark::SparkBloomFilter;
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/spark");
    let dir = tempfile::tempdir().unwrap();
    // Members from tests/data/spark/cases.json and keys of our own; with
    // 1,536 bits for 155 keys most of ours are absent.
    let ints: Vec<String> = ["5168841506422920424", "-2023971119998667636"]
        .into_iter()
        .map(String::from)
        .chain((0..3000i64).map(|i| (i * 7_919_993 - 11_000_000_000).to_string()))
        .collect();
    let texts: Vec<String> = ["", "c", "XX"]
        .into_iter()
        .map(String::from)
        .chain((0..3000).map(|i| format!("user-{i}")))
        .collect();
    for (file, int) in [
        ("v2_seed12345_long.bin", true),
        ("v1_seed0_long.bin", true),
        ("v2_seed12345_string.bin", false),
        ("v1_seed0_string.bin", false),
    ] {
        let path = data.join(file);
        let spark = SparkBloomFilter::from_spark_bytes(&std::fs::read(&path).unwrap()).unwrap();
        let keys = if int { &ints } else { &texts };
        let member = |k: &String| match int {
            true => spark.contains_long(k.parse().unwrap()),
            false => spark.contains_bytes(k.as_bytes()),
        };
        let lines = |keep: bool| -> String {
            keys.iter()
                .filter(|k| member(k) == keep)
                .map(|k| format!("{k}\n"))
                .collect()
        };
        let (present, absent) = (lines(true), lines(false));
        assert!(
            present.lines().count() >= 2 && !absent.is_empty(),
            "{file}: the case needs both answers"
        );
        let input = dir.path().join("keys.txt");
        std::fs::write(
            &input,
            keys.iter().map(|k| format!("{k}\n")).collect::<String>(),
        )
        .unwrap();
        let kind = if int { "int" } else { "text" };
        let spark_path = path.to_str().unwrap();
        let input = input.to_str().unwrap();
        for threads in ["1", "2"] {
            let args = [
                "filter", "--keys", kind, "-t", threads, spark_path, "-i", input,
            ];
            let o = lesshash(&args);
            assert!(o.status.success(), "{file}: {}", stderr(&o));
            assert_eq!(stdout(&o), present, "{file} -t {threads}");
            let o = lesshash(&[&args[..], &["--invert"]].concat());
            assert!(o.status.success(), "{file}: {}", stderr(&o));
            assert_eq!(stdout(&o), absent, "{file} -t {threads} --invert");
        }
        // CSV: the key in a column, the header kept.
        let csv = dir.path().join("keys.csv");
        let body: String = keys.iter().map(|k| format!("\"{k}\",x\n")).collect();
        std::fs::write(&csv, format!("key,other\n{body}")).unwrap();
        let o = lesshash(&[
            "filter",
            "--keys",
            kind,
            spark_path,
            "-i",
            csv.to_str().unwrap(),
            "--column",
            "key",
        ]);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        let kept: String = keys
            .iter()
            .filter(|k| member(k))
            .map(|k| format!("\"{k}\",x\n"))
            .collect();
        assert_eq!(stdout(&o), format!("key,other\n{kept}"), "{file} csv");
    }
    // A key that is no integer is refused with its line, as for any filter.
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "1\nabc\n").unwrap();
    let long = data.join("v2_seed12345_long.bin");
    let o = lesshash(&[
        "filter",
        "--keys",
        "int",
        long.to_str().unwrap(),
        "-i",
        bad.to_str().unwrap(),
    ]);
    assert_error(&o, &["bad.txt, line 2", "\"abc\" is not an integer"]);
}

/// A Spark Bloom filter file (tests/data/spark, written by a real Spark):
/// `info` shows its parameters, `query` answers as Spark answered, and a
/// damaged one is refused naming the field.
#[test]
fn spark_filters_are_shown_and_queried() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/spark");
    let long = data.join("v2_seed12345_long.bin");
    let long = long.to_str().unwrap();
    let o = lesshash(&["info", long]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info = stdout(&o);
    for row in [
        "Spark Bloom filter",
        "version          2",
        "hashes (k)       7",
        "bits (m)         1536",
        "seed             12345",
    ] {
        assert!(info.contains(row), "{row:?} in\n{info}");
    }
    // The case's first key, and a probe Spark answered "no" for
    // (tests/data/spark/cases.json).
    let (member, absent) = ("5168841506422920424", "-663149051574916841");
    let o = lesshash(&["query", "--keys", "int", long, member, absent]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{member}\tyes\n{absent}\tno\n"));
    let text = data.join("stat_string.bin");
    let o = lesshash(&["query", text.to_str().unwrap(), "c"]);
    assert!(o.status.success(), "{}", stderr(&o));

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.bin");
    let bytes = std::fs::read(long).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() - 3]).unwrap();
    let o = lesshash(&["info", bad.to_str().unwrap()]);
    assert_error(
        &o,
        &[
            "cannot load Spark filter",
            "bad.bin",
            "truncated in `words`",
        ],
    );
}
