//! A parse's trigram filter: which three-byte sequences its stored bytes
//! hold, hashed into a bitmap about a thirty-second of their size.
//!
//! An update that changes a definition in a header asks, of each of the
//! thousands of files that include it, whether the file's parse mentions
//! the changed names. Reading every parse to search it cost a hook on the
//! Linux tree about a second; the filter answers "no" for almost all of
//! them from a record a few hundred bytes long. A word the bytes hold has
//! every one of its trigrams there, so the filter never says "no" to a
//! word a search of the bytes would find.

/// Bits in a parse's filter: about a quarter of its byte length, a power
/// of two, at most 2 KB: a larger parse's filter fills and lets every
/// word through to a read of the parse, as it would without one.
fn bits_for(len: usize) -> usize {
    (len / 4).next_power_of_two().clamp(MIN_BITS, MAX_BITS)
}

const MIN_BITS: usize = 256;
const MAX_BITS: usize = 1 << 14;

fn slot(gram: &[u8], bits: usize) -> usize {
    let g = u32::from(gram[0]) | u32::from(gram[1]) << 8 | u32::from(gram[2]) << 16;
    // Fibonacci hashing: the top bits of the product are well mixed.
    let h = g.wrapping_mul(0x9E37_79B1);
    (h >> (32 - bits.trailing_zeros())) as usize
}

/// The filter of `bytes`.
pub fn filter(bytes: &[u8]) -> Vec<u8> {
    let bits = bits_for(bytes.len());
    let mut map = vec![0u8; bits / 8];
    for gram in bytes.windows(3) {
        let s = slot(gram, bits);
        map[s / 8] |= 1 << (s % 8);
    }
    map
}

/// Whether bytes with this `filter` may hold `word`: false only when
/// they certainly do not. A filter rpg did not write answers true.
pub fn may_hold(filter: &[u8], word: &[u8]) -> bool {
    let bits = filter.len() * 8;
    if !bits.is_power_of_two() || !(MIN_BITS..=MAX_BITS).contains(&bits) || word.len() < 3 {
        return true;
    }
    word.windows(3).all(|gram| {
        let s = slot(gram, bits);
        filter[s / 8] & (1 << (s % 8)) != 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random bytes that look like a parse: `words` names drawn
    /// from a vocabulary of `vocab`, between JSON quotes.
    fn text(seed: u64, vocab: usize, words: usize) -> Vec<u8> {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let names: Vec<Vec<u8>> = (0..vocab)
            .map(|_| {
                let r = next();
                let len = 3 + (r % 12) as usize;
                let letter = |i: usize| {
                    b"abcdefghijklmnopqrstuvwxyz_0123"[((r >> ((i * 5) % 60)) % 31) as usize]
                };
                (0..len).map(letter).collect()
            })
            .collect();
        let mut out = Vec::new();
        for _ in 0..words {
            out.extend_from_slice(&names[(next() % vocab as u64) as usize]);
            out.extend_from_slice(b"\",\"");
        }
        out
    }

    #[test]
    fn a_word_the_bytes_hold_is_never_denied() {
        for seed in 1..40 {
            let bytes = text(seed, 10 + seed as usize * 10, 20 + seed as usize * 150);
            let f = filter(&bytes);
            for start in (0..bytes.len().saturating_sub(20)).step_by(7) {
                let word = &bytes[start..start + 3 + start % 17];
                assert!(
                    may_hold(&f, word),
                    "seed {seed}: {:?}",
                    String::from_utf8_lossy(word)
                );
            }
        }
    }

    #[test]
    fn a_name_the_bytes_lack_is_almost_always_denied() {
        let bytes = text(7, 150, 2000);
        let f = filter(&bytes);
        assert!(f.len() * 8 >= bytes.len() / 4 && f.len() * 8 <= bytes.len() / 2);
        let absent = [
            "hex_byte_pack_upper",
            "module_put",
            "kmalloc_array_node",
            "zzzqqq",
        ];
        for w in absent {
            assert!(!bytes.windows(w.len()).any(|x| x == w.as_bytes()));
        }
        let denied = absent
            .iter()
            .filter(|w| !may_hold(&f, w.as_bytes()))
            .count();
        assert!(denied >= 3, "{denied} of {}", absent.len());
    }

    #[test]
    fn short_words_and_foreign_filters_are_let_through() {
        let f = filter(b"static inline void f(void)");
        assert!(may_hold(&f, b"zq"));
        assert!(may_hold(&[], b"anything"));
        assert!(may_hold(&[0u8; 100], b"anything"));
    }
}
