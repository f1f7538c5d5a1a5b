//! `lesshash::parquet` against the `parquet` crate (the Apache Arrow Rust
//! implementation of the Parquet format): its `Sbbf` and the Bloom filters
//! its file writer stores. Same values give the same bytes, the same
//! answers and the same sizing; bytes either side wrote are read by the
//! other; malformed headers are errors naming the field.

use lesshash::Error;
use lesshash::internals::parquet::{parquet_header, parse_parquet_header};
use lesshash::parquet::{self as pq, ParquetFilter, parquet_num_bytes};
use parquet::bloom_filter::Sbbf;

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

fn sbbf_bitset(s: &Sbbf) -> Vec<u8> {
    let mut out = Vec::new();
    s.write_bitset(&mut out).unwrap();
    out
}

fn sbbf_bytes(s: &Sbbf) -> Vec<u8> {
    let mut out = Vec::new();
    s.write(&mut out).unwrap();
    out
}

#[test]
fn sizing_matches_parquet_rule() {
    for ndv in [
        0u64, 1, 10, 100, 1000, 4096, 10_000, 123_457, 1_000_000, 3_000_000,
    ] {
        for fpp in [0.5, 0.1, 0.05, 0.01, 0.001, 1e-4, 1e-6] {
            let theirs = Sbbf::new_with_ndv_fpp(ndv, fpp).unwrap();
            let ours = ParquetFilter::with_ndv_fpp(ndv, fpp).unwrap();
            assert_eq!(
                ours.num_blocks(),
                theirs.num_blocks() as u64,
                "ndv={ndv} fpp={fpp}"
            );
            assert_eq!(parquet_num_bytes(ndv, fpp), theirs.num_blocks() * 32);
        }
    }
    // The 128 MiB cap, computed without allocating on our side.
    assert_eq!(parquet_num_bytes(u64::MAX / 4, 0.01), pq::PARQUET_MAX_BYTES);
}

#[test]
fn same_values_same_bits_and_answers() {
    for (ndv, fpp) in [(1u64, 0.01), (200, 0.05), (5000, 0.01), (20_000, 0.001)] {
        let mut theirs = Sbbf::new_with_ndv_fpp(ndv, fpp).unwrap();
        let mut ours = ParquetFilter::with_ndv_fpp(ndv, fpp).unwrap();
        let mut ours_batch = ours.clone();
        let mut next = splitmix(ndv);
        let (mut i64s, mut i32s, mut f64s, mut strs) = (vec![], vec![], vec![], vec![]);
        for i in 0..ndv {
            match i % 4 {
                0 => i64s.push(next() as i64),
                1 => i32s.push(next() as i32),
                2 => f64s.push(f64::from_bits(next())),
                _ => strs.push(format!("user-{:x}", next())),
            }
        }
        for v in &i64s {
            theirs.insert(v);
            ours.insert(v);
        }
        for v in &i32s {
            theirs.insert(v);
            ours.insert(v);
        }
        for v in &f64s {
            theirs.insert(v);
            ours.insert(v);
        }
        for v in &strs {
            theirs.insert(v.as_str());
            ours.insert(v.as_str());
        }
        ours_batch.insert_batch(&i64s);
        ours_batch.insert_batch(&i32s);
        ours_batch.insert_batch(&f64s);
        ours_batch.insert_batch(&strs);

        let bitset = sbbf_bitset(&theirs);
        assert_eq!(ours.to_parquet_bitset(), bitset, "ndv={ndv}");
        assert_eq!(ours_batch, ours, "ndv={ndv}");
        assert_eq!(ours.to_parquet_bytes().unwrap(), sbbf_bytes(&theirs));

        // Answers on members and on fresh values, single and batch.
        let probes: Vec<i64> = i64s
            .iter()
            .copied()
            .chain((0..20_000).map(|_| next() as i64))
            .collect();
        let mut batch = vec![false; probes.len()];
        ours.contains_batch(&probes, &mut batch).unwrap();
        // The pre-hashed batch (the vector mask) against the scalar oracle
        // per hash and the keys' answers.
        let hashes: Vec<u64> = probes.iter().map(pq::hash).collect();
        let mut by_hash = vec![false; probes.len()];
        ours.contains_hash_batch(&hashes, &mut by_hash).unwrap();
        assert!(matches!(
            ours.contains_hash_batch(&hashes, &mut by_hash[1..]),
            Err(Error::LengthMismatch { name: "out", .. })
        ));
        for (((p, b), &h), hb) in probes.iter().zip(&batch).zip(&hashes).zip(&by_hash) {
            assert_eq!(ours.contains(p), theirs.check(p), "ndv={ndv} probe={p}");
            assert_eq!(*b, theirs.check(p));
            assert_eq!(*hb, ours.contains_hash(h), "ndv={ndv} hash={h:#x}");
            assert_eq!(*hb, *b);
        }
        let byte_probes: Vec<Vec<u8>> = (0..5000)
            .map(|i| format!("user-{:x}", if i % 2 == 0 { next() } else { i }).into_bytes())
            .collect();
        for p in &byte_probes {
            assert_eq!(ours.contains(p.as_slice()), theirs.check(p.as_slice()));
        }
        assert!(strs.iter().all(|s| ours.contains(s.as_str())));
        assert!(f64s.iter().all(|v| ours.contains(v)));
    }
}

