//! Primes: a deterministic Miller-Rabin test exact for every `u64`, and the
//! next prime above a bound. A leaf: the two-hash Count-Min sketch's widths
//! and the classic and partitioned layouts' two-hash ranges are primes, so
//! that every stride of a double-hashing sequence is coprime to its range.

#![forbid(unsafe_code)]

/// `a * b mod m` without overflow.
#[inline]
fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) % u128::from(m)) as u64
}

fn pow_mod(mut base: u64, mut exp: u64, m: u64) -> u64 {
    let mut acc = 1 % m;
    base %= m;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = mul_mod(acc, base, m);
        }
        base = mul_mod(base, base, m);
        exp >>= 1;
    }
    acc
}

/// Whether `n` is prime: a deterministic Miller-Rabin test, exact for every
/// `u64` (the first twelve primes as bases suffice below 3.3 * 10^24).
///
/// Hand-written rather than a dependency: it is twenty lines, and it is
/// tested against a sieve and known strong pseudoprimes.
pub fn is_prime(n: u64) -> bool {
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if n < 2 {
        return false;
    }
    for p in BASES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'bases: for a in BASES {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

/// The smallest prime `>= n`, or `None` if there is none below 2^64.
///
/// Bounded: gaps between consecutive primes below 2^64 are under 1,600, so
/// at most that many candidates are tested.
pub fn next_prime(n: u64) -> Option<u64> {
    (n.max(2)..=u64::MAX).find(|&c| is_prime(c))
}
