//! Spark's Bloom filter files (`lesshash::spark`) where the command line
//! takes a filter: `info` shows one, `query` and `filter` ask it, `merge`
//! combines them, `build --output-format spark-v1|spark-v2` makes one. Told apart from a lesshash file by their first four
//! bytes (Spark's big-endian version, 1 or 2; a lesshash file starts with
//! 0x89).

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use anyhow::{Context, Result};
use lesshash::spark::{SparkBloomFilter, SparkVersion};

use crate::input::{Encoded, Keys, int_key};

/// The Spark filter at `path` if the file starts like one (a regular file;
/// read whole, as Spark reads one); `None` for anything else (a lesshash
/// file, stdin), which the caller opens as before.
pub(crate) fn open_if_spark(path: &Path) -> Result<Option<SparkBloomFilter>> {
    if path.as_os_str() == "-" || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let mut head = [0u8; 4];
    let context = || format!("cannot load filter {}", path.display());
    let mut file = File::open(path).with_context(context)?;
    let n = file.read(&mut head).with_context(context)?;
    if n < 4 || !matches!(head, [0, 0, 0, 1 | 2]) {
        return Ok(None);
    }
    let bytes = std::fs::read(path).with_context(context)?;
    let filter = SparkBloomFilter::from_spark_bytes(&bytes)
        .with_context(|| format!("cannot load Spark filter {}", path.display()))?;
    Ok(Some(filter))
}

/// `info`'s rows for a Spark filter.
pub(crate) fn info(path: &Path, f: &SparkBloomFilter) -> Result<()> {
    let ones = f.count_ones();
    let fill = ones as f64 / f.num_bits() as f64;
    let version = match f.version() {
        SparkVersion::V1 => "1 (32-bit index arithmetic: no index reaches 2^31)",
        SparkVersion::V2 => "2 (64-bit index arithmetic, seeded)",
    };
    let mut rows = vec![
        ("file", path.display().to_string()),
        (
            "format",
            "Spark Bloom filter (org.apache.spark.util.sketch)".to_string(),
        ),
        ("version", version.to_string()),
        ("hashes (k)", f.num_hashes().to_string()),
        ("bits (m)", f.num_bits().to_string()),
        ("bytes", format!("{}", f.num_bits() / 8)),
        ("seed", f.seed().to_string()),
        ("fill ratio", format!("{fill:.4}")),
        (
            "expected FPR",
            format!(
                "{:.4}% (now, from the fill: Spark's expectedFpp)",
                100.0 * f.fill_fpr()
            ),
        ),
    ];
    if f.version() == SparkVersion::V1 && f.num_bits() > 1 << 31 {
        rows.push((
            "note",
            format!(
                "only the first 2^31 of the {} bits can be set (version 1's arithmetic)",
                f.num_bits()
            ),
        ));
    }
    let mut out = std::io::stdout().lock();
    for (k, v) in rows {
        writeln!(out, "{k:<16} {v}").context("cannot write to stdout")?;
    }
    out.flush().context("cannot write to stdout")?;
    Ok(())
}

/// Whether a Spark filter may hold `key` (the argument's bytes): with
/// `--keys int` a long (Spark's `mightContainLong`), with `--keys text`
/// the bytes (Spark's `mightContainString` of the same text).
pub(crate) fn contains(f: &SparkBloomFilter, key: &[u8], kind: Keys) -> Option<bool> {
    Some(match kind {
        Keys::Text => f.contains_bytes(key),
        Keys::Int => f.contains_long(i64::from_le_bytes(int_key(key)?)),
    })
}

/// `--seed` for a Spark filter of `version`: version 2's 32-bit seed
/// (default 0, as Spark's `create`), none for version 1.
pub(crate) fn seed(version: SparkVersion, seed: Option<u64>) -> Result<i32> {
    let Some(seed) = seed else { return Ok(0) };
    // `--seed` parses as a u64 (a negative decimal is refused there): an
    // int's bit pattern from 0 to 2^32 - 1 is Spark's seed.
    let seed = u32::try_from(seed).map(|s| s as i32).map_err(|_| {
        anyhow::anyhow!(
            "--seed {seed} is not a Spark seed: Spark's seed is a 32-bit int (0 to \
                 4294967295, the int's bits)"
        )
    })?;
    if version == SparkVersion::V1 && seed != 0 {
        anyhow::bail!("--seed applies to --output-format spark-v2 only: version 1 has no seed");
    }
    Ok(seed)
}

/// The empty Spark filter `build` fills: Spark's sizing for `items` keys
/// at `fpp` (`BloomFilter.create(version, n, optimalNumOfBits(n, fpp),
/// seed)`).
pub(crate) fn create(
    version: SparkVersion,
    items: u64,
    fpp: f64,
    seed_arg: Option<u64>,
) -> Result<SparkBloomFilter, lesshash::Error> {
    let sized = SparkBloomFilter::with_fpp(version, items, fpp)?;
    // Checked before any input was read (`seed` above).
    let seed = seed(version, seed_arg).unwrap_or(0);
    if seed == 0 {
        return Ok(sized);
    }
    SparkBloomFilter::with_bits(version, sized.num_bits(), sized.num_hashes(), seed)
}

/// Inserts a batch of cut keys: `--keys int` as longs (Spark's
/// `putLong`), text as their bytes (`putString` of the same text).
pub(crate) fn insert_keys(f: &mut SparkBloomFilter, keys: Encoded<'_>) {
    match keys {
        Encoded::Int(k) => {
            let longs: Vec<i64> = k.iter().map(|b| i64::from_le_bytes(*b)).collect();
            f.insert_longs(&longs);
        }
        Encoded::Text(k) => f.insert_bytes_batch(k),
    }
}

/// Keys per task of a parallel text-key query (as the library's
/// `par_contains_longs`).
const TEXT_TASK: usize = 16_384;

/// A Spark filter's answers for a batch of keys cut from the input, into
/// `out` (as long): `--keys int` as longs (`mightContainLong`), text as
/// their bytes (`mightContainString`); on `pool` when there is one.
pub(crate) fn contains_keys(
    f: &SparkBloomFilter,
    keys: Encoded<'_>,
    out: &mut [bool],
    pool: Option<&rayon::ThreadPool>,
) -> Result<(), lesshash::Error> {
    use rayon::prelude::*;
    match keys {
        Encoded::Int(k) => {
            let longs: Vec<i64> = k.iter().map(|b| i64::from_le_bytes(*b)).collect();
            match pool {
                Some(pool) => pool.install(|| f.par_contains_longs(&longs, out)),
                None => f.contains_longs(&longs, out),
            }
        }
        Encoded::Text(k) => match pool {
            Some(pool) => pool.install(|| {
                out.par_chunks_mut(TEXT_TASK)
                    .zip(k.par_chunks(TEXT_TASK))
                    .try_for_each(|(out, k)| f.contains_bytes_batch(k, out))
            }),
            None => f.contains_bytes_batch(k, out),
        },
    }
}
