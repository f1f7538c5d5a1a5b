//! Spark's Murmur3_x86_32 (`org.apache.spark.util.sketch.Murmur3_x86_32`):
//! Murmur3's 32-bit x86 hash, except for the tail of a byte string, whose
//! leftover bytes (its length mod 4) each go through a whole mixing round,
//! sign-extended, where Murmur3 packs them into one word.

#![forbid(unsafe_code)]

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline(always)]
fn mix_k1(k1: u32) -> u32 {
    k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

#[inline(always)]
fn mix_h1(h1: u32, k1: u32) -> u32 {
    (h1 ^ k1)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

#[inline(always)]
fn fmix(mut h1: u32, len: u32) -> u32 {
    h1 ^= len;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^ (h1 >> 16)
}

/// `hashLong(value, seed)`: the two 32-bit halves, low first.
#[inline(always)]
pub fn hash_long(value: i64, seed: i32) -> i32 {
    let v = value as u64;
    let h1 = mix_h1(seed as u32, mix_k1(v as u32));
    let h1 = mix_h1(h1, mix_k1((v >> 32) as u32));
    fmix(h1, 8) as i32
}

/// `hashUnsafeBytes(bytes, seed)`: little-endian 4-byte words, then each
/// leftover byte sign-extended through a mixing round of its own.
#[inline]
pub fn hash_bytes(bytes: &[u8], seed: i32) -> i32 {
    let (words, tail) = bytes.as_chunks::<4>();
    let mut h1 = seed as u32;
    for w in words {
        h1 = mix_h1(h1, mix_k1(u32::from_le_bytes(*w)));
    }
    for &b in tail {
        h1 = mix_h1(h1, mix_k1(i32::from(b as i8) as u32));
    }
    // Spark passes the length as an int: a key is far below 2^31 bytes.
    fmix(h1, bytes.len() as u32) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Murmur3_x86_32's published values for inputs without a tail (where
    /// Spark's variant is Murmur3): the empty input and 4-byte words.
    #[test]
    fn whole_words_are_murmur3() {
        assert_eq!(hash_bytes(b"", 0), 0);
        assert_eq!(hash_bytes(b"", 1) as u32, 0x514e_28b7);
        assert_eq!(hash_bytes(b"", -1) as u32, 0x81f1_6f39);
        assert_eq!(hash_bytes(&[0xff; 4], 0) as u32, 0x7629_3b50);
        assert_eq!(hash_bytes(&[0x21, 0x43, 0x65, 0x87], 0) as u32, 0xf55b_516b);
        assert_eq!(
            hash_bytes(&[0x21, 0x43, 0x65, 0x87], 0x5082_edee) as u32,
            0x2362_f9de
        );
        assert_eq!(hash_bytes(&[0; 4], 0) as u32, 0x2362_f9de);
    }

    /// A long is its 8 little-endian bytes (no tail).
    #[test]
    fn a_long_is_its_eight_bytes() {
        for (v, seed) in [
            (0i64, 0),
            (-1, 7),
            (i64::MIN, -3),
            (0x0123_4567_89ab_cdef, 42),
        ] {
            assert_eq!(hash_long(v, seed), hash_bytes(&v.to_le_bytes(), seed));
        }
    }
}
