//! Structs, unions and vectors passed to kernels by value (issue 15 item 2): every member must
//! reach the kernel with the C layout the host used. Each kernel writes back every member it
//! reads (as 32-bit words) and the layout it sees (sizeof, offsetof); the host compares both with
//! the bytes it set, padding filled with 0xAA so that a misplaced read shows.
//!
//! Unions with a struct member before their last one (pyopencl's `cfloat_t`/`cdouble_t`) were
//! refused by clspv's front end before compiler::byval.
#[macro_use]
mod common;
use common::*;

const CL_KERNEL_ARG_TYPE_NAME: cl_uint = 0x1198;
const CL_KERNEL_ARG_NAME: cl_uint = 0x119A;

/// pyopencl's complex types, as pyopencl-complex.h declares them.
const COMPLEX: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef union {
    struct { float x, y; } __attribute__((aligned(4)));
    struct { float real, imag; } __attribute__((aligned(4)));
} cfloat_t;
typedef union {
    struct { double x, y; } __attribute__((aligned(8)));
    struct { double real, imag; } __attribute__((aligned(8)));
} cdouble_t;
#define W(i, v) out[i] = as_uint(v)
#define WD(i, v) do { uint2 w_ = as_uint2(v); out[i] = w_.x; out[(i) + 1] = w_.y; } while (0)
"#;

/// An argument's bytes: `size` bytes of 0xAA with values written at their offsets.
struct Bytes(Vec<u8>);
impl Bytes {
    fn new(size: usize) -> Self {
        Bytes(vec![0xAA; size])
    }
    fn put(mut self, at: usize, v: &[u8]) -> Self {
        self.0[at..at + v.len()].copy_from_slice(v);
        self
    }
    fn f32(self, at: usize, v: f32) -> Self {
        self.put(at, &v.to_le_bytes())
    }
    fn f64(self, at: usize, v: f64) -> Self {
        self.put(at, &v.to_le_bytes())
    }
    fn i32(self, at: usize, v: i32) -> Self {
        self.put(at, &v.to_le_bytes())
    }
    fn i16(self, at: usize, v: i16) -> Self {
        self.put(at, &v.to_le_bytes())
    }
    fn i8(self, at: usize, v: i8) -> Self {
        self.put(at, &v.to_le_bytes())
    }
}

fn cfloat(re: f32, im: f32) -> Bytes {
    Bytes::new(8).f32(0, re).f32(4, im)
}
fn cdouble(re: f64, im: f64) -> Bytes {
    Bytes::new(16).f64(0, re).f64(8, im)
}
fn w(v: f32) -> u32 {
    v.to_bits()
}
fn wd(v: f64) -> [u32; 2] {
    let b = v.to_bits();
    [b as u32, (b >> 32) as u32]
}

/// Builds `src`, runs its kernel `k` once with a `uint` output buffer of `n` words as argument 0
/// and `args` after it (each set with its own size), and returns the buffer.
fn run(src: &str, args: &[Bytes], n: usize) -> Vec<u32> {
    let e = Env::new();
    let p = e.program(src, "");
    let k = kernel(p, "k");
    let out = e.buffer_from(&vec![0xdead_beefu32; n]);
    arg(k, 0, &out);
    for (i, a) in args.iter().enumerate() {
        check!(clSetKernelArg(
            k,
            i as u32 + 1,
            a.0.len(),
            a.0.as_ptr().cast()
        ));
    }
    e.run(k, None, &[1], None);
    let words = e.read::<u32>(out, n);
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    words
}

#[test]
fn complex_float_by_value_then_float_int_and_complex() {
    let src = format!(
        "{COMPLEX}
kernel void k(global uint *out, cfloat_t a, float b, cfloat_t c, int d, const cfloat_t e) {{
    local cfloat_t l[1];
    l[0] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    c = l[0];
    W(0, a.real); W(1, a.imag); W(2, b); W(3, c.x); W(4, c.y); out[5] = d;
    W(6, e.real); W(7, e.imag); out[8] = sizeof(a);
}}"
    );
    let out = run(
        &src,
        &[
            cfloat(1.5, -2.25),
            Bytes::new(4).f32(0, 3.75),
            cfloat(-4.5, 5.125),
            Bytes::new(4).i32(0, -6),
            cfloat(7.0, 8.5),
        ],
        9,
    );
    assert_eq!(
        out,
        [
            w(1.5),
            w(-2.25),
            w(3.75),
            w(-4.5),
            w(5.125),
            -6i32 as u32,
            w(7.0),
            w(8.5),
            8
        ]
    );
}