#[test]
fn bytes_round_trip_both_ways() {
    let mut theirs = Sbbf::new_with_ndv_fpp(3000, 0.01).unwrap();
    let mut next = splitmix(7);
    let values: Vec<u64> = (0..3000).map(|_| next()).collect();
    for v in &values {
        theirs.insert(v);
    }
    // parquet wrote it, lesshash reads it: header + bitset, and bitset alone.
    let ours = ParquetFilter::from_parquet_bytes(&sbbf_bytes(&theirs)).unwrap();
    assert_eq!(
        ours,
        ParquetFilter::from_parquet_bitset(&sbbf_bitset(&theirs)).unwrap()
    );
    assert!(values.iter().all(|v| ours.contains(v)));
    // lesshash wrote it, parquet reads it.
    let back = Sbbf::from_bytes(&ours.to_parquet_bytes().unwrap()).unwrap();
    assert_eq!(sbbf_bitset(&back), sbbf_bitset(&theirs));
    for _ in 0..10_000 {
        let p = next();
        assert_eq!(back.check(&p), ours.contains(&p));
    }
    // A non-power-of-two lesshash filter (sized by the exact formula) is
    // still a valid Parquet bitset: parquet-rs answers the same.
    let mut exact = ParquetFilter::with_fpr(3000, 0.01).unwrap();
    assert!(
        !exact.num_blocks().is_power_of_two(),
        "{}",
        exact.num_blocks()
    );
    exact.insert_batch(&values);
    let theirs = Sbbf::new(&exact.to_parquet_bitset());
    assert_eq!(theirs.num_blocks() as u64, exact.num_blocks());
    for _ in 0..10_000 {
        let p = next();
        assert_eq!(theirs.check(&p), exact.contains(&p));
    }
    assert!(values.iter().all(|v| theirs.check(v)));
}

/// Writes a Parquet file with Bloom filters on an INT64 and a BYTE_ARRAY
/// column through parquet's own writer, then reads the filters from the file
/// bytes at each column chunk's `bloom_filter_offset`.
#[test]
fn reads_filters_from_a_parquet_file() {
    use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
    use parquet::file::properties::{ReaderProperties, WriterProperties};
    use parquet::file::reader::FileReader;
    use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use std::sync::Arc;

    let schema = Arc::new(
        parse_message_type("message m { REQUIRED INT64 id; REQUIRED BYTE_ARRAY name; }").unwrap(),
    );
    let props = Arc::new(
        WriterProperties::builder()
            .set_bloom_filter_enabled(true)
            .set_bloom_filter_fpp(0.01)
            .set_bloom_filter_max_ndv(5000)
            .build(),
    );
    let mut next = splitmix(99);
    let ids: Vec<i64> = (0..5000).map(|_| next() as i64).collect();
    let names: Vec<String> = (0..5000)
        .map(|i| format!("name-{i}-{:x}", next()))
        .collect();

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    {
        let file = std::fs::File::create(&path).unwrap();
        let mut writer = SerializedFileWriter::new(file, schema, props).unwrap();
        let mut rg = writer.next_row_group().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<Int64Type>()
            .write_batch(&ids, None, None)
            .unwrap();
        col.close().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        let arrays: Vec<ByteArray> = names.iter().map(|s| ByteArray::from(s.as_str())).collect();
        col.typed::<ByteArrayType>()
            .write_batch(&arrays, None, None)
            .unwrap();
        col.close().unwrap();
        rg.close().unwrap();
        writer.close().unwrap();
    }

    let file_bytes = std::fs::read(&path).unwrap();
    let options = ReadOptionsBuilder::new()
        .with_reader_properties(
            ReaderProperties::builder()
                .set_read_bloom_filter(true)
                .build(),
        )
        .build();
    let reader =
        SerializedFileReader::new_with_options(std::fs::File::open(&path).unwrap(), options)
            .unwrap();
    let rg_meta = reader.metadata().row_group(0);
    let rg = reader.get_row_group(0).unwrap();
    let mut filters = Vec::new();
    for c in 0..2 {
        let meta = rg_meta.column(c);
        let offset = meta.bloom_filter_offset().expect("writer stored a filter") as usize;
        let rest = &file_bytes[offset..];
        let header = parse_parquet_header(rest).unwrap();
        if let Some(len) = meta.bloom_filter_length() {
            assert_eq!(len as usize, header.header_len + header.num_bytes);
        }
        let ours = ParquetFilter::from_parquet_bytes(&rest[..header.header_len + header.num_bytes])
            .unwrap();
        let theirs = rg.get_column_bloom_filter(c).expect("reader loaded it");
        assert_eq!(ours.num_blocks(), theirs.num_blocks() as u64);
        assert_eq!(ours.to_parquet_bitset(), sbbf_bitset(theirs));
        filters.push(ours);
    }
    assert!(ids.iter().all(|v| filters[0].contains(v)));
    assert!(names.iter().all(|v| filters[1].contains(v.as_str())));
    let theirs = rg.get_column_bloom_filter(0).unwrap();
    for _ in 0..20_000 {
        let p = next() as i64;
        assert_eq!(filters[0].contains(&p), theirs.check(&p));
    }
}

