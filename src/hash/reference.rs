//! The folded-multiply family's hash written directly from a key's bytes,
//! as docs/format.md defines it, with no lanes, length classes or
//! constants shared with `short`: the oracle every fast path of the
//! family (one key, the batch's scalar formulas, AVX-512's lanes) is
//! tested against, bit for bit.

#![forbid(unsafe_code)]

/// The folded-multiply family's hash written directly from the key's bytes
/// (docs/format.md's definition), with no lanes, classes or constants
/// shared with `short`: the oracle the fast paths are tested against.
pub fn folded_multiply(bytes: &[u8], seed: u64) -> u128 {
    fn le(bytes: &[u8]) -> u64 {
        bytes.iter().rev().fold(0, |w, &b| (w << 8) | u64::from(b))
    }
    fn mul(x: u64, y: u64) -> (u64, u64) {
        let p = u128::from(x) * u128::from(y);
        (p as u64, (p >> 64) as u64)
    }
    let len = bytes.len();
    let (x, y): (u64, u64) = match len {
        0 => (0, 0),
        1..=3 => {
            let v = u32::from(bytes[0]) << 16
                | u32::from(bytes[len / 2]) << 24
                | u32::from(bytes[len - 1])
                | (len as u32) << 8;
            (u64::from(v), u64::from(v.swap_bytes().rotate_left(13)))
        }
        4..=8 => (
            le(&bytes[..4]) | le(&bytes[len - 4..]) << 32,
            0x9E37_79B1_85EB_CA87u64.wrapping_add(4 * len as u64),
        ),
        9..=16 => (
            le(&bytes[..8]),
            le(&bytes[len - 8..]) ^ ((len as u64 - 1) << 54),
        ),
        _ => return xxhash_rust::xxh3::xxh3_128_with_seed(bytes, seed),
    };
    let secret = [
        0xbe4b_a423_396c_feb8u64,
        0x1cad_21f7_2c81_017c,
        0xdb97_9083_e96d_d4de,
        0x1f67_b3b7_a4a4_4072,
    ];
    let mut a = seed;
    a = (a ^ (a >> 33)).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    a = (a ^ (a >> 29)).wrapping_mul(0x1656_67B1_9E37_79F9);
    a ^= a >> 32;
    let f = secret.map(|w| a ^ w);
    let (p0, p1) = mul(x ^ f[0], y ^ f[1]);
    let (q0, q1) = mul(p0 ^ f[2], p1 ^ f[3]);
    u128::from(q0 ^ q1) | u128::from(p0 ^ p1) << 64
}
