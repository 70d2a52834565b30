//! Private temporary folders for the compiler's inputs (clCompileProgram's embedded headers,
//! SPIR-V being translated): created exclusively, readable by this user only, under a name
//! another user cannot take first (a taken name is skipped), and removed when dropped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub struct PrivateDir(PathBuf);

impl PrivateDir {
    /// A new folder `<temp>/vkcl-<what>-<pid>-<unique>`.
    pub fn new(what: &str) -> std::io::Result<PrivateDir> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut last = None;
        for _ in 0..16 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let name = format!("vkcl-{what}-{}-{n}-{nanos:08x}", std::process::id());
            let dir = std::env::temp_dir().join(name);
            match create_private(&dir) {
                Ok(()) => return Ok(PrivateDir(dir)),
                // Someone else's: never used, try another name.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("the loop ran"))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

#[cfg(unix)]
fn create_private(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    // mkdir fails if the name exists (also as a link): the folder is ours, mode 0700.
    std::fs::DirBuilder::new().mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_private(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().create(dir)
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::PrivateDir;

    #[test]
    fn folders_are_new_private_and_removed() {
        let a = PrivateDir::new("test").unwrap();
        let b = PrivateDir::new("test").unwrap();
        assert_ne!(a.path(), b.path());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
    }
}
