//! The odd 32-bit multipliers that turn one 32-bit hash half into a probe's
//! position inside a 512-bit block (blocked layouts) or a 32-bit word
//! (Parquet's split-block filter).
//!
//! A leaf: it imports nothing, and everything that needs a salt imports it
//! from here (the blocked layouts, the kernels, the Parquet filter).
//! Persisted filters depend on every value: never change one (the golden
//! files in `tests/data` and the table in `tests/addressing.rs` fail if one
//! changes).

#![forbid(unsafe_code)]

/// The eight salts of the Parquet split-block Bloom filter specification.
pub const PARQUET: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// One salt per probe index of the blocked layouts: Parquet's eight, then
/// SplitMix64 outputs (from the state "lesshash") forced odd, up to the 64
/// probes a filter may have.
pub const SALTS: [u32; 64] = make_salts();

const fn make_salts() -> [u32; 64] {
    let mut s = [0u32; 64];
    let mut i = 0;
    while i < 8 {
        s[i] = PARQUET[i];
        i += 1;
    }
    let mut state: u64 = 0x6c65_7373_6861_7368;
    while i < 64 {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        s[i] = (z >> 32) as u32 | 1;
        i += 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salts_are_odd_and_distinct() {
        let set: std::collections::HashSet<u32> = SALTS.iter().copied().collect();
        assert_eq!(set.len(), 64);
        assert!(SALTS.iter().all(|s| s % 2 == 1));
        assert_eq!(SALTS[..8], PARQUET);
    }
}
