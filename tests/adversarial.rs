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

use lesshash::{BloomFilter, DEFAULT_SEED, Layout, hash_key, random_seed};

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
fn block_of(key: u64, seed: u64, blocks: u64) -> u64 {
    let h1 = hash_key(&key, seed) as u64;
    ((u128::from(h1) * u128::from(blocks)) >> 64) as u64
}

/// The first `count` keys from `start` on that select block 0 under
/// `seed` (about `blocks` tries per key).
fn keys_in_block_zero(start: u64, count: usize, seed: u64, blocks: u64) -> Vec<u64> {
    (start..)
        .filter(|&k| block_of(k, seed, blocks) == 0)
        .take(count)
        .collect()
}

fn filter(seed: u64) -> BloomFilter {
    BloomFilter::builder()
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
/// 2,000 queries).
#[test]
fn keys_chosen_against_a_known_seed_overfill_a_block_and_a_secret_seed_stops_it() {
    let public = filter(DEFAULT_SEED);
    let blocks = public.num_bits() / 512;
    assert!(blocks > 100, "the filter must have many blocks");
    let planted = keys_in_block_zero(0, PLANTED, DEFAULT_SEED, blocks);
    // The queries: other keys, never inserted, also in block 0.
    let queries = keys_in_block_zero(1 << 40, QUERIES, DEFAULT_SEED, blocks);

    let mut attacked = public;
    attacked.insert_batch(&planted);
    let chosen = rate(&attacked, &queries);
    assert!(
        chosen > 0.9,
        "known seed: the chosen queries should be false positives, got rate {chosen}"
    );
    // Random queries still see the filter's normal (low) rate: the attack
    // is invisible to anyone watching the overall rate.
    let random: Vec<u64> = (0..QUERIES as u64).map(|i| (1 << 50) + i).collect();
    assert!(rate(&attacked, &random) < 3.0 * P);

    let secret = random_seed().expect("the OS gives random bytes");
    let mut guarded = filter(secret);
    guarded.insert_batch(&planted);
    let chosen = rate(&guarded, &queries);
    assert!(
        chosen <= 3.0 * P,
        "secret seed {secret:#x}: the chosen queries gave rate {chosen}"
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
    let mut a = filter(seeds[0]);
    let b = filter(seeds[1]);
    let e = a.union(&b).unwrap_err();
    assert!(e.to_string().contains("seed"), "{e}");
}
