//! The addressing specification, written a second time from the documents
//! (docs/format.md, docs/design.md), sharing no code with the crate: not its
//! salts, not its reductions, not its scheme progressions. Every layout x
//! scheme, k from 1 to 64, odd and power-of-two m: the bits a filter sets
//! are exactly the bits this file computes. Together with the golden files
//! (tests/data, loaded by tests/format.rs) this pins the on-disk positions:
//! a change to the crate's addressing fails here even if the crate's own
//! oracle changes with it.

mod common;

use lesshash::{BloomFilter, Layout, Scheme};
use xxhash_rust::xxh3::{xxh3_64_with_seed, xxh3_128_with_seed};

/// The probe multipliers of the blocked layouts, as published (the first
/// eight are Parquet's split-block salts).
const SALTS: [u32; 64] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
    0x878b_1ed1,
    0x1372_17d9,
    0x1f5d_b149,
    0xa165_3de3,
    0xb179_c4bd,
    0x52df_c56d,
    0x4567_2dd3,
    0x42b2_b63f,
    0x17b1_405f,
    0x417b_2551,
    0x7569_c703,
    0x90a7_41bb,
    0x219c_7c85,
    0x6817_42b7,
    0x1bf2_d575,
    0x1e0c_644b,
    0x9edb_fd23,
    0xf0a1_9aab,
    0x2804_aa93,
    0x3ca0_d5a1,
    0x9749_65fd,
    0x295c_3267,
    0x3d32_2dbd,
    0xd610_06a3,
    0xbe54_8269,
    0x9dca_6be1,
    0x265d_e90f,
    0x9785_1755,
    0xd674_1855,
    0x2dc7_52c3,
    0xd5d3_951f,
    0x4c96_30c9,
    0xc9ff_9ef3,
    0xce3e_e5ed,
    0x9e16_1cab,
    0x67ef_cbe9,
    0x0d4f_2225,
    0x598b_c91b,
    0x4b3a_293f,
    0x6302_b759,
    0xdf14_c035,
    0xc033_bec7,
    0x3d01_f5c5,
    0x0bf0_c37b,
    0x6073_2551,
    0x075d_ddff,
    0xc30f_2f31,
    0x6734_3d17,
    0x344c_48f3,
    0x79c5_b3a3,
    0xedf4_9523,
    0x3231_2d5d,
    0x14c8_41a1,
    0x6feb_e84d,
    0x27b7_bd0f,
    0x142b_6291,
];

fn mulhi(x: u64, r: u64) -> u64 {
    ((x as u128 * r as u128) >> 64) as u64
}

/// Hash i of the `Independent` scheme.
fn independent(bytes: &[u8], seed: u64, i: u32) -> u64 {
    xxh3_64_with_seed(
        bytes,
        seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
    )
}

/// `f(i)` of the scheme.
fn f(scheme: Scheme, i: u32) -> u128 {
    let i = i as u128;
    match scheme.name() {
        "enhanced-square" => i * i,
        "enhanced-cube" => i * i * i,
        _ => 0,
    }
}

/// The bit positions of a key, from the specification.
fn spec_positions(
    layout: Layout,
    scheme: Scheme,
    seed: u64,
    m: u64,
    k: u32,
    key: &[u8],
) -> Vec<u64> {
    let two_hash = scheme != Scheme::Independent;
    match layout {
        Layout::Classic | Layout::Partitioned => {
            let (range, stride) = if layout == Layout::Classic {
                (m, 0)
            } else {
                (m / k as u64, m / k as u64)
            };
            let h = xxh3_128_with_seed(key, seed);
            let (h1, h2) = (h as u64, (h >> 64) as u64);
            let a = mulhi(h1, range);
            let b = match range {
                0 | 1 => 0,
                r if r.is_power_of_two() => (1 + mulhi(h2, r - 1)) | 1,
                r => 1 + mulhi(h2, r - 1),
            };
            (0..k)
                .map(|i| {
                    let g = if two_hash {
                        ((a as u128 + i as u128 * b as u128 + f(scheme, i)) % range as u128) as u64
                    } else {
                        mulhi(independent(key, seed, i), range)
                    };
                    i as u64 * stride + g
                })
                .collect()
        }
        _ => {
            let split = layout == Layout::SplitBlock;
            let blocks = m / 512;
            let seg = if split { 512 / k } else { 512 };
            let (block, xs): (u64, Vec<u32>) = if two_hash {
                let h = xxh3_128_with_seed(key, seed);
                let (h1, h2) = (h as u64, (h >> 64) as u64);
                let xs = (0..k)
                    .map(|i| {
                        let half = if i % 2 == 0 {
                            h2 as u32
                        } else {
                            (h2 >> 32) as u32
                        };
                        half.wrapping_mul(SALTS[i as usize])
                    })
                    .collect();
                (mulhi(h1, blocks), xs)
            } else {
                let hs: Vec<u64> = (0..k).map(|i| independent(key, seed, i)).collect();
                (mulhi(hs[0], blocks), hs.iter().map(|&h| h as u32).collect())
            };
            xs.iter()
                .enumerate()
                .map(|(i, &x)| {
                    let base = if split { i as u32 * seg } else { 0 };
                    block * 512 + u64::from(base + (((x >> 16) * seg) >> 16))
                })
                .collect()
        }
    }
}

