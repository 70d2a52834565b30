//! Whole-struct copies between `__local`, `__global` and private memory (issue 15 item 8,
//! pyopencl's radix-sort scan kernels). clspv 0.0.1 never finished building a copy between a
//! record and its only member (`struct w { scan_t v; }`, `t = l[k][i].v`), and stored every
//! `out[base + off] = l[off % 128][off / 128]` of a scan to `out[0]`; compiler::wrapped_copy
//! turns such copies into typed loads and stores before clspv's passes. Each kernel is checked
//! against a host reference.
#[macro_use]
mod common;
use common::*;
use std::time::{Duration, Instant};

const SCAN_T: &str = r#"
typedef struct { int c00, c01, c10, c11; } scan_t;
scan_t add(scan_t a, scan_t b) {
  b.c00 += a.c00; b.c01 += a.c01; b.c10 += a.c10; b.c11 += a.c11; return b; }
scan_t from(int key) {
  scan_t r; r.c00 = (key & 3) == 0; r.c01 = (key & 3) == 1; r.c10 = (key & 3) == 2;
  r.c11 = (key & 3) == 3; return r; }
"#;

/// pyopencl's scan shape: one group of 8 scans 128 elements per work-item in a `__local`
/// `[129][9]` array of single-member wrappers, carries the last column into element [0][0],
/// and writes every element back.
const WRAPPED: &str = r#"
struct wrapped { scan_t v; };
__kernel __attribute__((reqd_work_group_size(8, 1, 1)))
void k(__global const int *ary, __global scan_t *out, __global struct wrapped *whole) {
  __local struct wrapped l[129][9];
  const int lid = get_local_id(0);
  for (int k = 0; k < 128; k++) {
    int off = k * 8 + lid;
    l[off % 128][off / 128].v = from(ary[off]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  scan_t sum = l[0][lid].v;
  for (int k = 1; k < 128; k++) { scan_t t = l[k][lid].v; sum = add(sum, t); l[k][lid].v = sum; }
  l[128][lid].v = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) { scan_t c = l[128][7].v; scan_t first = l[0][0].v; l[0][0].v = add(c, first); }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = 0; k < 128; k++) {
    int off = k * 8 + lid;
    out[off] = l[off % 128][off / 128].v;
    whole[off] = l[off % 128][off / 128];
  }
}
"#;

/// The keys, their one-hot bins, and the inclusive scan of the bins over each run of 128.
fn reference(n: usize) -> (Vec<i32>, Vec<[i32; 4]>) {
    let keys: Vec<i32> = (0..n as i32).map(|i| (i * 7) % 11).collect();
    let mut scan = vec![[0i32; 4]; n];
    for (j, key) in keys.iter().enumerate() {
        if j % 128 != 0 {
            scan[j] = scan[j - 1];
        }
        scan[j][(key & 3) as usize] += 1;
    }
    (keys, scan)
}

fn words(v: &[i32]) -> Vec<[i32; 4]> {
    v.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
}

#[test]
fn copies_between_a_local_wrapper_and_its_member_build_and_are_right() {
    let env = Env::new();
    let start = Instant::now();
    let p = env.program(&format!("{SCAN_T}{WRAPPED}"), "");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(30), "build took {took:?}");
    let k = kernel(p, "k");
    let (keys, mut want) = reference(1024);
    // The carry: element [0][0] (offset 0) gets the last column's total added.
    let last = want[1023];
    for (w, l) in want[0].iter_mut().zip(last) {
        *w += l;
    }
    let ary = env.buffer_from(&keys);
    let out = env.buffer_from(&vec![-1i32; 4096]);
    let whole = env.buffer_from(&vec![-1i32; 4096]);
    arg(k, 0, &ary);
    arg(k, 1, &out);
    arg(k, 2, &whole);
    env.run(k, None, &[8], Some(&[8]));
    assert_eq!(words(&env.read::<i32>(out, 4096)), want);
    assert_eq!(words(&env.read::<i32>(whole, 4096)), want);
    unsafe {
        for m in [ary, out, whole] {
            clReleaseMemObject(m);
        }
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}