#[test]
fn complex_double_by_value_then_float_int_and_complex() {
    let src = format!(
        "{COMPLEX}
kernel void k(global uint *out, cdouble_t a, float b, cdouble_t c, int d, cfloat_t e) {{
    WD(0, a.real); WD(2, a.imag); W(4, b); WD(5, c.x); WD(7, c.y); out[9] = d;
    W(10, e.real); W(11, e.imag); out[12] = sizeof(a);
}}"
    );
    let out = run(
        &src,
        &[
            cdouble(1.0 / 3.0, -2.5e300),
            Bytes::new(4).f32(0, 0.1),
            cdouble(-1e-310, 6.0),
            Bytes::new(4).i32(0, 123456789),
            cfloat(-0.0, 9.5),
        ],
        13,
    );
    let mut want = vec![];
    want.extend(wd(1.0 / 3.0));
    want.extend(wd(-2.5e300));
    want.push(w(0.1));
    want.extend(wd(-1e-310));
    want.extend(wd(6.0));
    want.extend([123456789, w(-0.0), w(9.5), 16]);
    assert_eq!(out, want);
}

/// A program with a refused argument may declare its kernels before defining them, and the
/// argument info still names the application's type.
#[test]
fn complex_by_value_in_a_prototype_keeps_its_name_and_type_name() {
    let src = format!(
        "{COMPLEX}
kernel void k(global uint *out, cfloat_t, float);
kernel void k(global uint *out, cfloat_t a, float b) {{ W(0, a.imag); W(1, b); }}"
    );
    let e = Env::new();
    let p = e.program(&src, "-cl-kernel-arg-info");
    let k = kernel(p, "k");
    let info = |param| {
        let mut size = 0;
        check!(clGetKernelArgInfo(
            k,
            1,
            param,
            0,
            std::ptr::null_mut(),
            &mut size
        ));
        let mut v = vec![0u8; size];
        check!(clGetKernelArgInfo(
            k,
            1,
            param,
            size,
            v.as_mut_ptr().cast(),
            std::ptr::null_mut()
        ));
        bytes_to_string(&v)
    };
    assert_eq!(info(CL_KERNEL_ARG_TYPE_NAME), "cfloat_t");
    assert_eq!(info(CL_KERNEL_ARG_NAME), "a");
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    let out = run(&src, &[cfloat(1.0, 2.0), Bytes::new(4).f32(0, 3.0)], 2);
    assert_eq!(out, [w(2.0), w(3.0)]);
}

/// Unions clspv refuses besides the complex types: an array member first, a union inside a
/// struct, a union of char structs (size 3, alignment 1).
#[test]
fn other_refused_unions_by_value() {
    let src = r#"
typedef union { int a[2]; float2 v; } ua;
/* clspv crashes on a union of a struct { short; char; } and an int, wherever it is (a buffer
   element too): not a by-value matter. */
typedef struct { char tag; union { struct { int s; float c; } p; float2 v; } u; float f; } su;
typedef union { struct { char a, b, c; } s; char d[3]; } uc;
kernel void k(global uint *out, ua x, char pad, su y, uc z, short t) {
    out[0] = x.a[0]; out[1] = as_uint(x.v.y); out[2] = (uint)pad;
    out[3] = (uint)y.tag; out[4] = (uint)y.u.p.s; out[5] = as_uint(y.u.p.c); out[6] = as_uint(y.f);
    out[7] = (uint)z.s.a; out[8] = (uint)z.d[1]; out[9] = (uint)z.s.c; out[10] = (uint)t;
    out[11] = sizeof(su); out[12] = __builtin_offsetof(su, u); out[13] = __builtin_offsetof(su, f); out[14] = sizeof(uc);
}"#;
    let out = run(
        src,
        &[
            Bytes::new(8).i32(0, -7).f32(4, 2.5),
            Bytes::new(1).i8(0, 9),
            Bytes::new(24)
                .i8(0, -3)
                .i32(8, -300)
                .f32(12, 17.5)
                .f32(16, 0.75),
            Bytes::new(3).put(0, &[1, 2, 3]),
            Bytes::new(2).i16(0, 4321),
        ],
        15,
    );
    assert_eq!(
        out,
        [
            -7i32 as u32,
            w(2.5),
            9,
            -3i32 as u32,
            -300i32 as u32,
            w(17.5),
            w(0.75),
            1,
            2,
            3,
            4321,
            24,
            8,
            16,
            3
        ]
    );
}

