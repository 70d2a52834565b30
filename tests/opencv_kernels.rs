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

/// OpenCV's `imgproc/boxFilter` (cv::blur) reads each source pixel through `readSrcPixel`: a
/// load at the pixel when it is inside the image, else a load at the border-extrapolated pixel,
/// whose index comes from min/max (BORDER_REPLICATE) or a loop (BORDER_REFLECT_101, OpenCV's
/// default), which LLVM does not speculate. LLVM merges the two loads into one load through a
/// phi of the two addresses; StructurizeCFG turns the if/else into two ifs in sequence, giving
/// that phi a poison input on the path around the else; clspv's SPIR-V producer cannot type a
/// poison pointer and crashes (SIGSEGV, "Missing inferred type": clspv issue 1563). The same
/// crash as CLBlast's SYMM (tests/clspv_fixes.rs `load_chosen_between_transposed_indices`).
/// No clspv or LLVM option avoids it (tried: -cl-opt-disable, -O0..-O3, every -hack-*,
/// SimplifyCFG's sinking, hoisting and speculation thresholds, InstCombine's limits, physical
/// addressing; `-structurizecfg-skip-uniform-regions` compiles it but emits unstructured SPIR-V
/// that spirv-val rejects). This assignment form builds since `compiler::chosen_load` reads
/// one element at a chosen index instead; ci/expectations/opencv.txt lists the OpenCV cases.
#[test]
fn load_in_both_arms_with_a_clamped_index() {
    const SRC: &str = r#"
__kernel void k(__global const int *p, int w, int h, __global int *dst)
{
    int x = (int)get_global_id(0) - 2, y = (int)get_global_id(1) - 2;
    int v;
    if (x >= 0 && y >= 0 && x < w && y < h)
        v = p[y * w + x];
    else
        v = p[clamp(y, 0, h - 1) * w + clamp(x, 0, w - 1)];
    dst[get_global_id(1) * get_global_size(0) + get_global_id(0)] = v;
}
"#;
    clamped_reads(SRC);
}

/// OpenCV's own shape of it (imgproc/boxFilter's `readSrcPixel`): a helper returning a load from
/// each arm, the else arm's index clamped. Builds since `compiler::returned_load` fences the
/// else arm's load in that arm.
#[test]
fn loads_returned_from_both_arms_with_a_clamped_index() {
    const SRC: &str = r#"
inline int read_px(int x, int y, __global const int *p, int w, int h)
{
    if (x >= 0 && y >= 0 && x < w && y < h) {
        int i = y * w + x;
        return p[i];
    } else {
        int cx = max(min(x, w - 1), 0), cy = max(min(y, h - 1), 0);
        int i = cy * w + cx;
        return p[i];
    }
}
__kernel void k(__global const int *p, int w, int h, __global int *dst)
{
    int x = (int)get_global_id(0) - 2, y = (int)get_global_id(1) - 2;
    dst[get_global_id(1) * get_global_size(0) + get_global_id(0)] = read_px(x, y, p, w, h);
}
"#;
    clamped_reads(SRC);
}

