//! SPIR-V intermediate language (clCreateProgramWithIL, cl_khr_il_program) → LLVM bitcode that
//! clspv compiles with `-x ir`. clspv reads no SPIR-V, so the Khronos translator does the
//! reverse translation: `llvm-spirv-15 -r` (Debian package llvm-spirv-15), run as a process.
//! Translations go through the disk cache like compiles.

use std::path::PathBuf;
use std::process::Command;

/// The SPIR-V versions the translator reads, for CL_DEVICE_IL_VERSION and
/// CL_DEVICE_ILS_WITH_VERSION.
pub const SPIRV_VERSIONS: [(u32, u32); 5] = [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4)];

const TOOLS: [&str; 2] = ["llvm-spirv-15", "llvm-spirv"];

/// The translator: `VKCL_LLVM_SPIRV`, else the first of [`TOOLS`] on PATH.
fn translator() -> Option<PathBuf> {
    if let Some(p) = &crate::config::get().llvm_spirv {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH")?;
    TOOLS.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// Whether IL programs can be built (the translator is installed).
pub fn available() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| translator().is_some())
}

/// True when `il` looks like a SPIR-V module (magic number in either byte order, whole words).
pub fn is_spirv(il: &[u8]) -> bool {
    il.len() >= 20
        && il.len() % 4 == 0
        && (il[..4] == [0x03, 0x02, 0x23, 0x07] || il[..4] == [0x07, 0x23, 0x02, 0x03])
}

/// clspv arguments the module's translation needs: its pointer width (clspv assumes 32-bit
/// pointers; modules for 64-bit devices use the Physical64 addressing model).
pub fn arch_args(il: &[u8]) -> Vec<String> {
    const OP_MEMORY_MODEL: u32 = 14;
    const PHYSICAL64: u32 = 2;
    let big_endian = il.get(..4) == Some(&[0x07, 0x23, 0x02, 0x03]);
    let words: Vec<u32> = il
        .chunks_exact(4)
        .map(|c| {
            let b = [c[0], c[1], c[2], c[3]];
            if big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        })
        .collect();
    let mut i = 5;
    while let Some(&w) = words.get(i) {
        let (count, op) = ((w >> 16) as usize, w & 0xffff);
        if op == OP_MEMORY_MODEL {
            if words.get(i + 1) == Some(&PHYSICAL64) {
                return vec!["-arch=spir64".into()];
            }
            break;
        }
        i += count.max(1);
    }
    vec![]
}

/// Translates an OpenCL SPIR-V module to LLVM bitcode; Err holds the translator's message (the
/// module is malformed or uses something the translator does not know).
pub fn to_bitcode(il: &[u8]) -> Result<Vec<u8>, String> {
    let tool = translator().ok_or_else(|| {
        "no SPIR-V translator found (install Debian's llvm-spirv-15 or set VKCL_LLVM_SPIRV)"
            .to_string()
    })?;
    let cache = crate::cache::get();
    let key = crate::cache::key(&[b"llvm-spirv-1", tool.as_os_str().as_encoded_bytes(), il]);
    if let Some(hit) = cache.and_then(|c| c.load("llvm-spirv", &key)) {
        return Ok(hit);
    }
    let dir = TempDir::new().map_err(|e| format!("temporary directory: {e}"))?;
    let (input, output) = (dir.0.join("in.spv"), dir.0.join("out.bc"));
    std::fs::write(&input, il).map_err(|e| format!("{}: {e}", input.display()))?;
    let run = Command::new(&tool)
        .arg("-r")
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .map_err(|e| format!("{}: {e}", tool.display()))?;
    let bitcode = std::fs::read(&output).ok().filter(|_| run.status.success());
    match bitcode {
        Some(bc) if bc.starts_with(b"BC\xc0\xde") => {
            if let Some(c) = cache {
                c.store("llvm-spirv", &key, &bc);
            }
            Ok(bc)
        }
        _ => Err(format!(
            "{} could not translate the module ({}): {}",
            tool.display(),
            run.status,
            String::from_utf8_lossy(&run.stderr).trim()
        )),
    }
}

struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("vkcl-il-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
