//! A fast hasher for small keys vkcl makes itself (specialisation constants, binding
//! signatures): the launch path looks them up on every enqueue, where SipHash showed in the
//! profile. Not for keys an application chooses.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The multiply-rotate hash of rustc's FxHasher.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.add(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.add(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash + ?Sized>(t: &T) -> u64 {
        BuildHasherDefault::<FxHasher>::default().hash_one(t)
    }

    #[test]
    fn a_vec_and_its_slice_hash_alike_and_values_differ() {
        let v: Vec<(u32, u32)> = vec![(0, 64), (1, 1), (2, 1)];
        assert_eq!(hash(&v), hash(&v[..]));
        assert_ne!(hash(&v), hash(&[(0u32, 128u32), (1, 1), (2, 1)][..]));
        let mut m: FxHashMap<Vec<(u32, u32)>, u32> = FxHashMap::default();
        m.insert(v.clone(), 7);
        assert_eq!(m.get(&v[..]), Some(&7));
    }
}