/// The filter's bits, read from its serialized payload (bytes 64.., little
/// endian words).
fn payload_bits(f: &BloomFilter) -> Vec<u64> {
    let bytes = f.to_bytes();
    let words = f.num_bits().div_ceil(64) as usize;
    bytes[64..64 + 8 * words]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn check(layout: Layout, scheme: Scheme, m: u64, k: u32, seed: u64, keys: u32) {
    // Built through the crate's builder: only the expected bits below are
    // derived independently of it.
    let mut f = common::build(layout, scheme, m, k, seed);
    // The partitioned layout rounds m down to a multiple of k.
    let m = f.num_bits();
    let mut expected = vec![0u64; m.div_ceil(64) as usize];
    for j in 0..keys {
        let key = format!("spec-{j}");
        let pos = spec_positions(layout, scheme, seed, m, k, key.as_bytes());
        assert_eq!(
            f.positions(&key),
            pos,
            "{layout:?} {scheme:?} m={m} k={k} key {key}"
        );
        for p in pos {
            assert!(p < m, "{layout:?} {scheme:?} m={m} k={k}: position {p}");
            expected[(p / 64) as usize] |= 1 << (p % 64);
        }
        f.insert(&key);
    }
    assert!(
        payload_bits(&f) == expected,
        "{layout:?} {scheme:?} m={m} k={k}: the filter's bits differ from the specification"
    );
    // The batch insert sets the same bits, and every query path answers
    // what the specification's bits say: a key is reported present exactly
    // when all its specified positions are set. (For `Independent` the
    // batch paths are a loop over the single-key code; this oracle is not.)
    let names: Vec<String> = (0..keys).map(|j| format!("spec-{j}")).collect();
    let mut batch = common::build(layout, scheme, m, k, seed);
    batch.insert_batch(&names);
    assert!(
        payload_bits(&batch) == expected,
        "{layout:?} {scheme:?} m={m} k={k}: insert_batch's bits differ from the specification"
    );
    let queries: Vec<String> = (0..keys)
        .map(|j| format!("query-{j}"))
        .chain(names)
        .collect();
    let want: Vec<bool> = queries
        .iter()
        .map(|q| {
            spec_positions(layout, scheme, seed, m, k, q.as_bytes())
                .iter()
                .all(|&p| expected[(p / 64) as usize] >> (p % 64) & 1 == 1)
        })
        .collect();
    let mut got = vec![false; queries.len()];
    f.contains_batch(&queries, &mut got).unwrap();
    assert_eq!(
        got, want,
        "{layout:?} {scheme:?} m={m} k={k}: contains_batch"
    );
    let single: Vec<bool> = queries.iter().map(|q| f.contains(q)).collect();
    assert_eq!(single, want, "{layout:?} {scheme:?} m={m} k={k}: contains");
}

#[test]
fn every_layout_and_scheme_sets_the_specified_bits() {
    let ks = [1u32, 2, 3, 7, 8, 9, 10, 11, 12, 16, 17, 24, 31, 32, 63, 64];
    for layout in Layout::ALL {
        for scheme in Scheme::ALL {
            for &k in &ks {
                let ms: &[u64] = if matches!(layout, Layout::Blocked | Layout::SplitBlock) {
                    &[512, 1536, 8192, 512 * 1001]
                } else {
                    &[64, 1000, 4096, 100_003, 1 << 20]
                };
                for &m in ms {
                    if layout == Layout::Partitioned && m < k as u64 {
                        continue;
                    }
                    check(layout, scheme, m, k, 0x6c65_7373_6861_7368 ^ m, 200);
                }
            }
        }
    }
}

/// Above 2^32 bits, allocation-free: the positions a filter of about 2^33
/// bits would give (`Builder::positions`, no 1 GiB allocated) are the
/// specification's, for every layout and scheme, and about half of them
/// lie above 2^32, so a 32-bit truncation anywhere in the block index, the
/// start, the stride or the additions fails here. (`tests/edge_cases.rs`
/// builds a real 2^33-bit filter too; CI runs it.)
#[test]
fn every_layout_addresses_above_two_to_the_32_bits() {
    for layout in Layout::ALL {
        for scheme in Scheme::ALL {
            for k in [1u32, 7, 11, 16] {
                let m = match layout {
                    Layout::Classic => (1u64 << 33) + 12_345,
                    Layout::Partitioned => ((1u64 << 33) + 12_345) / u64::from(k) * u64::from(k),
                    Layout::Blocked | Layout::SplitBlock => (1u64 << 33) + 3 * 512,
                    _ => unreachable!("a new layout needs its size here"),
                };
                let builder = BloomFilter::builder()
                    .layout(layout)
                    .scheme(scheme)
                    .seed(33)
                    .bits(m)
                    .hashes(k);
                let m = common::built_bits(layout, scheme, m, k);
                assert_eq!(builder.geometry().unwrap(), (m, k), "{layout:?} k={k}");
                let (mut high, mut total) = (0, 0);
                for j in 0..400u32 {
                    let key = format!("high-{j}");
                    let pos = builder.positions(&key).unwrap();
                    assert_eq!(
                        pos,
                        spec_positions(layout, scheme, 33, m, k, key.as_bytes()),
                        "{layout:?} {scheme:?} k={k} key {key}"
                    );
                    assert!(pos.iter().all(|&p| p < m));
                    high += pos.iter().filter(|&&p| p >= 1 << 32).count();
                    total += pos.len();
                }
                // Uniform positions lie above 2^32 with probability about
                // 1/2: 400 keys give at least 400 draws (k = 1), and 35% is
                // more than 6 standard deviations below half.
                assert!(
                    high * 100 > total * 35,
                    "{layout:?} {scheme:?} k={k}: {high} of {total} positions above 2^32"
                );
            }
        }
    }
}