#[test]
fn header_encoding_and_bad_headers_name_the_field() {
    let h = parquet_header(1024).unwrap();
    // numBytes 1024 = zigzag 2048 = varint 0x80 0x10.
    assert_eq!(
        h,
        [
            0x15, 0x80, 0x10, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0
        ]
    );
    let parsed = parse_parquet_header(&h).unwrap();
    assert_eq!((parsed.num_bytes, parsed.header_len), (1024, h.len()));
    assert!(parquet_header(1 << 31).is_err());

    let field = |e: Error| e.to_string();
    // Every strict prefix is truncated.
    for cut in 0..h.len() {
        let e = field(parse_parquet_header(&h[..cut]).unwrap_err());
        assert!(e.contains("truncated"), "cut={cut}: {e}");
    }
    // numBytes not a positive multiple of 32.
    for n in [0usize, 31, 33, 100] {
        let e = field(parse_parquet_header(&parquet_header(n).unwrap()).unwrap_err());
        assert!(e.contains("`numBytes`"), "{e}");
    }
    // Unknown algorithm / hash / compression (union member 2).
    // header(64) = 15 80 01 | 1c [1c] 00 00 | 1c [1c] 00 00 | 1c [1c] 00 00 | 00
    for (at, name) in [
        (4usize, "`algorithm`"),
        (8, "`hash`"),
        (12, "`compression`"),
    ] {
        let mut bad = parquet_header(64).unwrap();
        bad[at] = 0x2c; // the union's member id 2 instead of 1
        let e = field(parse_parquet_header(&bad).unwrap_err());
        assert!(e.contains(name) && e.contains("unknown"), "{e}");
    }
    // numBytes with the wrong type (i64 = 6).
    let mut bad = parquet_header(64).unwrap();
    bad[0] = 0x16;
    let e = field(parse_parquet_header(&bad).unwrap_err());
    assert!(e.contains("`numBytes`"), "{e}");
    // A required field missing: drop `compression` (4 bytes before the stop).
    let mut bad = parquet_header(64).unwrap();
    let stop = bad.len() - 1;
    bad.drain(stop - 4..stop);
    let e = field(parse_parquet_header(&bad).unwrap_err());
    assert!(e.contains("`compression`") && e.contains("missing"), "{e}");
    // Unknown extra fields (a newer writer) are skipped: field 5 as a
    // binary, field 6 as a list of i32, field 7 as a map, field 8 as a bool.
    let mut newer = parquet_header(64).unwrap();
    newer.pop();
    newer.extend_from_slice(&[0x18, 3, b'a', b'b', b'c']);
    newer.extend_from_slice(&[0x19, 0x25, 2, 4]);
    newer.extend_from_slice(&[0x1b, 1, 0x55, 2, 4]);
    newer.extend_from_slice(&[0x11, 0]);
    let parsed = parse_parquet_header(&newer).unwrap();
    assert_eq!((parsed.num_bytes, parsed.header_len), (64, newer.len()));
    // Deep nesting is refused, not a stack overflow.
    let mut deep = vec![0x1c; 10_000];
    deep.insert(0, 0x5c);
    let e = field(parse_parquet_header(&deep).unwrap_err());
    assert!(e.contains("`header`"), "{e}");
    // An overlong varint.
    let e = field(
        parse_parquet_header(&[
            0x15, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ])
        .unwrap_err(),
    );
    assert!(e.contains("`numBytes`"), "{e}");

    // Whole filters: a bitset shorter or longer than numBytes.
    let f = ParquetFilter::new(2).unwrap();
    let bytes = f.to_parquet_bytes().unwrap();
    let e = field(ParquetFilter::from_parquet_bytes(&bytes[..bytes.len() - 1]).unwrap_err());
    assert!(e.contains("`bitset`"), "{e}");
    let mut long = bytes.clone();
    long.push(0);
    let e = field(ParquetFilter::from_parquet_bytes(&long).unwrap_err());
    assert!(e.contains("`input length`"), "{e}");
    assert_eq!(ParquetFilter::from_parquet_bytes(&bytes).unwrap(), f);
}

