//! The constructs of OpenCV's OpenCL kernels that clspv crashed on or compiled wrongly, each as a
//! minimal kernel of our own (issue 15 item 8; ci/opencv.sh runs OpenCV's own kernels). Every
//! test compares the kernel's output with a reference computed here on the host.
#[macro_use]
mod common;
use common::*;

/// OpenCV's `core/fft` (`fft_multi_radix_rows`, the real-input DFT behind `cv::dft` and
/// `cv::matchTemplate`) ends with a strided store loop through a `float2` pointer made from a
/// `uchar*` argument plus a byte offset. LLVM's loop vectoriser guarded that loop with a
/// pointer-wrap check (`icmp ult ptr`), which clspv cannot emit in logical addressing: it
/// crashed with SIGSEGV and the build failed (src/compiler/loop_checks.rs).
#[test]
fn strided_store_loop_through_a_cast_byte_pointer() {
    const SRC: &str = r#"
__kernel void k(__global uchar *dst_ptr, int dst_offset, int n, float v)
{
    int x = get_global_id(0);
    __global float2 *dst = (__global float2 *)(dst_ptr + dst_offset);
#pragma unroll
    for (int i = x; i < n; i += 30)
        dst[i] = (float2)(v, x);
}
"#;
    const BLOCK: usize = 30; // the kernel's stride: its work-items
    const N: usize = 1000;
    const OFFSET: usize = 16; // bytes: two float2 before the output
    let e = Env::new();
    let p = e.program(SRC, "");
    let k = kernel(p, "k");
    let init = vec![f32::NAN; 2 * N + OFFSET / 4 + 8];
    let dst = e.buffer_from(&init);
    arg(k, 0, &dst);
    arg(k, 1, &(OFFSET as i32));
    arg(k, 2, &(N as i32));
    arg(k, 3, &2.5f32);
    e.run(k, None, &[BLOCK], None);
    let out: Vec<f32> = e.read(dst, init.len());
    let skip = OFFSET / 4;
    assert!(
        out[..skip].iter().all(|v| v.is_nan()),
        "wrote before the offset"
    );
    for i in 0..N {
        let got = (out[skip + 2 * i], out[skip + 2 * i + 1]);
        assert_eq!(got, (2.5, (i % BLOCK) as f32), "element {i}");
    }
    assert!(
        out[skip + 2 * N..].iter().all(|v| v.is_nan()),
        "wrote past n"
    );
    check!(clReleaseMemObject(dst));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}
