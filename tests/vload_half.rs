//! `vload_halfN` / `vloada_halfN` from `__local` and `__private` memory (issue 15 item 8,
//! piglit's vload_half-float-local/-private and vloada_half-float-local): every width, at
//! offsets 0 and 1, from a base one half past the array's start and from the start itself.
//! clspv 0.0.1 returned wrong elements for `vload_half16` / `vloada_half16` from `__local` and
//! `vload_half3` / `vload_half16` from `__private`; compiler::vload_half reads those one
//! component at a time.
#[macro_use]
mod common;
use common::*;

/// The half with the integer value `k` (exact below 2048).
fn half_bits(k: u16) -> u16 {
    if k == 0 {
        return 0;
    }
    let e = 15 - k.leading_zeros() as u16;
    ((e + 15) << 10) | ((k << (10 - e)) & 0x3ff)
}

const WIDTHS: [usize; 5] = [2, 3, 4, 8, 16];

/// One kernel per (space, aligned, width): each work-item loads at (offset o, base b) for o, b
/// in {0, 1} and writes the components to out[((o * 2 + b) * 16) + c].
fn source() -> String {
    let mut src = String::new();
    for space in ["local", "private"] {
        for aligned in ["", "a"] {
            for n in WIDTHS {
                let base = if aligned.is_empty() { 1 } else { 4 * n };
                src += &format!(
                    "kernel void k_{space}_{aligned}{n}(global const ushort *in, global float *out) {{\n\
                     volatile {space} ushort loc[160];\n\
                     for (int i = 0; i < 160; ++i) loc[i] = in[i];\n\
                     barrier(CLK_LOCAL_MEM_FENCE);\n\
                     for (int o = 0; o < 2; ++o) for (int b = 0; b < 2; ++b) {{\n\
                       float{n} v = vload{aligned}_half{n}(o, ({space} half *)loc + b * {base});\n\
                       for (int c = 0; c < {n}; ++c) out[(o * 2 + b) * 16 + c] = ((float *)&v)[c];\n\
                     }} }}\n"
                );
            }
        }
    }
    src
}

#[test]
fn vload_half_from_local_and_private_memory() {
    let env = Env::new();
    let p = env.program(&source(), "");
    let halves: Vec<u16> = (0..160).map(|k| half_bits(k + 1)).collect();
    let input = env.buffer_from(&halves);
    let mut wrong = vec![];
    for space in ["local", "private"] {
        for aligned in ["", "a"] {
            for n in WIDTHS {
                let name = format!("k_{space}_{aligned}{n}");
                let k = kernel(p, &name);
                let out = env.buffer_from(&[-1f32; 64]);
                arg(k, 0, &input);
                arg(k, 1, &out);
                env.run(k, None, &[1], Some(&[1]));
                let got = env.read::<f32>(out, 64);
                // vloada_half3 steps by 4 halves; the base is one half, or (aligned) 4n.
                let stride = if aligned == "a" && n == 3 { 4 } else { n };
                let base = if aligned.is_empty() { 1 } else { 4 * n };
                for o in 0..2 {
                    for b in 0..2 {
                        let at = (o * 2 + b) * 16;
                        let want: Vec<f32> = (0..n)
                            .map(|c| (b * base + o * stride + c + 1) as f32)
                            .collect();
                        if got[at..at + n] != want[..] {
                            wrong.push(format!("{name} o={o} b={b}: {:?}", &got[at..at + n]));
                        }
                    }
                }
                unsafe {
                    clReleaseMemObject(out);
                    clReleaseKernel(k);
                }
            }
        }
    }
    unsafe {
        clReleaseMemObject(input);
        clReleaseProgram(p);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
