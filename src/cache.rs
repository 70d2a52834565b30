//! The persistent cache on disk: compiler output and Vulkan pipeline caches, shared by every
//! process of the user.
//!
//! Where: `VKCL_CACHE_DIR`, else `$XDG_CACHE_HOME/vkcl`, else `~/.cache/vkcl`; `VKCL_CACHE=0`
//! turns it off. An entry is one file, `<dir>/<kind>/<key>`, holding a header (magic, payload
//! length, SHA-256 of the payload) and the payload. Entries are written to a temporary file and
//! renamed into place, so a reader sees a whole entry or none; an entry that fails its check
//! (truncated, corrupt, another format) is deleted and reported as a miss, and the caller
//! rebuilds it.

use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

const MAGIC: &[u8; 8] = b"VKCLCAC1";
const HEADER: usize = 8 + 8 + 32;

pub struct DiskCache {
    dir: PathBuf,
}

/// The cache's directory as configured (whether or not the cache is on), if there is one.
pub fn configured_dir() -> Option<PathBuf> {
    crate::config::get()
        .cache_dir
        .clone()
        .map(PathBuf::from)
        .or_else(|| {
            let xdg = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty());
            let base = xdg
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")));
            base.map(|b| b.join("vkcl"))
        })
}

/// The cache of this process, or None when it is off or has no directory.
pub fn get() -> Option<&'static DiskCache> {
    static CACHE: OnceLock<Option<DiskCache>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            if !crate::config::get().cache {
                return None;
            }
            let dir = configured_dir()?;
            log::info!(target: "cache", "disk cache in {}", dir.display());
            Some(DiskCache { dir })
        })
        .as_ref()
}

/// A key naming the contents that produce an entry: SHA-256 over the parts, each
/// length-prefixed (so part boundaries matter), in hex.
pub fn key(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl DiskCache {
    fn path(&self, kind: &str, key: &str) -> PathBuf {
        self.dir.join(kind).join(key)
    }

    /// The payload stored under (kind, key), if there is a sound one.
    pub fn load(&self, kind: &str, key: &str) -> Option<Vec<u8>> {
        let path = self.path(kind, key);
        let bytes = std::fs::read(&path).ok()?;
        let payload = bytes.get(HEADER..).filter(|p| {
            bytes[..8] == MAGIC[..]
                && bytes[8..16] == (p.len() as u64).to_le_bytes()
                && bytes[16..48] == Sha256::digest(p)[..]
        });
        match payload {
            Some(p) => Some(p.to_vec()),
            None => {
                log::warn!(target: "cache", "{} is corrupt: removed", path.display());
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Stores `payload` under (kind, key), replacing any entry; failures are logged only (the
    /// cache is an optimisation).
    pub fn store(&self, kind: &str, key: &str, payload: &[u8]) {
        let path = self.path(kind, key);
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let tmp = path.with_extension(format!(
            "tmp{}.{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut bytes = Vec::with_capacity(HEADER + payload.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&Sha256::digest(payload));
        bytes.extend_from_slice(payload);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&tmp, &bytes))
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            log::warn!(target: "cache", "cannot write {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corruption() {
        let dir = std::env::temp_dir().join(format!("vkcl-cache-test-{}", std::process::id()));
        let cache = DiskCache { dir: dir.clone() };
        let k = key(&[b"a", b"bc"]);
        assert_ne!(
            k,
            key(&[b"ab", b"c"]),
            "part boundaries are part of the key"
        );
        assert_eq!(cache.load("t", &k), None);
        cache.store("t", &k, b"payload");
        assert_eq!(cache.load("t", &k).as_deref(), Some(&b"payload"[..]));
        // A flipped payload byte, then a truncated file: both misses, and the entry is gone.
        let path = cache.path("t", &k);
        let mut bytes = std::fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.load("t", &k), None);
        assert!(!path.exists());
        cache.store("t", &k, b"payload");
        std::fs::write(&path, &std::fs::read(&path).unwrap()[..20]).unwrap();
        assert_eq!(cache.load("t", &k), None);
        let _ = std::fs::remove_dir_all(dir);
    }
}
