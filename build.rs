// Build script: only the vkcl-clspv helper needs anything.
//
// The helper dlopens the pyclspv shared object, whose undefined CPython symbols it defines itself
// (src/compiler/pystubs.rs). Executables do not export their symbols by default, so ask the linker
// to export exactly those names; the ICD library and test binaries are unaffected.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
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