/// Arbitrary bytes never panic the header parser or the filter loader:
/// inputs too short to hold a header and a 32-byte bitset are errors, and
/// a mutated header that still loads gives a filter that round-trips and
/// holds exactly the bytes after its header.
#[test]
fn random_bytes_are_errors_not_panics() {
    let mut next = splitmix(3);
    let valid = parquet_header(64).unwrap();
    for i in 0..20_000 {
        let mut bytes: Vec<u8> = if i % 2 == 0 {
            (0..(next() % 40)).map(|_| next() as u8).collect()
        } else {
            let mut v = valid.clone();
            v.extend_from_slice(&[0; 64]);
            let at = (next() as usize) % valid.len();
            v[at] = next() as u8;
            v
        };
        let header = parse_parquet_header(&bytes);
        match ParquetFilter::from_parquet_bytes(&bytes) {
            Ok(g) => {
                assert!(i % 2 == 1, "{} random bytes loaded", bytes.len());
                assert!(
                    header.is_ok(),
                    "the filter loaded but its header did not parse"
                );
                let again = g.to_parquet_bytes().unwrap();
                assert_eq!(ParquetFilter::from_parquet_bytes(&again).unwrap(), g);
                // The bitset is the input's tail: 64 zero bytes.
                assert_eq!(&again[again.len() - 64..], &bytes[bytes.len() - 64..]);
            }
            Err(e) => assert!(e.to_string().contains('`'), "error names no field: {e}"),
        }
        bytes.truncate(bytes.len() / 2);
        assert!(ParquetFilter::from_parquet_bytes(&bytes).is_err());
    }
    // A valid header and bitset, one byte short or one byte long: each an
    // error naming what is wrong (the bitset is cut; the input runs past
    // the filter), never a filter of another size.
    for size in [32usize, 64, 1024] {
        let mut whole = parquet_header(size).unwrap();
        whole.extend(std::iter::repeat_n(0xa5u8, size));
        assert_eq!(
            ParquetFilter::from_parquet_bytes(&whole)
                .unwrap()
                .num_bytes(),
            size
        );
        for cut in [1, 31, 32, size] {
            let e = ParquetFilter::from_parquet_bytes(&whole[..whole.len() - cut]).unwrap_err();
            assert!(e.to_string().contains("`bitset`"), "{size} - {cut}: {e}");
        }
        for extra in [1usize, 32] {
            let mut long = whole.clone();
            long.extend(std::iter::repeat_n(0u8, extra));
            let e = ParquetFilter::from_parquet_bytes(&long).unwrap_err();
            assert!(
                e.to_string().contains("`input length`"),
                "{size} + {extra}: {e}"
            );
        }
    }
}

/// The type's 0.1 name, `SplitBlockFilter`, still names it (deprecated:
/// it read as `Layout::SplitBlock`, lesshash's own layout).
#[test]
#[allow(deprecated)]
fn the_old_name_is_the_same_type() {
    let mut f: lesshash::parquet::SplitBlockFilter =
        ParquetFilter::with_ndv_fpp(100, 0.01).unwrap();
    f.insert(&7i64);
    let g: ParquetFilter = f;
    assert!(g.contains(&7i64));
}

/// `stored_len` reads the whole stored filter's length (header and
/// bitset) from its header alone, as a reader without
/// `bloom_filter_length` needs; `insert_hash` is `insert` given the
/// value's hash (the same bits).
#[test]
fn stored_len_and_insert_hash() {
    let mut f = ParquetFilter::with_ndv_fpp(1000, 0.01).unwrap();
    let mut g = f.clone();
    for v in 0..1000i64 {
        f.insert(&v);
        g.insert_hash(pq::hash(&v));
    }
    assert_eq!(f, g);
    let bytes = f.to_parquet_bytes().unwrap();
    assert_eq!(ParquetFilter::stored_len(&bytes).unwrap(), bytes.len());
    // Only the header is needed, and trailing bytes are not counted.
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0xAB; 100]);
    assert_eq!(ParquetFilter::stored_len(&longer).unwrap(), bytes.len());
    assert_eq!(
        ParquetFilter::stored_len(&bytes[..32.min(bytes.len())]).unwrap(),
        bytes.len()
    );
    assert!(ParquetFilter::stored_len(&bytes[..3]).is_err());
}