/// Runs `src`'s kernel `k` over a 7x5 image with a 2-texel border: each item reads its texel,
/// clamped into the image, checked against the host.
fn clamped_reads(src: &str) {
    const W: usize = 7;
    const H: usize = 5;
    let (gw, gh) = (W + 4, H + 4);
    let e = Env::new();
    let p = e.program(src, "");
    let k = kernel(p, "k");
    let data: Vec<i32> = (0..(W * H) as i32).map(|i| 100 + i).collect();
    let src = e.buffer_from(&data);
    let dst = e.buffer_from(&vec![0i32; gw * gh]);
    arg(k, 0, &src);
    arg(k, 1, &(W as i32));
    arg(k, 2, &(H as i32));
    arg(k, 3, &dst);
    e.run(k, None, &[gw, gh], None);
    let want: Vec<i32> = (0..gw * gh)
        .map(|g| {
            let x = ((g % gw) as i32 - 2).clamp(0, W as i32 - 1);
            let y = ((g / gw) as i32 - 2).clamp(0, H as i32 - 1);
            data[y as usize * W + x as usize]
        })
        .collect();
    assert_eq!(e.read::<i32>(dst, gw * gh), want);
    check!(clReleaseMemObject(src));
    check!(clReleaseMemObject(dst));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// boxFilter's `readSrcPixel` as OpenCV writes it: the load behind macros, the border rule and
/// the if's condition chosen by `#ifdef`s inside the arms, the else arm's pixel found by a loop
/// (BORDER_REFLECT_101, OpenCV's default) or by min/max (BORDER_REPLICATE), bytes widened to
/// int. clspv crashed (SIGSEGV) on both before `compiler::returned_load`.
#[test]
fn border_pixels_returned_through_macros_and_directives() {
    const SRC: &str = r#"
#define loadpix(addr) *(__global const ST *)(addr)
#ifdef BORDER_REPLICATE
#define EXTRAPOLATE(x, maxX) { x = max(min(x, maxX - 1), 0); }
#else
#define EXTRAPOLATE(x, maxX) \
    { do { if (x < 0) x = -x; else x = maxX - 1 - (x - maxX) - 1; } while (x >= maxX || x < 0); }
#endif
#define PROCESS(v) (v)
inline WT read_px(int2 pos, __global const uchar *p, int step, int w, int h)
{
#ifdef ISOLATED
    if (pos.x >= 1 && pos.y >= 1 && pos.x < w && pos.y < h)
#else
    if (pos.x >= 0 && pos.y >= 0 && pos.x < w && pos.y < h)
#endif
    {
        int i = mad24(pos.y, step, pos.x * (int)sizeof(ST));
        WT value = convertToWT(loadpix(p + i));
        return PROCESS(value);
    }
    else
    {
#ifdef BORDER_CONSTANT
        return (WT)(0);
#else
        int c = pos.x, r = pos.y;
        EXTRAPOLATE(c, w);
        EXTRAPOLATE(r, h);
        int i = mad24(r, step, c * (int)sizeof(ST));
        WT value = convertToWT(loadpix(p + i));
        return PROCESS(value);
#endif
    }
}
__kernel void k(__global const uchar *p, int w, int h, __global int *dst)
{
    int2 pos = (int2)((int)get_global_id(0) - 3, (int)get_global_id(1) - 3);
    dst[get_global_id(1) * get_global_size(0) + get_global_id(0)] = read_px(pos, p, w, w, h);
}
"#;
    const W: usize = 5;
    const H: usize = 4;
    const B: usize = 3; // border texels on each side
    let (gw, gh) = (W + 2 * B, H + 2 * B);
    let data: Vec<u8> = (0..(W * H) as u8).map(|i| 200 + i).collect();
    let replicate = |x: i32, n: i32| x.clamp(0, n - 1);
    let reflect_101 = |mut x: i32, n: i32| {
        while !(0..n).contains(&x) {
            x = if x < 0 { -x } else { 2 * n - 2 - x };
        }
        x
    };
    let e = Env::new();
    for (border, rule) in [
        ("BORDER_REPLICATE", &replicate as &dyn Fn(i32, i32) -> i32),
        ("BORDER_REFLECT_101", &reflect_101),
    ] {
        let opts = format!("-D {border} -D ST=uchar -D WT=int -D convertToWT=convert_int");
        let p = e.program(SRC, &opts);
        let k = kernel(p, "k");
        let src = e.buffer_from(&data);
        let dst = e.buffer_from(&vec![-1i32; gw * gh]);
        arg(k, 0, &src);
        arg(k, 1, &(W as i32));
        arg(k, 2, &(H as i32));
        arg(k, 3, &dst);
        e.run(k, None, &[gw, gh], None);
        let want: Vec<i32> = (0..gw * gh)
            .map(|g| {
                let x = rule((g % gw) as i32 - B as i32, W as i32) as usize;
                let y = rule((g / gw) as i32 - B as i32, H as i32) as usize;
                data[y * W + x] as i32
            })
            .collect();
        assert_eq!(e.read::<i32>(dst, gw * gh), want, "{border}");
        check!(clReleaseMemObject(src));
        check!(clReleaseMemObject(dst));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
    }
}
