//! LLVM options that keep clspv's optimiser away from constructs its SPIR-V producer cannot
//! emit.
//!
//! LLVM's loop vectoriser guards a vectorised (or interleaved) loop with run-time checks. The
//! SCEV checks (that a pointer induction does not wrap) compare pointers (`icmp ult ptr`), which
//! logical-addressing SPIR-V cannot express: clspv reports "Pointer comparisons not supported
//! prior to SPIR-V 1.4" (at 1.4 and later it says nothing) and then crashes in its SPIR-V
//! producer with SIGSEGV. OpenCV's `core/fft` kernels (the DFT that `cv::dft` and
//! `cv::matchTemplate` use) hit it with a strided store loop,
//! `for (i = x; i < n; i += block) dst[i] = ...`, through a pointer cast from a `uchar*`
//! argument plus an offset (tests/opencv_kernels.rs). With the threshold at 0 the vectoriser
//! leaves the loops that would need such checks scalar, which on a SIMT device costs little;
//! loops it can vectorise without them are unchanged.
//!
//! The option is LLVM's own (`LoopVectorize.cpp`), not clspv's; the clspv library vkcl loads
//! accepts it (an option it did not know would make clspv exit, ending the helper process).

/// Appended to clspv's arguments for every compile (OpenCL C and LLVM IR inputs: the
/// vectoriser runs on both).
pub const ARGS: &[&str] = &["-vectorize-scev-check-threshold=0"];
