//! The threat model's attack, shown (docs/design.md, "Threat model").
//!
//! With the public default seed anyone can compute which block a key
//! selects, so an attacker who chooses part of the keys can put them all
//! in one block, fill it, and then send queries that also select it: they
//! are false positives far above the filter's rate, while the filter's
//! other blocks and its overall fill look normal. Under a secret seed
//! (`lesshash::random_seed`) the very same keys land in blocks the
//! attacker did not choose, and the chosen queries answer at the filter's
//! rate.

use lesshash::{BloomFilter, DEFAULT_SEED, HashFamily, Layout, random_seed};

const N: u64 = 20_000;
const P: f64 = 0.01;
/// Keys the attacker gets inserted (5% of the filter's budget).
const PLANTED: usize = 1_000;
/// Queries the attacker sends.
const QUERIES: usize = 2_000;

/// The block a key selects in a filter of `blocks` blocks under `seed`:
/// the multiply-high of the hash's low half (docs/design.md, "Blocked and
/// split-block"), computed as an attacker would, from the public
/// hash alone.
fn block_of(family: HashFamily, key: u64, seed: u64, blocks: u64) -> u64 {
    let h1 = family.hash_key(&key, seed) as u64;
    ((u128::from(h1) * u128::from(blocks)) >> 64) as u64
}

/// The first `count` keys from `start` on that select block 0 under
/// `seed` (about `blocks` tries per key).
fn keys_in_block_zero(
    family: HashFamily,
    start: u64,
    count: usize,
    seed: u64,
    blocks: u64,
) -> Vec<u64> {
    (start..)
        .filter(|&k| block_of(family, k, seed, blocks) == 0)
        .take(count)
        .collect()
}

fn filter(family: HashFamily, seed: u64) -> BloomFilter {
    BloomFilter::builder()
        .hash_family(family)
        .layout(Layout::Blocked)
        .expected_items(N)
        .fpr(P)
        .seed(seed)
        .build()
        .expect("valid parameters")
}

/// The fraction of `queries` the filter reports present.
fn rate(f: &BloomFilter, queries: &[u64]) -> f64 {
    queries.iter().filter(|q| f.contains(*q)).count() as f64 / queries.len() as f64
}

/// Keys chosen against the public seed overfill one block: the chosen
/// queries are false positives almost always (over 90%, against p = 1%),
/// with 5% of the filter's keys. Under a secret seed the same keys and
/// queries give at most 3p (the filter holds 5% of its budget, so its
/// real rate is far below p; 3p leaves room for the binomial noise of
/// 2,000 queries). In both hash families.
#[test]
fn keys_chosen_against_a_known_seed_overfill_a_block_and_a_secret_seed_stops_it() {
    for family in HashFamily::ALL {
        overfill(family);
    }
}

fn overfill(family: HashFamily) {
    let public = filter(family, DEFAULT_SEED);
    let blocks = public.num_bits() / 512;
    assert!(blocks > 100, "the filter must have many blocks");
    let planted = keys_in_block_zero(family, 0, PLANTED, DEFAULT_SEED, blocks);
    // The queries: other keys, never inserted, also in block 0.
    let queries = keys_in_block_zero(family, 1 << 40, QUERIES, DEFAULT_SEED, blocks);

    let mut attacked = public;
    attacked.insert_batch(&planted);
    let chosen = rate(&attacked, &queries);
    assert!(
        chosen > 0.9,
        "{family:?}, known seed: the chosen queries should be false positives, got rate {chosen}"
    );
    // Random queries still see the filter's normal (low) rate: the attack
    // is invisible to anyone watching the overall rate.
    let random: Vec<u64> = (0..QUERIES as u64).map(|i| (1 << 50) + i).collect();
    assert!(rate(&attacked, &random) < 3.0 * P);

    let secret = random_seed().expect("the OS gives random bytes");
    let mut guarded = filter(family, secret);
    guarded.insert_batch(&planted);
    let chosen = rate(&guarded, &queries);
    assert!(
        chosen <= 3.0 * P,
        "{family:?}, secret seed {secret:#x}: the chosen queries gave rate {chosen}"
    );
    // No false negatives either way.
    assert!(
        planted
            .iter()
            .all(|k| attacked.contains(k) && guarded.contains(k))
    );
}

/// `random_seed` draws a fresh seed each call, and filters with different
/// seeds refuse to combine (with an error naming the seed).
#[test]
fn random_seeds_differ_and_filters_with_different_seeds_do_not_combine() {
    let seeds: Vec<u64> = (0..8)
        .map(|_| random_seed().expect("random bytes"))
        .collect();
    let mut distinct = seeds.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), seeds.len(), "{seeds:?}");
    let mut a = filter(HashFamily::Xxh3, seeds[0]);
    let b = filter(HashFamily::Xxh3, seeds[1]);
    let e = a.union(&b).unwrap_err();
    assert!(e.to_string().contains("seed"), "{e}");
}

/// The folded multiply's first key `f0` under `seed`, as anyone can
/// compute it from the format's definition (docs/format.md): XXH64's
/// avalanche of the seed xored with XXH3's first secret word.
fn folded_f0(seed: u64) -> u64 {
    let mut v = seed;
    v = (v ^ (v >> 33)).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    v = (v ^ (v >> 29)).wrapping_mul(0x1656_67B1_9E37_79F9);
    (v ^ (v >> 32)) ^ 0xbe4b_a423_396c_feb8
}

/// 16-byte keys whose first eight bytes are `f0` and the last eight `i`.
fn zero_product_keys(seed: u64, range: std::ops::Range<u64>) -> Vec<[u8; 16]> {
    let f0 = folded_f0(seed).to_le_bytes();
    range
        .map(|i| {
            let mut key = [0u8; 16];
            key[..8].copy_from_slice(&f0);
            key[8..].copy_from_slice(&i.to_le_bytes());
            key
        })
        .collect()
}

/// The folded multiply's multicollisions under a known seed
/// (docs/design.md, "Threat model"): every 9-16-byte key whose first eight
/// bytes are the seed's public `f0` hashes to one value, so one planted
/// key makes all of them present. XXH3-128 and a secret seed give those
/// keys the filter's rate.
#[test]
fn the_folded_multiply_collides_by_construction_under_a_known_seed_only() {
    let keys = zero_product_keys(DEFAULT_SEED, 0..QUERIES as u64 + 1);
    let (planted, queries) = keys.split_at(1);
    let fold = HashFamily::FoldedMultiply;
    let h = fold.hash_key(&planted[0], DEFAULT_SEED);
    assert!(queries.iter().all(|q| fold.hash_key(q, DEFAULT_SEED) == h));
    let present = |family: HashFamily, seed: u64, keys: &[[u8; 16]]| {
        let mut f = filter(family, seed);
        f.insert(&planted[0]);
        keys.iter().filter(|q| f.contains(*q)).count() as f64 / keys.len() as f64
    };
    assert_eq!(present(fold, DEFAULT_SEED, queries), 1.0);
    // XXH3 with the same public seed, and the folded multiply with a secret
    // one: a filter of one key answers these keys at far below p.
    assert!(present(HashFamily::Xxh3, DEFAULT_SEED, queries) < P);
    let secret = random_seed().expect("the OS gives random bytes");
    assert!(
        present(fold, secret, queries) < P,
        "secret seed {secret:#x}"
    );
}
