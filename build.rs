// Build script: the vkcl-clspv helper's exported names, and the compiler layer's identity.
//
// The helper dlopens the pyclspv shared object, whose undefined CPython symbols it defines itself
// (src/compiler/pystubs.rs). Executables do not export their symbols by default, so ask the linker
// to export exactly those names; the ICD library and test binaries are unaffected.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    compiler_source_hash();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = !matches!(os.as_str(), "windows" | "macos" | "ios");
    if elf {
        // The ICD exports the cl* names (so it also works linked directly as libOpenCL), and the
        // loader exports the same names. Bind the library's own references (its dispatch table)
        // to its own definitions, or they would resolve to the loader's and recurse forever.
        println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic");
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol=Py*");
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol=_Py*");
    }
}

/// VKCL_COMPILER_SOURCE: an FNV-1a 64 hash of src/compiler (every file's path and bytes, in
/// path order), which shapes the SPIR-V vkcl makes. Program binaries carry it: an executable
/// that an older vkcl compiled is refused and built again from source (src/compiler/binary.rs).
fn compiler_source_hash() {
    println!("cargo:rerun-if-changed=src/compiler");
    let mut files = vec![];
    let mut dirs = vec![std::path::PathBuf::from("src/compiler")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/compiler is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        let bytes = std::fs::read(f).expect("a source file is readable");
        for b in f.to_string_lossy().bytes().chain(bytes) {
            hash = (hash ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=VKCL_COMPILER_SOURCE={hash:016x}");
}