/// pyopencl's last partial unit: struct copies from a `__local` array to `out[base + off]`
/// under a bound, then the interval's total read back from the buffer. clspv's own lowering
/// of those copies stored all of them to `out[0]`.
const PARTIAL_UNIT: &str = r#"
__kernel __attribute__((reqd_work_group_size(8, 1, 1)))
void k(__global const int *ary, __global scan_t *restrict out, const int n, const int size,
       __global scan_t *restrict totals) {
  __local scan_t l[129][9];
  const int lid = get_local_id(0);
  const int begin = size * (int)get_group_id(0);
  const int end = min(begin + size, n);
  int base = begin;
  if (base < end) {
    for (int k = 0; k < 128; k++) {
      int off = k * 8 + lid;
      if (base + off < end) l[off % 128][off / 128] = from(ary[base + off]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    scan_t sum = l[0][lid];
    const int off_end = end - base;
    for (int k = 1; k < 128; k++)
      if (128 * lid + k < off_end) { scan_t t = l[k][lid]; sum = add(sum, t); l[k][lid] = sum; }
    l[128][lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < 128; k++) {
      int off = k * 8 + lid;
      if (base + off < end) out[base + off] = l[off % 128][off / 128];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) totals[get_group_id(0)] = out[end - 1];
}
"#;

#[test]
fn struct_copies_from_local_to_global_under_a_bound() {
    let env = Env::new();
    let p = env.program(&format!("{SCAN_T}{PARTIAL_UNIT}"), "");
    let k = kernel(p, "k");
    let n = 1000usize;
    let (keys, want) = reference(n);
    let ary = env.buffer_from(&keys);
    let out = env.buffer_from(&vec![-1i32; 4 * n]);
    let totals = env.buffer_from(&[-1i32; 4]);
    arg(k, 0, &ary);
    arg(k, 1, &out);
    arg(k, 2, &(n as i32));
    arg(k, 3, &2048i32);
    arg(k, 4, &totals);
    env.run(k, None, &[8], Some(&[8]));
    assert_eq!(words(&env.read::<i32>(out, 4 * n)), want);
    assert_eq!(words(&env.read::<i32>(totals, 4)), vec![want[n - 1]]);
    unsafe {
        for m in [ary, out, totals] {
            clReleaseMemObject(m);
        }
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}

/// ffmpeg's deshake_opencl filter (`match_descriptors`): a record with padding
/// (`{ float2, float2 }` and an int: 20 bytes of members, 24 of size) made as a compound
/// literal, copied from a constant, passed by value to a helper that stores it, inside a loop
/// that returns early. clspv 0.0.1 never finished building it (a whole-record load or store of
/// such a record, or its `byval` parameter); compiler::wrapped_copy copies padded records
/// member by member and passes them to helpers by pointer. The build must finish (it ran past
/// ffmpeg's patience before) and every record be stored right.
const MOTION: &str = r#"
typedef struct PointPair { float2 p1; float2 p2; } PointPair;
typedef struct MotionVector { PointPair p; int should_consider; } MotionVector;
static void write_vec(global MotionVector *buf, int i, MotionVector val) { buf[i] = val; }
kernel void match(global const float2 *prev, global const float2 *cur, global const int *dist,
                  global MotionVector *out) {
    int i = get_global_id(0);
    MotionVector invalid_vector = (MotionVector) { (PointPair) { (float2)(-1, -1), (float2)(-1, -1) }, 0 };
    for (int j = 0; j < 4; j++) {
        if (dist[4 * i + j] < 80) {
            write_vec(out, i, (MotionVector) { (PointPair) { prev[4 * i + j], cur[i] }, 1 });
            return;
        }
    }
    write_vec(out, i, invalid_vector);
}
"#;

#[test]
fn padded_records_by_value_and_from_constants_build_and_are_right() {
    let env = Env::new();
    let start = Instant::now();
    let p = env.program(MOTION, "");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(60), "the build took {took:?}");
    let k = kernel(p, "match");
    let n = 64usize;
    let prev: Vec<[f32; 2]> = (0..4 * n).map(|j| [j as f32, -(j as f32)]).collect();
    let cur: Vec<[f32; 2]> = (0..n).map(|i| [0.5 + i as f32, 2.0 * i as f32]).collect();
    // Work-item i matches its (i % 5)-th candidate; 4 and up: none.
    let dist: Vec<i32> = (0..4 * n as i32)
        .map(|j| if j % 4 == (j / 4) % 5 { 10 } else { 99 })
        .collect();
    let bufs = [
        env.buffer_from(&prev),
        env.buffer_from(&cur),
        env.buffer_from(&dist),
    ];
    // MotionVector: p1 (8 bytes), p2 (8), should_consider (4), 4 bytes of padding.
    let out = env.buffer_from(&vec![0x7f7f_7f7fu32; 6 * n]);
    for (i, b) in bufs.iter().enumerate() {
        arg(k, i as u32, b);
    }
    arg(k, 3, &out);
    env.run(k, None, &[n], None);
    let got = env.read::<u32>(out, 6 * n);
    for i in 0..n {
        let want: [f32; 4] = match i % 5 {
            4 => [-1.0; 4],
            j => [prev[4 * i + j][0], prev[4 * i + j][1], cur[i][0], cur[i][1]],
        };
        let record = &got[6 * i..6 * i + 5];
        let floats: Vec<f32> = record[..4].iter().map(|w| f32::from_bits(*w)).collect();
        assert_eq!(floats, want, "work-item {i}");
        assert_eq!(record[4], u32::from(i % 5 != 4), "work-item {i}");
    }
    unsafe {
        for m in bufs.into_iter().chain([out]) {
            clReleaseMemObject(m);
        }
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
}
