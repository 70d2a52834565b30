// vkcl-clspv: the compiler helper process the vkcl ICD starts (see src/compiler/helper.rs).
// It loads clspv and answers compile requests on stdin/stdout, so a crash in clspv or LLVM ends
// this process, never the OpenCL application.

// The CPython names that the pyclspv build of clspv leaves undefined, defined and exported here
// (build.rs) so clspv loads with no libpython.
vkcl::define_python_stubs!();

fn main() {
    // Run as `vkcl-info` (a link to this file) or with --info: the diagnostics report.
    let mut args = std::env::args();
    let called = args.next().unwrap_or_default();
    if called.ends_with("vkcl-info") || args.next().as_deref() == Some("--info") {
        std::process::exit(vkcl::diagnostics::print());
    }
    std::process::exit(vkcl::compiler::helper::serve());
}
