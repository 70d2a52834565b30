//! Packed structs in `__local` and private memory, in the shape of pyopencl's scan on GPUs
//! (`struct __attribute__((packed)) { T value; int dummy; }` in a padded 2D local array), with
//! 64-bit members whose both words matter and local memory dirtied by an earlier launch
//! (lavapipe zeroes fresh local memory; GPUs keep what an earlier dispatch left there).
#[macro_use]
mod common;
use common::*;

const SOURCE: &str = r#"
#define K 8
#define WG 16
struct __attribute__((packed)) wrapped { T value; int dummy; };

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void dirty(__global ulong *out) {
    __local ulong junk[(K + 1) * (WG + 1) * 2];
    int l = get_local_id(0);
    for (int i = l; i < (K + 1) * (WG + 1) * 2; i += WG)
        junk[i] = 0xdeadbeefcafef00dUL ^ i;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = junk[(l * 7) % ((K + 1) * (WG + 1) * 2)];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void local_transpose(__global const T *in, __global T *out) {
    __local struct wrapped d[K + 1][WG + 1];
    int l = get_local_id(0);
    for (int k = 0; k < K; k++) {
        int o = k * WG + l;
        d[o % K][o / K].value = in[o];
        d[o % K][o / K].dummy = o;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < K; k++) {
        int o = k * WG + l;
        int r = (o + 1) % (K * WG);
        out[o] = d[r % K][r / K].value + (T)d[r % K][r / K].dummy;
    }
}

__kernel void private_array(__global const T *in, __global T *out) {
    int i = get_global_id(0);
    struct wrapped p[4];
    for (int j = 0; j < 4; j++) {
        p[j].value = in[(i + j) % (K * WG)];
        p[j].dummy = j;
    }
    T sum = 0;
    for (int j = 0; j < 4; j++)
        sum += p[(j + i) % 4].value * (T)(p[(j + i) % 4].dummy + 1);
    out[i] = sum;
}
"#;

const N: usize = 8 * 16;

/// Runs the three kernels with T = `ty` over `input`; returns (local_transpose, private_array).
fn run<T: Copy + Default>(e: &Env, ty: &str, input: &[T]) -> (Vec<T>, Vec<T>) {
    let p = e.program(SOURCE, &format!("-DT={ty}"));
    let junk = e.buffer(CL_MEM_READ_WRITE, 16 * 8, std::ptr::null_mut());
    let inp = e.buffer_from(input);
    let out = e.buffer(CL_MEM_READ_WRITE, N * 8, std::ptr::null_mut());
    let dirty = kernel(p, "dirty");
    arg(dirty, 0, &junk);
    e.run(dirty, None, &[16], Some(&[16]));
    let transpose = kernel(p, "local_transpose");
    arg(transpose, 0, &inp);
    arg(transpose, 1, &out);
    e.run(transpose, None, &[16], Some(&[16]));
    let local = e.read::<T>(out, N);
    let private = kernel(p, "private_array");
    arg(private, 0, &inp);
    arg(private, 1, &out);
    e.run(private, None, &[N], None);
    let private_out = e.read::<T>(out, N);
    unsafe {
        for k in [dirty, transpose, private] {
            clReleaseKernel(k);
        }
        for m in [junk, inp, out] {
            clReleaseMemObject(m);
        }
        clReleaseProgram(p);
    }
    (local, private_out)
}

/// What the kernels compute, in u64 arithmetic modulo 2^64 (the same for long and ulong).
fn expected(input: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let local = (0..N)
        .map(|o| {
            let r = (o + 1) % N;
            input[r].wrapping_add(r as u64)
        })
        .collect();
    let private = (0..N)
        .map(|i| {
            (0..4).fold(0u64, |sum, j| {
                let slot = (j + i) % 4;
                let value = input[(i + slot) % N];
                sum.wrapping_add(value.wrapping_mul(slot as u64 + 1))
            })
        })
        .collect();
    (local, private)
}

/// Both words of every value differ from zero and from each other.
fn integer_input() -> Vec<u64> {
    (0..N as u64)
        .map(|i| (i + 1) * 0x0000_0001_0000_0001 + (i << 40))
        .collect()
}

#[test]
fn packed_64_bit_integer_members_in_local_memory() {
    let e = Env::new();
    let input = integer_input();
    for ty in ["ulong", "long"] {
        assert_eq!(run(&e, ty, &input).0, expected(&input).0, "{ty}");
    }
}

/// clspv read the 8-byte member of element s of the private array at word 2s instead of 3s
/// (lavapipe and every device) before `compiler::packed_private`.
#[test]
fn packed_64_bit_integer_members_in_private_memory() {
    let e = Env::new();
    let input = integer_input();
    for ty in ["ulong", "long"] {
        assert_eq!(run(&e, ty, &input).1, expected(&input).1, "{ty}");
    }
}

/// (input, local_transpose's result, private_array's result) for T = double: exactly
/// representable sums and products (small integers times powers of two).
fn double_case() -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let input: Vec<f64> = (0..N).map(|i| (i as f64 + 0.5) * 2f64.powi(33)).collect();
    let local = (0..N)
        .map(|o| {
            let r = (o + 1) % N;
            input[r] + r as f64
        })
        .collect();
    let private = (0..N)
        .map(|i| {
            (0..4).fold(0.0, |sum, j| {
                let slot = (j + i) % 4;
                sum + input[(i + slot) % N] * (slot as f64 + 1.0)
            })
        })
        .collect();
    (input, local, private)
}

fn has_fp64(e: &Env) -> bool {
    let yes = device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64");
    if !yes {
        eprintln!("no cl_khr_fp64: no double case");
    }
    yes
}

#[test]
fn packed_double_members_in_local_memory() {
    let e = Env::new();
    if has_fp64(&e) {
        let (input, local, _) = double_case();
        assert_eq!(run(&e, "double", &input).0, local);
    }
}

/// As `packed_64_bit_integer_members_in_private_memory`, with doubles.
#[test]
fn packed_double_members_in_private_memory() {
    let e = Env::new();
    if has_fp64(&e) {
        let (input, _, private) = double_case();
        assert_eq!(run(&e, "double", &input).1, private);
    }
}
