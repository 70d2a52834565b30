//! CLBlast's kernel shapes that clspv miscompiles or crashes on, as CLBlast writes them (complex
//! single precision: `real` is float2), each checked against a reference computed here (issue
//! 15; src/compiler/chosen_load.rs and sum_index.rs).
#[macro_use]
mod common;
use common::*;

/// Runs kernel `k` of `src` over `gws` work-items with buffers `bufs` (arguments 0..) then the
/// int arguments `ints`; returns every buffer afterwards.
fn run(src: &str, bufs: &[Vec<f32>], ints: &[i32], gws: usize) -> Vec<Vec<f32>> {
    run_with_buffers(src, "", "k", bufs, ints, gws)
}

/// Floats 0, 1, 2, ...: each says where it is.
fn numbered(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

/// GlobalToLocalDirectA of CLBlast's direct GEMM for CGEMM (VWMD = 2): `realMD` is
/// `struct cfloat2 {real x; real y;}` loaded at `idk*(a_ld/VWMD) + idm + (a_offset/VWMD)`, the
/// same buffer read as `real` (float2) by the scalar path. clspv 0.0.1 dropped a term of the
/// index (CGEMM's direct kernel wrong at k = 64); the parenthesised sum is the same sum to LLVM.
#[test]
fn complex_direct_gemm_vector_load() {
    let src = r#"
typedef float2 real;
typedef struct cfloat2 {real x; real y;} real2;
#define realMD real2
#define VWMD 2
kernel void k(global const realMD *agm, global real *out, int a_ld, int a_offset, int paren) {
  int i = get_global_id(0);
  int idm = i % 8, idk = i / 8;
  if (a_ld % VWMD == 0 && a_offset % VWMD == 0) {
    realMD avec;
    if (paren) avec = agm[((idk*(a_ld/VWMD))) + ((idm) + (a_offset/VWMD))];
    else avec = agm[idk*(a_ld/VWMD) + idm + (a_offset/VWMD)];
    out[2 * i] = avec.x;
    out[2 * i + 1] = avec.y;
  } else {
    const __global real* restrict agms = (const __global real* restrict) agm;
    out[i] = agms[idk * a_ld + idm + a_offset];
  }
}
"#;
    let (ld, off) = (32, 6);
    for paren in [0, 1] {
        let out = run(
            src,
            &[numbered(4096), vec![0.0; 512]],
            &[ld, off, paren],
            64,
        );
        let want: Vec<f32> = (0..64)
            .flat_map(|i| {
                let s = (i / 8) * (ld / 2) + i % 8 + off / 2;
                (0..4).map(move |w| (4 * s + w) as f32)
            })
            .collect();
        assert_eq!(out[1][..256], want[..], "paren {paren}");
    }
}

/// SymmLowerToSquared of CLBlast's SYMM for CSYMM, as written there (braced branches, each one
/// load of `src`): clspv 0.0.1 crashed (SIGSEGV) on it.
#[test]
fn complex_symm_lower_to_squared() {
    let src = r#"
typedef float2 real;
kernel void k(global const real *src, global real *dest, int src_dim, int src_ld,
              int src_offset) {
  const int id_one = get_global_id(0) % 16, id_two = get_global_id(0) / 16;
  real result = (real)(0.0f, 0.0f);
  if (id_two < src_dim && id_one < src_dim) {
    if (id_two <= id_one) { result = src[id_two*src_ld + id_one + src_offset]; }
    else                  { result = src[id_one*src_ld + id_two + src_offset]; }
  }
  dest[id_two*16 + id_one] = result;
}
"#;
    let (dim, ld, off) = (12, 16, 3);
    let out = run(src, &[numbered(1024), vec![0.0; 512]], &[dim, ld, off], 256);
    let want: Vec<f32> = (0..256)
        .flat_map(|g| {
            let (one, two) = (g % 16, g / 16);
            let at = match (one < dim && two < dim, two <= one) {
                (false, _) => None,
                (true, true) => Some(two * ld + one + off),
                (true, false) => Some(one * ld + two + off),
            };
            [0, 1].map(|c| at.map_or(0.0, |a| (2 * a + c) as f32))
        })
        .collect();
    assert_eq!(out[1], want);
}
