//! Arrow arrays (feature `arrow`) against the scalar API: every supported
//! type, with nulls, offsets and slices, through insert and contains on
//! every filter type, against the encoding table's oracle (`oracle_bytes`
//! below: the table in `lesshash::arrow`'s docs written out by hand); the
//! recorded key kind; refused types; Parquet's filter against files the
//! `parquet` crate writes with bloom filters on, per type.

use std::sync::Arc;

use arrow_array::builder::{FixedSizeBinaryBuilder, StringDictionaryBuilder};
use arrow_array::types::{Int8Type, Int16Type, Int32Type, UInt64Type};
use arrow_array::*;
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use lesshash::arrow::{ArrayInsert, key_kind_of};
use lesshash::{
    AtomicBloomFilter, BloomFilter, Error, FilterView, HashFamily, KeyKind, Layout, MappedFilter,
    Scheme, VIEW_ALIGN,
};
use proptest::prelude::*;

/// Deterministic pseudo-random values (SplitMix64).
fn splitmix(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Every type the encoding table lists (dictionaries of two value types
/// and two key widths included).
const TYPES: &[&str] = &[
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "date32",
    "date64",
    "time32s",
    "time64ns",
    "ts_ms_tz",
    "ts_s",
    "duration_us",
    "duration_ns",
    "utf8",
    "large_utf8",
    "utf8_view",
    "binary",
    "large_binary",
    "binary_view",
    "fixed4",
    "dict_i8_utf8",
    "dict_u64_i32",
    "dict_i16_binary",
];

/// An array of type `name` with `len` keys drawn from a small domain (so
/// that keys repeat, as in a dictionary), a null where `null(i)`; and the
/// oracle: each key's bytes by the encoding table (None for a null).
fn case(
    name: &str,
    len: usize,
    seed: u64,
    null_per_mille: u64,
) -> (ArrayRef, Vec<Option<Vec<u8>>>) {
    let mut rng = splitmix(seed);
    let raw: Vec<Option<u64>> = (0..len)
        .map(|_| {
            let v = rng();
            // 97 distinct full-width values: negative as often as not in
            // every signed type, above 2^63 in u64.
            (rng() % 1000 >= null_per_mille).then(|| splitmix(v % 97)())
        })
        .collect();
    let ints = |f: fn(u64) -> i64| -> Vec<Option<i64>> { raw.iter().map(|v| v.map(f)).collect() };
    let le = |x: i64| Some(x.to_le_bytes().to_vec());
    let text = |v: u64| format!("key-{v:x}");
    // An exact value clamped to i64, as key bytes.
    let exact = |x: i128| {
        (x.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
            .to_le_bytes()
            .to_vec()
    };
    macro_rules! int_case {
        ($arr:ty, $t:ty, $wide:ty) => {{
            let vals: Vec<Option<$t>> = raw.iter().map(|v| v.map(|v| v as $t)).collect();
            let oracle = vals
                .iter()
                .map(|v| v.map(|v| (v as $wide as u64).to_le_bytes().to_vec()))
                .collect();
            (Arc::new(<$arr>::from(vals)) as ArrayRef, oracle)
        }};
    }
    match name {
        "i8" => int_case!(Int8Array, i8, i64),
        "i16" => int_case!(Int16Array, i16, i64),
        "i32" => int_case!(Int32Array, i32, i64),
        "i64" => int_case!(Int64Array, i64, i64),
        "u8" => int_case!(UInt8Array, u8, u64),
        "u16" => int_case!(UInt16Array, u16, u64),
        "u32" => int_case!(UInt32Array, u32, u64),
        "u64" => int_case!(UInt64Array, u64, u64),
        // Temporal types: microseconds (a date's midnight; floored from
        // nanoseconds, clamped to i64 from coarser units), computed here in
        // i128.
        "date32" => {
            let v: Vec<Option<i32>> = raw.iter().map(|v| v.map(|v| v as i32)).collect();
            let oracle = v
                .iter()
                .map(|x| x.map(|x| exact(i128::from(x) * 86_400 * 1_000_000)))
                .collect();
            (Arc::new(Date32Array::from(v)) as ArrayRef, oracle)
        }
        "date64" => {
            let v = ints(|v| v as i64);
            let oracle = v
                .iter()
                .map(|x| x.map(|x| exact(i128::from(x) * 1_000)))
                .collect();
            (Arc::new(Date64Array::from(v)) as ArrayRef, oracle)
        }
        "time32s" => {
            let v = ints(|v| (v % 86_400) as i64);
            let a: Vec<Option<i32>> = v.iter().map(|x| x.map(|x| x as i32)).collect();
            let oracle = v
                .iter()
                .map(|x| x.map(|x| exact(i128::from(x) * 1_000_000)))
                .collect();
            (Arc::new(Time32SecondArray::from(a)) as ArrayRef, oracle)
        }
        "time64ns" => {
            let v = ints(|v| (v % 86_400_000_000_000) as i64);
            let oracle = v
                .iter()
                .map(|x| x.map(|x| exact(i128::from(x).div_euclid(1_000))))
                .collect();
            (Arc::new(Time64NanosecondArray::from(v)) as ArrayRef, oracle)
        }
        "ts_ms_tz" => {
            // Full-width values: most beyond the microsecond range (clamped).
            let v = ints(|v| v as i64);
            let oracle = v
                .iter()
                .map(|x| x.map(|x| exact(i128::from(x) * 1_000)))
                .collect();
            let a = TimestampMillisecondArray::from(v).with_timezone("Europe/Paris");
            (Arc::new(a) as ArrayRef, oracle)
        }
        "ts_s" => {
            // Within and beyond the microsecond range.
            let v = ints(|v| (v as i64) >> (v % 48));
            let oracle = v
                .iter()
                .map(|x| x.map(|x| exact(i128::from(x) * 1_000_000)))
                .collect();
            (Arc::new(TimestampSecondArray::from(v)) as ArrayRef, oracle)
        }
        "duration_us" => {
            let v = ints(|v| v as i64);
            let oracle = v.iter().map(|x| x.and_then(le)).collect();
            (
                Arc::new(DurationMicrosecondArray::from(v)) as ArrayRef,
                oracle,
            )
        }
        "duration_ns" => {
            let v = ints(|v| v as i64);
            let oracle = v
                .iter()
                .map(|x| x.map(|x| exact(i128::from(x).div_euclid(1_000))))
                .collect();
            (
                Arc::new(DurationNanosecondArray::from(v)) as ArrayRef,
                oracle,
            )
        }
        "utf8" | "large_utf8" | "utf8_view" => {
            let v: Vec<Option<String>> = raw.iter().map(|v| v.map(text)).collect();
            let oracle = v
                .iter()
                .map(|s| s.as_ref().map(|s| s.as_bytes().to_vec()))
                .collect();
            let a: ArrayRef = match name {
                "utf8" => Arc::new(StringArray::from(v)),
                "large_utf8" => Arc::new(LargeStringArray::from(v)),
                _ => Arc::new(StringViewArray::from(v)),
            };
            (a, oracle)
        }
        "binary" | "large_binary" | "binary_view" => {
            // Short and long (over the views' 12 inline bytes) values.
            let v: Vec<Option<Vec<u8>>> = raw
                .iter()
                .map(|v| v.map(|v| v.to_le_bytes().repeat(1 + (v % 3) as usize)))
                .collect();
            let refs: Vec<Option<&[u8]>> = v.iter().map(|b| b.as_deref()).collect();
            let a: ArrayRef = match name {
                "binary" => Arc::new(BinaryArray::from(refs)),
                "large_binary" => Arc::new(LargeBinaryArray::from(refs)),
                _ => Arc::new(BinaryViewArray::from(refs)),
            };
            (a, v)
        }
        "fixed4" => {
            let mut b = FixedSizeBinaryBuilder::new(4);
            let mut oracle = Vec::new();
            for v in &raw {
                match v {
                    Some(v) => {
                        let bytes = (*v as u32).to_be_bytes();
                        b.append_value(bytes).unwrap();
                        oracle.push(Some(bytes.to_vec()));
                    }
                    None => {
                        b.append_null();
                        oracle.push(None);
                    }
                }
            }
            (Arc::new(b.finish()) as ArrayRef, oracle)
        }
        "dict_i8_utf8" => {
            let mut b = StringDictionaryBuilder::<Int8Type>::new();
            let mut oracle = Vec::new();
            for v in &raw {
                let s = v.map(|v| text(v % 50));
                b.append_option(s.as_deref());
                oracle.push(s.map(String::into_bytes));
            }
            (Arc::new(b.finish()) as ArrayRef, oracle)
        }
        "dict_u64_i32" => {
            // Values with a null among them: a key pointing at it is null.
            let values = Int32Array::from(vec![Some(-5), None, Some(7), Some(1 << 30)]);
            let keys: Vec<Option<u64>> = raw.iter().map(|v| v.map(|v| v % 4)).collect();
            let oracle = keys
                .iter()
                .map(|k| {
                    k.and_then(|k| {
                        values
                            .is_valid(k as usize)
                            .then(|| values.value(k as usize))
                    })
                    .map(|v| (v as i64).to_le_bytes().to_vec())
                })
                .collect();
            let a = DictionaryArray::<UInt64Type>::try_new(
                keys.into_iter().collect(),
                Arc::new(values),
            )
            .unwrap();
            (Arc::new(a) as ArrayRef, oracle)
        }
        "dict_i16_binary" => {
            let values = BinaryArray::from(vec![&b"a"[..], b"", b"0123456789abcdefXYZ"]);
            let keys: Vec<Option<i16>> = raw.iter().map(|v| v.map(|v| (v % 3) as i16)).collect();
            let oracle = keys
                .iter()
                .map(|k| k.map(|k| values.value(k as usize).to_vec()))
                .collect();
            let a =
                DictionaryArray::<Int16Type>::try_new(keys.into_iter().collect(), Arc::new(values))
                    .unwrap();
            (Arc::new(a) as ArrayRef, oracle)
        }
        other => panic!("no case {other}"),
    }
}

/// A filter of each layout x a two-hash and the independent scheme.
fn filters(n: u64) -> Vec<BloomFilter> {
    let mut out = Vec::new();
    for layout in Layout::ALL {
        for (scheme, family) in [
            (layout.default_scheme(), HashFamily::Xxh3),
            (layout.default_scheme(), HashFamily::FoldedMultiply),
            (Scheme::Independent, HashFamily::Xxh3),
        ] {
            out.push(
                BloomFilter::builder()
                    .expected_items(n.max(1))
                    .fpr(0.05)
                    .layout(layout)
                    .scheme(scheme)
                    .hash_family(family)
                    .build()
                    .unwrap(),
            );
        }
    }
    out
}

/// The scalar answers: `contains` of each key's oracle bytes, None for a
/// null key.
fn scalar_answers(view: FilterView<'_>, oracle: &[Option<Vec<u8>>]) -> Vec<Option<bool>> {
    oracle
        .iter()
        .map(|b| b.as_ref().map(|b| view.contains(b.as_slice())))
        .collect()
}

fn answers(a: &BooleanArray) -> Vec<Option<bool>> {
    a.iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Insert and query through Arrow equal the scalar API bit for bit and
    /// answer for answer, on every type, layout and scheme; a slice of an
    /// array answers as that part of the whole.
    #[test]
    fn arrays_insert_and_answer_as_the_scalar_api(
        seed in any::<u64>(),
        len in 0usize..300,
        null_per_mille in prop_oneof![Just(0u64), Just(100), 0u64..1000],
        cut in any::<(usize, usize)>(),
    ) {
        for (t, &name) in TYPES.iter().enumerate() {
            let (array, oracle) = case(name, len, seed ^ t as u64, null_per_mille);
            let nulls = oracle.iter().filter(|b| b.is_none()).count();
            for mut arrow_built in filters(len as u64) {
                // Build from the first half by Arrow, and by the scalar API.
                let half = array.slice(0, len / 2);
                let mut scalar_built = arrow_built.clone();
                let got = arrow_built.insert_array(half.as_ref()).unwrap();
                let mut want = ArrayInsert::default();
                for b in oracle[..len / 2].iter() {
                    match b {
                        Some(b) => { scalar_built.insert(b.as_slice()); want.inserted += 1 }
                        None => want.nulls += 1,
                    }
                }
                prop_assert_eq!(got, want, "{}", name);
                let want = got;
                prop_assert_eq!(&arrow_built, &scalar_built, "{} bits", name);
                prop_assert_eq!(arrow_built.insert_calls(), want.inserted as u64);
                prop_assert_eq!(arrow_built.key_kind(), key_kind_of(array.data_type()).unwrap());
                // The hashes of the same keys, as the filter's family
                // gives them (`hash_key` for XXH3).
                let (family, seed) = (arrow_built.hash_family(), arrow_built.seed());
                let mut hashes = vec![7];
                let got = lesshash::arrow::hash_array_in(family, half.as_ref(), seed, &mut hashes).unwrap();
                prop_assert_eq!(got, want);
                let want_hashes: Vec<u128> = std::iter::once(7)
                    .chain(oracle[..len / 2].iter().flatten().map(|b| family.hash_key(b.as_slice(), seed)))
                    .collect();
                prop_assert_eq!(&hashes, &want_hashes);
                if family == HashFamily::Xxh3 {
                    let mut xxh3 = vec![7];
                    lesshash::arrow::hash_array(half.as_ref(), seed, &mut xxh3).unwrap();
                    let by_hash_key: Vec<u128> = std::iter::once(7)
                        .chain(oracle[..len / 2].iter().flatten().map(|b| lesshash::hash_key(b.as_slice(), seed)))
                        .collect();
                    prop_assert_eq!(&xxh3, &by_hash_key);
                    prop_assert_eq!(&xxh3, &want_hashes);
                }

                // Query all keys (half inserted, half mostly not).
                let want = scalar_answers(arrow_built.view(), &oracle);
                let got = arrow_built.contains_array(array.as_ref()).unwrap();
                prop_assert_eq!(got.len(), len);
                prop_assert_eq!(got.null_count(), nulls);
                prop_assert_eq!(&answers(&got), &want, "{} {:?}", name, arrow_built);
                prop_assert_eq!(&answers(&arrow_built.par_contains_array(array.as_ref()).unwrap()), &want);
                let mut bitmap = vec![u64::MAX; lesshash::bitmap_words(len)];
                arrow_built.contains_array_into_bitmap(array.as_ref(), &mut bitmap).unwrap();
                for (i, w) in want.iter().enumerate() {
                    prop_assert_eq!(bitmap[i / 64] >> (i % 64) & 1 == 1, *w == Some(true), "{} bit {}", name, i);
                }
                if len % 64 != 0 {
                    prop_assert_eq!(bitmap[len / 64] >> (len % 64), 0, "padding bits");
                }
                // The same answers through a view of the bytes and an atomic filter.
                let bytes = aligned(&arrow_built.to_bytes());
                let view = FilterView::new(bytes.bytes()).unwrap();
                prop_assert_eq!(&answers(&view.contains_array(array.as_ref()).unwrap()), &want);
                let atomic = AtomicBloomFilter::from(arrow_built.clone());
                prop_assert_eq!(&answers(&atomic.contains_array(array.as_ref()).unwrap()), &want);

                // A slice answers as its part of the whole.
                let off = if len == 0 { 0 } else { cut.0 % len };
                let sub = (len - off).min(cut.1 % (len + 1));
                let sliced = arrow_built.contains_array(array.slice(off, sub).as_ref()).unwrap();
                prop_assert_eq!(&answers(&sliced)[..], &want[off..off + sub], "{} slice", name);
            }
        }
    }
}

/// Bytes at a [`VIEW_ALIGN`] boundary, for `FilterView::new`.
struct Aligned {
    buf: Vec<u8>,
    off: usize,
    len: usize,
}

impl Aligned {
    fn bytes(&self) -> &[u8] {
        &self.buf[self.off..self.off + self.len]
    }
}

fn aligned(bytes: &[u8]) -> Aligned {
    let mut buf = vec![0u8; bytes.len() + VIEW_ALIGN];
    let off = buf.as_ptr().align_offset(VIEW_ALIGN);
    buf[off..off + bytes.len()].copy_from_slice(bytes);
    Aligned {
        buf,
        off,
        len: bytes.len(),
    }
}

/// Above the parallel threshold: the parallel insert is bit for bit the
/// sequential one (with and without nulls, both schemes), and the
/// parallel query answers as the sequential one.
#[test]
fn parallel_forms_equal_the_sequential_ones() {
    let n = 200_000;
    for (name, nulls) in [
        ("i64", 0),
        ("u32", 150),
        ("utf8", 300),
        ("dict_i8_utf8", 50),
    ] {
        let (array, _) = case(name, n, 7, nulls);
        for filter in filters(n as u64) {
            let mut seq = filter.clone();
            let mut par = filter;
            let a = seq.insert_array(array.slice(0, n / 2).as_ref()).unwrap();
            let b = par
                .par_insert_array(array.slice(0, n / 2).as_ref())
                .unwrap();
            assert_eq!(a, b);
            assert_eq!(seq, par, "{name} {nulls}");
            assert_eq!(seq.insert_calls(), par.insert_calls());
            let answers = seq.contains_array(array.as_ref()).unwrap();
            assert_eq!(
                answers,
                par.par_contains_array(array.as_ref()).unwrap(),
                "{name}"
            );

            // The atomic filter's forms: the same bits and answers.
            let atomic = AtomicBloomFilter::from(filter_like(&seq));
            let c = atomic
                .par_insert_array(array.slice(0, n / 2).as_ref())
                .unwrap();
            assert_eq!(c, a);
            assert_eq!(atomic.par_contains_array(array.as_ref()).unwrap(), answers);
            let atomic = atomic.into_inner();
            assert_eq!(atomic, seq, "{name}: atomic par insert");
            assert_eq!(atomic.key_kind(), seq.key_kind());
        }
        // Parquet's filter: parallel hashing, the same bits and answers.
        use lesshash::parquet::ParquetFilter;
        let mut seq = ParquetFilter::with_ndv_fpp(n as u64, 0.01).unwrap();
        let mut par = seq.clone();
        let a = seq.insert_array(array.slice(0, n / 2).as_ref()).unwrap();
        assert_eq!(
            a,
            par.par_insert_array(array.slice(0, n / 2).as_ref())
                .unwrap()
        );
        assert_eq!(seq.to_parquet_bitset(), par.to_parquet_bitset());
        let answers = seq.contains_array(array.as_ref()).unwrap();
        assert_eq!(answers, par.par_contains_array(array.as_ref()).unwrap());
        assert!(
            answers.slice(0, n / 2).iter().all(|x| x != Some(false)),
            "{name}: no false negatives"
        );
    }
}

/// An empty filter of `f`'s parameters.
fn filter_like(f: &BloomFilter) -> BloomFilter {
    let mut empty = f.clone();
    empty.clear();
    empty.set_key_kind(KeyKind::Unrecorded);
    empty
}

/// One key, every interface that takes it: an Int32, Int64 and UInt8 7 are
/// the same key as Rust's `7i64` and `7u64`; `-1` and `u64::MAX` share
/// their bytes; text and binary of the same bytes are one key; an integer
/// A date or an instant is one key whatever unit its array holds it in:
/// microseconds, a date's of its midnight (a reader's choice of unit, pyarrow's seconds or Polars'
/// milliseconds for one Parquet column, must not change the answer).
#[test]
fn a_temporal_value_is_one_key_in_every_unit() {
    let s: Vec<i64> = vec![-86_401, -1, 0, 1, 1_700_000_000, 4_102_444_800];
    let by = |f: i64| s.iter().map(|&v| v * f).collect::<Vec<_>>();
    let mut filter = BloomFilter::with_fpr(100, 0.0001).unwrap();
    filter
        .insert_array(&TimestampSecondArray::from(s.clone()))
        .unwrap();
    for a in [
        Arc::new(TimestampMillisecondArray::from(by(1_000))) as ArrayRef,
        Arc::new(TimestampMicrosecondArray::from(by(1_000_000)).with_timezone("+05:30")),
        Arc::new(TimestampNanosecondArray::from(by(1_000_000_000))),
        // Less than a microsecond later: the same key.
        Arc::new(TimestampNanosecondArray::from(
            by(1_000_000_000)
                .iter()
                .map(|v| v + 999)
                .collect::<Vec<_>>(),
        )),
        Arc::new(DurationSecondArray::from(s.clone())),
        Arc::new(DurationNanosecondArray::from(by(1_000_000_000))),
    ] {
        let found = filter.contains_array(a.as_ref()).unwrap();
        assert_eq!(found.true_count(), s.len(), "{}", a.data_type());
    }
    // A nanosecond earlier is the microsecond before: another key.
    let before =
        TimestampNanosecondArray::from(by(1_000_000_000).iter().map(|v| v - 1).collect::<Vec<_>>());
    assert_eq!(filter.contains_array(&before).unwrap().true_count(), 0);
    // Times of day: seconds, milliseconds, microseconds, nanoseconds.
    let mut times = BloomFilter::with_fpr(100, 0.0001).unwrap();
    times
        .insert_array(&Time32SecondArray::from(vec![0, 1, 86_399]))
        .unwrap();
    for a in [
        Arc::new(Time32MillisecondArray::from(vec![0, 1_000, 86_399_000])) as ArrayRef,
        Arc::new(Time64MicrosecondArray::from(vec![
            0,
            1_000_000,
            86_399_000_000,
        ])),
        Arc::new(Time64NanosecondArray::from(vec![
            0,
            1_000_000_000,
            86_399_000_000_000,
        ])),
    ] {
        assert_eq!(times.contains_array(a.as_ref()).unwrap().true_count(), 3);
    }
    // Dates: their midnight, whatever the array's unit, and the timestamp
    // of that midnight (a reader may make a date a timestamp: Polars makes
    // Arrow's date64 a millisecond Datetime).
    let mut dates = BloomFilter::with_fpr(100, 0.0001).unwrap();
    dates
        .insert_array(&Date64Array::from(vec![
            -86_400_000,
            0,
            19_700 * 86_400_000,
        ]))
        .unwrap();
    for a in [
        Arc::new(Date32Array::from(vec![-1, 0, 19_700])) as ArrayRef,
        Arc::new(TimestampSecondArray::from(vec![
            -86_400,
            0,
            19_700 * 86_400,
        ])),
    ] {
        assert_eq!(dates.contains_array(a.as_ref()).unwrap().true_count(), 3);
    }
    assert!(dates.contains(&(19_700i64 * 86_400_000_000)));
}

/// and its text are not.
#[test]
fn the_encoding_table_holds_across_types() {
    let mut ints = BloomFilter::with_fpr(100, 0.001).unwrap();
    ints.insert_array(&Int32Array::from(vec![7, -1])).unwrap();
    assert!(ints.contains(&7i64) && ints.contains(&7u64) && ints.contains(&u64::MAX));
    assert!(!ints.contains(&7i32), "Rust's i32 Key hashes 4 bytes");
    for a in [
        Arc::new(Int64Array::from(vec![7, -1])) as ArrayRef,
        Arc::new(UInt8Array::from(vec![7, 7])),
        Arc::new(UInt64Array::from(vec![7, u64::MAX])),
        Arc::new(TimestampMicrosecondArray::from(vec![7, -1]).with_timezone("UTC")),
        Arc::new(TimestampNanosecondArray::from(vec![7_000, -1]).with_timezone("UTC")),
        Arc::new(Time64NanosecondArray::from(vec![7_999, -1_000])),
    ] {
        assert!(
            ints.contains_array(a.as_ref())
                .unwrap()
                .iter()
                .all(|x| x == Some(true))
        );
    }
    let mut text = BloomFilter::with_fpr(100, 0.001).unwrap();
    text.insert_array(&StringArray::from(vec!["7", "alice"]))
        .unwrap();
    assert!(text.contains("7") && text.contains(b"alice".as_slice()) && !text.contains(&7u64));
    let bin = BinaryViewArray::from(vec![&b"7"[..], b"alice"]);
    assert!(
        text.contains_array(&bin)
            .unwrap()
            .iter()
            .all(|x| x == Some(true))
    );
    assert_eq!(text.key_kind(), KeyKind::Text);
}

/// The kind is recorded, kept in the file, combined by inserts and unions,
/// checked by queries (both kinds named), and overridden by `Mixed`.
#[test]
fn key_kinds_are_recorded_checked_and_overridden() {
    let mut f = BloomFilter::with_fpr(1000, 0.01).unwrap();
    assert_eq!(f.key_kind(), KeyKind::Unrecorded);
    f.insert_array(&Int64Array::from(vec![42])).unwrap();
    assert_eq!(f.key_kind(), KeyKind::Int64);
    let loaded = BloomFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(loaded.key_kind(), KeyKind::Int64);
    assert_eq!(f.to_bytes()[14], 1, "byte 14 is the key kind");

    let names = StringArray::from(vec!["42"]);
    let err = f.contains_array(&names).unwrap_err();
    assert!(matches!(
        err,
        Error::KeyKindMismatch {
            filter: KeyKind::Int64,
            keys: KeyKind::Text
        }
    ));
    let msg = err.to_string();
    assert!(
        msg.contains("int64") && msg.contains("text") && msg.contains("mixed"),
        "{msg}"
    );
    // The override, on a view and on the filter.
    let answered = f
        .view()
        .with_key_kind(KeyKind::Mixed)
        .contains_array(&names)
        .unwrap();
    assert_eq!(answered.len(), 1);
    let mut g = f.clone();
    g.set_key_kind(KeyKind::Mixed);
    assert!(g.contains_array(&names).is_ok());

    // Inserting text into an integer filter makes it mixed; unions combine.
    let mut t = BloomFilter::with_fpr(1000, 0.01).unwrap();
    t.insert_array(&names).unwrap();
    let mut u = f.clone();
    u.union(&t).unwrap();
    assert_eq!(u.key_kind(), KeyKind::Mixed);
    assert!(u.contains_array(&names).unwrap().value(0));
    // A kind set on the builder is recorded without any insert.
    let b = BloomFilter::builder()
        .expected_items(10)
        .fpr(0.01)
        .key_kind(KeyKind::Bytes)
        .build()
        .unwrap();
    assert!(b.contains_array(&Int64Array::from(vec![1])).is_err());
    assert!(
        b.contains_array(&names).is_ok(),
        "text queries a bytes filter"
    );

    // A mapped file keeps it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ints.lhbf");
    f.write_file(&path).unwrap();
    let mapped = MappedFilter::open(&path).unwrap();
    assert_eq!(mapped.key_kind(), KeyKind::Int64);
    assert!(mapped.contains_array(&names).is_err());
    assert!(
        mapped
            .contains_array(&Int64Array::from(vec![42]))
            .unwrap()
            .value(0)
    );
}

/// Types with no key encoding are refused by name, and nothing is
/// inserted.
#[test]
fn unsupported_types_are_refused_by_name() {
    let mut f = BloomFilter::with_fpr(100, 0.01).unwrap();
    let before = f.clone();
    let floats = Float64Array::from(vec![1.5]);
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1)])]);
    let bools = BooleanArray::from(vec![true]);
    let nested_dict = DataType::Dictionary(
        Box::new(DataType::Int8),
        Box::new(DataType::Dictionary(
            Box::new(DataType::Int8),
            Box::new(DataType::Utf8),
        )),
    );
    for (array, name) in [
        (&floats as &dyn Array, "Float64"),
        (&list, "List"),
        (&bools, "Boolean"),
    ] {
        let err = f.insert_array(array).unwrap_err();
        assert!(matches!(err, Error::UnsupportedKeyType { .. }), "{err}");
        assert!(err.to_string().contains(name), "{err}");
        assert!(f.contains_array(array).is_err());
    }
    assert!(key_kind_of(&nested_dict).is_err());
    assert!(key_kind_of(&DataType::Timestamp(TimeUnit::Second, None)).is_ok());
    assert_eq!(f, before);
    assert_eq!(f.key_kind(), KeyKind::Unrecorded);
}

