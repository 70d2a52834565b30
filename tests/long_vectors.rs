//! Arrays of 8- and 16-component vectors (clspv's `-long-vector` lowers them to arrays) in
//! `__local`, `__constant`, private and buffer memory: a store through a pointer into the array
//! at an index given at run time is seen by later reads of the array, and initialised arrays
//! build and read right. Every byte is compared with a host model.
//!
//! clspv 0.0.1 gives a `__local` (or program-scope) variable of such a type a new variable of
//! the lowered type and leaves the old one to the uses it does not lower (a constant-offset
//! GEP, `a[1]`): the read of `a[1]` after `*p = v` (p = a + 1) was folded to the value stored
//! before. Initialised arrays (a `__constant` table, a private array with an initialiser)
//! crashed clspv (SIGSEGV). compiler::long_vector_globals lowers such variables first.
#[macro_use]
mod common;
use common::*;

fn has_fp64(e: &Env) -> bool {
    device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64")
}

fn pragma(fp64: bool) -> &'static str {
    match fp64 {
        true => "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
        false => "",
    }
}

/// One kernel per type: a `__local`, a buffer's and a private array of two vectors, each
/// filled with constants, then written at `idx` through a pointer, then read whole.
fn pointer_stores_source(types: &[(&str, usize)], fp64: bool) -> String {
    let mut s = pragma(fp64).to_string();
    for &(ty, w) in types {
        let t = format!("{ty}{w}");
        s += &format!(
            "kernel void k_{t}(global {t} *dest, global {t} *buf, global const {t} *src,\n\
             \x20                 uint idx) {{\n\
             \x20   local {t} l[2];\n\
             \x20   l[0] = ({t})(1); l[1] = ({t})(2);\n\
             \x20   local {t} *lp = l + idx;\n\
             \x20   *lp = src[0];\n\
             \x20   dest[0] = l[0]; dest[1] = l[1];\n\
             \x20   buf[0] = ({t})(3); buf[1] = ({t})(4);\n\
             \x20   global {t} *bp = buf + idx;\n\
             \x20   *bp = src[1];\n\
             \x20   dest[2] = buf[0]; dest[3] = buf[1];\n\
             \x20   {t} pr[2];\n\
             \x20   pr[0] = ({t})(5); pr[1] = ({t})(6);\n\
             \x20   {t} *pp = pr + idx;\n\
             \x20   *pp = src[2];\n\
             \x20   dest[4] = pr[0]; dest[5] = pr[1];\n\
             }}\n"
        );
    }
    s
}

/// `a[0] = x; a[1] = y; p = a + idx; *p = v; read a[0], a[1]` for `__local` arrays (which
/// lost the store for the read of `a[1]`), buffers and private arrays, idx 0 and 1.
#[test]
fn stores_through_pointers_into_arrays_of_long_vectors() {
    let e = Env::new();
    let fp64 = has_fp64(&e);
    let types = long_vector_types(fp64);
    let p = e.program(&pointer_stores_source(&types, fp64), "");
    for &(ty, w) in &types {
        let t = format!("{ty}{w}");
        let k = kernel(p, &format!("k_{t}"));
        let size = component(ty, 0).len() * w;
        let src: Vec<u8> = [100, 50, 20]
            .iter()
            .flat_map(|&base| vector(ty, w, |c| base + c))
            .collect();
        let src_buf = e.buffer_from(&src);
        let buf = e.buffer_from(&vec![0u8; 2 * size]);
        let dest = e.buffer_from(&vec![0u8; 6 * size]);
        arg(k, 0, &dest);
        arg(k, 1, &buf);
        arg(k, 2, &src_buf);
        for idx in 0u32..2 {
            arg(k, 3, &idx);
            e.run(k, None, &[1], Some(&[1]));
            let mut want = vec![];
            for (pair, stored) in [(1, 0), (3, 1), (5, 2)] {
                for i in 0..2 {
                    want.extend(match i == idx as i64 {
                        true => src[stored * size..(stored + 1) * size].to_vec(),
                        false => vector(ty, w, |_| pair + i),
                    });
                }
            }
            let got = e.read::<u8>(dest, 6 * size);
            for (n, what) in ["local", "buffer", "private"].iter().enumerate() {
                let r = 2 * n * size..2 * (n + 1) * size;
                assert_eq!(got[r.clone()], want[r], "{t} idx {idx}: the {what} array");
            }
        }
        check!(clReleaseMemObject(src_buf));
        check!(clReleaseMemObject(buf));
        check!(clReleaseMemObject(dest));
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
}

/// One kernel per type: a `__constant` table and a private array, both initialised, read at
/// a run-time index, and a private struct holding one, initialised.
fn initialised_source(types: &[(&str, usize)], fp64: bool) -> String {
    let mut s = pragma(fp64).to_string();
    for &(ty, w) in types {
        let t = format!("{ty}{w}");
        let (c1, p1, m) = (
            literal(ty, w, |c| 10 + c),
            literal(ty, w, |c| 30 + c),
            literal(ty, w, |c| 60 - c),
        );
        s += &format!(
            "constant {t} c_{t}[2] = {{ ({t})(1), {c1} }};\n\
             typedef struct {{ char c; {t} v; }} s_{t};\n\
             kernel void i_{t}(global {t} *dest, global char *tag, uint idx) {{\n\
             \x20   {t} pa[2] = {{ ({t})(2), {p1} }};\n\
             \x20   s_{t} ps = {{ 7, {m} }};\n\
             \x20   dest[0] = c_{t}[idx]; dest[1] = pa[idx]; dest[2] = ps.v;\n\
             \x20   tag[0] = ps.c;\n\
             }}\n"
        );
    }
    s
}

/// Initialised `__constant` and private arrays of long vectors and a private struct holding
/// one (clspv crashed on all three), read at run-time indices.
#[test]
fn initialised_constant_and_private_long_vector_arrays() {
    let e = Env::new();
    let fp64 = has_fp64(&e);
    let types = long_vector_types(fp64);
    let p = e.program(&initialised_source(&types, fp64), "");
    for &(ty, w) in &types {
        let t = format!("{ty}{w}");
        let k = kernel(p, &format!("i_{t}"));
        let size = component(ty, 0).len() * w;
        let dest = e.buffer_from(&vec![0u8; 3 * size]);
        let tag = e.buffer_from(&[0u8; 1]);
        arg(k, 0, &dest);
        arg(k, 1, &tag);
        for idx in 0u32..2 {
            arg(k, 2, &idx);
            e.run(k, None, &[1], None);
            let mut want = match idx {
                0 => [vector(ty, w, |_| 1), vector(ty, w, |_| 2)].concat(),
                _ => [vector(ty, w, |c| 10 + c), vector(ty, w, |c| 30 + c)].concat(),
            };
            want.extend(vector(ty, w, |c| 60 - c));
            assert_eq!(e.read::<u8>(dest, 3 * size), want, "{t} idx {idx}");
            assert_eq!(e.read::<u8>(tag, 1), [7], "{t}");
        }
        check!(clReleaseMemObject(dest));
        check!(clReleaseMemObject(tag));
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(p));
}