/// Structs with padding, members in several orders, nested: every member at its C offset.
#[test]
fn structs_with_padding_by_value() {
    let src = r#"
typedef struct { char c; float2 v; int i; } s1;           /* 0, 8, 16; 24 */
typedef struct { short s; char c; float4 f; } s2;         /* 0, 2, 16; 32 */
typedef struct { float4 f; char c; } s3;                  /* 0, 16; 32 */
typedef struct { int i; char c; short s; float2 v; } s4;  /* 0, 4, 6, 8; 16 */
typedef struct { char c; struct { float2 v; short s; } in; int i; } s5; /* 0, 8 (8, 16), 24; 32 */
kernel void k(global uint *out, s1 a, float x, s2 b, char y, s3 c, s4 d, s5 e) {
    out[0] = (uint)a.c; out[1] = as_uint(a.v.x); out[2] = as_uint(a.v.y); out[3] = (uint)a.i;
    out[4] = as_uint(x);
    out[5] = (uint)b.s; out[6] = (uint)b.c; out[7] = as_uint(b.f.x); out[8] = as_uint(b.f.w);
    out[9] = (uint)y;
    out[10] = as_uint(c.f.y); out[11] = (uint)c.c;
    out[12] = (uint)d.i; out[13] = (uint)d.c; out[14] = (uint)d.s; out[15] = as_uint(d.v.y);
    out[16] = (uint)e.c; out[17] = as_uint(e.in.v.x); out[18] = (uint)e.in.s; out[19] = (uint)e.i;
    out[20] = sizeof(s1) | __builtin_offsetof(s1, v) << 8 | __builtin_offsetof(s1, i) << 16;
    out[21] = sizeof(s2) | __builtin_offsetof(s2, c) << 8 | __builtin_offsetof(s2, f) << 16;
    out[22] = sizeof(s3) | __builtin_offsetof(s3, c) << 8;
    out[23] = sizeof(s4) | __builtin_offsetof(s4, s) << 8 | __builtin_offsetof(s4, v) << 16;
    out[24] = sizeof(s5) | __builtin_offsetof(s5, in) << 8 | __builtin_offsetof(s5, i) << 16;
}"#;
    let out = run(
        src,
        &[
            Bytes::new(24)
                .i8(0, -5)
                .f32(8, 1.25)
                .f32(12, -2.5)
                .i32(16, 77),
            Bytes::new(4).f32(0, 3.5),
            Bytes::new(32)
                .i16(0, -1234)
                .i8(2, 42)
                .f32(16, 4.0)
                .f32(20, 5.0)
                .f32(24, 6.0)
                .f32(28, 7.0),
            Bytes::new(1).i8(0, -1),
            Bytes::new(32).f32(0, 8.0).f32(4, 9.0).i8(16, 100),
            Bytes::new(16)
                .i32(0, -99)
                .i8(4, 3)
                .i16(6, 555)
                .f32(8, 10.5)
                .f32(12, 11.5),
            Bytes::new(32)
                .i8(0, 12)
                .f32(8, 13.5)
                .f32(12, 14.5)
                .i16(16, -15)
                .i32(24, 16),
        ],
        25,
    );
    let n = |v: i32| v as u32;
    assert_eq!(
        out,
        [
            n(-5),
            w(1.25),
            w(-2.5),
            77,
            w(3.5),
            n(-1234),
            42,
            w(4.0),
            w(7.0),
            n(-1),
            w(9.0),
            100,
            n(-99),
            3,
            555,
            w(11.5),
            12,
            w(13.5),
            n(-15),
            16,
            24 | 8 << 8 | 16 << 16,
            32 | 2 << 8 | 16 << 16,
            32 | 16 << 8,
            16 | 6 << 8 | 8 << 16,
            32 | 8 << 8 | 24 << 16
        ]
    );
}