/// Parquet's filter over Arrow arrays, against the filters the `parquet`
/// crate's writer stores for each column type: every value it wrote is
/// found, and inserting the same column into a filter of the same size
/// gives the writer's bits.
#[test]
fn split_block_filter_answers_parquet_files_per_type() {
    use lesshash::parquet::ParquetFilter;
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::{ReaderProperties, WriterProperties};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::file::serialized_reader::ReadOptionsBuilder;

    // Every type but the views (the writer's support for them is not what
    // is tested here) and the dictionaries with unsigned 64-bit keys or
    // binary values (one dictionary case is enough for the physical type).
    let names: Vec<&str> = TYPES
        .iter()
        .copied()
        .filter(|t| {
            !matches!(
                *t,
                "utf8_view" | "binary_view" | "dict_u64_i32" | "dict_i16_binary"
            )
        })
        .collect();
    let n = 2000;
    let mut columns: Vec<(ArrayRef, String)> = names
        .iter()
        .enumerate()
        .map(|(i, &name)| (case(name, n, 100 + i as u64, 50).0, name.to_string()))
        .collect();
    // Floats, keys of Parquet's filter only (FLOAT, DOUBLE: their bits),
    // with nulls, both zeros, an infinity and the largest finite values.
    let float = |i: usize| match i % 50 {
        3 => None,
        7 => Some(0.0),
        8 => Some(-0.0),
        9 => Some(f64::INFINITY),
        _ => Some(i as f64 * 0.37 - 100.0),
    };
    columns.push((
        Arc::new(Float64Array::from_iter(
            (0..n).map(|i| if i == 11 { Some(f64::MAX) } else { float(i) }),
        )),
        "f64".into(),
    ));
    columns.push((
        Arc::new(Float32Array::from_iter((0..n).map(|i| {
            if i == 11 {
                Some(f32::MAX)
            } else {
                float(i).map(|x| x as f32)
            }
        }))),
        "f32".into(),
    ));
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(a, name)| Field::new(name, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(
        schema.clone(),
        columns.iter().map(|(a, _)| a.clone()).collect(),
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_bloom_filter_enabled(true)
        .set_bloom_filter_max_ndv(n as u64)
        .build();
    let mut file = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut file, schema, Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();

    let options = ReadOptionsBuilder::new()
        .with_reader_properties(
            ReaderProperties::builder()
                .set_read_bloom_filter(true)
                .build(),
        )
        .build();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("columns.parquet");
    std::fs::write(&path, &file).unwrap();
    let reader =
        SerializedFileReader::new_with_options(std::fs::File::open(&path).unwrap(), options)
            .unwrap();
    let row_group = reader.get_row_group(0).unwrap();
    for (c, (array, name)) in columns.iter().enumerate() {
        let sbbf = row_group
            .get_column_bloom_filter(c)
            .unwrap_or_else(|| panic!("{name}: no bloom filter written"));
        let mut bitset = Vec::new();
        sbbf.write_bitset(&mut bitset).unwrap();
        let theirs = ParquetFilter::from_parquet_bitset(&bitset).unwrap();
        let found = theirs.contains_array(array.as_ref()).unwrap();
        assert_eq!(
            found.null_count(),
            array.null_count().max(array.logical_null_count())
        );
        assert!(
            found.iter().all(|x| x != Some(false)),
            "{name}: a value the writer stored is not found"
        );
        let mut ours = ParquetFilter::new(theirs.num_blocks()).unwrap();
        let inserted = ours.insert_array(array.as_ref()).unwrap();
        assert_eq!(inserted.inserted + inserted.nulls, n);
        assert_eq!(
            ours.to_parquet_bitset(),
            bitset,
            "{name}: bits differ from the writer's"
        );
    }
}