#[test]
fn vectors_by_value() {
    let src = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void k(global uint *out, float3 a, char3 b, double2 c, float4 d, char e, short2 f) {
    out[0] = as_uint(a.x); out[1] = as_uint(a.y); out[2] = as_uint(a.z);
    out[3] = (uint)b.x; out[4] = (uint)b.y; out[5] = (uint)b.z;
    uint4 cw = as_uint4(c); out[6] = cw.x; out[7] = cw.y; out[8] = cw.z; out[9] = cw.w;
    out[10] = as_uint(d.x); out[11] = as_uint(d.w); out[12] = (uint)e;
    out[13] = (uint)f.x; out[14] = (uint)f.y;
}"#;
    let out = run(
        src,
        &[
            Bytes::new(16).f32(0, 1.0).f32(4, -2.0).f32(8, 3.5),
            Bytes::new(4).put(0, &[4, 0xFB, 6]),
            Bytes::new(16).f64(0, 0.1).f64(8, -7.25),
            Bytes::new(16)
                .f32(0, 8.0)
                .f32(4, 0.0)
                .f32(8, 0.0)
                .f32(12, 9.0),
            Bytes::new(1).i8(0, 10),
            Bytes::new(4).i16(0, -11).i16(2, 12),
        ],
        15,
    );
    let n = |v: i32| v as u32;
    let (c0, c1) = (wd(0.1), wd(-7.25));
    assert_eq!(
        out,
        [
            w(1.0),
            w(-2.0),
            w(3.5),
            4,
            n(-5),
            6,
            c0[0],
            c0[1],
            c1[0],
            c1[1],
            w(8.0),
            w(9.0),
            10,
            n(-11),
            12
        ]
    );
}

/// pyopencl's own pattern: a complex scalar times an array, the scalar by value after pointers
/// and a long, the array reached through a byte offset. A `global cfloat_t *` parameter is
/// refused too, and the program goes through -rewrite-packed-structs, under which clspv's own
/// lowering of the copy `v = x[i]` read the imaginary part from word 2i + 4 instead of 2i + 1;
/// right since compiler::wrapped_copy turns the copy into a typed load (docs/DECISIONS.md).
#[test]
fn complex_scalar_times_array() {
    let src = format!(
        "{COMPLEX}
kernel void k(global uint *out, global const cfloat_t *x__base, long n, cfloat_t a) {{
    global const cfloat_t *x = (global const cfloat_t *)((global const char *)x__base + 0);
    for (long i = 0; i < n; i++) {{
        cfloat_t v = x[i], r;
        r.real = a.real * v.real - a.imag * v.imag;
        r.imag = a.real * v.imag + a.imag * v.real;
        W(2 * i, r.real); W(2 * i + 1, r.imag);
    }}
}}"
    );
    let e = Env::new();
    let p = e.program(&src, "");
    let k = kernel(p, "k");
    let xs: Vec<f32> = vec![1.0, 2.0, -3.0, 0.5, 4.0, -1.0];
    let x = e.buffer_from(&xs);
    let out = e.buffer_from(&[0u32; 6]);
    arg(k, 0, &out);
    arg(k, 1, &x);
    arg(k, 2, &3i64);
    arg(k, 3, &[2.0f32, -1.0]);
    e.run(k, None, &[1], None);
    let got = e.read::<u32>(out, 6);
    let mut want = vec![];
    for c in xs.chunks(2) {
        want.push(w(2.0 * c[0] - -c[1]));
        want.push(w(2.0 * c[1] + -c[0]));
    }
    assert_eq!(got, want);
    for m in [x, out] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}
