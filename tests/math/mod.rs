//! The ULP checker shared by tests/fp64.rs and tests/math_accuracy.rs.
//!
//! Reference values come from tests/data/math_ref_{f32,f64}.txt (tools/math_ref.py: mpmath at
//! 160 bits, each answer stored as a pair of doubles hi + lo, so the error is measured against
//! the exact value). Each test builds one kernel that applies a built-in to every argument of
//! the table, runs it through the ICD loader, and measures the error in ULPs of the result's
//! type as the OpenCL C spec (§7.4, "Relative Error as ULPs") defines it.
#![allow(dead_code)]

use crate::common::*;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub args: [u64; 3],
    pub hi: f64,
    pub lo: f64,
    pub aux: i64,
}

fn parse(text: &str) -> Vec<(String, Case)> {
    let hex = |s: &str| u64::from_str_radix(s, 16).expect("hex");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let case = Case {
                args: [hex(w[1]), hex(w[2]), hex(w[3])],
                hi: f64::from_bits(hex(w[4])),
                lo: f64::from_bits(hex(w[5])),
                aux: w[6].parse().expect("aux"),
            };
            (w[0].to_string(), case)
        })
        .collect()
}

fn table(double: bool) -> &'static [(String, Case)] {
    static F32: OnceLock<Vec<(String, Case)>> = OnceLock::new();
    static F64: OnceLock<Vec<(String, Case)>> = OnceLock::new();
    if double {
        F64.get_or_init(|| parse(include_str!("../data/math_ref_f64.txt")))
    } else {
        F32.get_or_init(|| parse(include_str!("../data/math_ref_f32.txt")))
    }
}

/// The reference cases of `name` (the table's name: `half_sin` uses `sin`'s).
pub fn cases(double: bool, name: &str) -> Vec<Case> {
    named(table(double), name)
}

/// The cases of `name` in a table of the same format (e.g. tests/data/trig_ref_f64.txt).
pub fn cases_in(text: &str, name: &str) -> Vec<Case> {
    named(&parse(text), name)
}

fn named(table: &[(String, Case)], name: &str) -> Vec<Case> {
    let v: Vec<Case> = table
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, c)| *c)
        .collect();
    assert!(!v.is_empty(), "no reference cases for {name}");
    v
}

/// A xorshift64 generator: the sweeps' reproducible arguments.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// Shape of a built-in's signature.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// T f(T)
    F,
    /// T f(T, T)
    FF,
    /// T f(T, T, T)
    FFF,
    /// T f(T, int)
    FI,
    /// int f(T)
    I,
    /// T f(T, int *)
    Frexp,
    /// T f(T, T *)
    Modf,
    /// T f(T, T *): sin, then cos through the pointer
    Sincos,
    /// T f(T, T, int *)
    Remquo,
}

/// Precision of the values under test.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Fmt {
    pub double: bool,
}

impl Fmt {
    fn ty(self) -> &'static str {
        if self.double {
            "double"
        } else {
            "float"
        }
    }
    fn size(self) -> usize {
        if self.double {
            8
        } else {
            4
        }
    }
    /// ULP of the exact value x (§7.4: the gap between the two finite values around x;
    /// the smallest subnormal below the normal range).
    pub fn ulp(self, x: f64) -> f64 {
        let (mant, emin) = if self.double { (52, -1022) } else { (23, -126) };
        let x = x.abs();
        if !x.is_finite() {
            return f64::INFINITY;
        }
        let e = if x == 0.0 {
            emin
        } else {
            (x.log2().floor() as i32).max(emin)
        };
        // log2 may be off by one next to a power of two: fix up exactly
        let mut e = e;
        while e > emin && pow2(e) > x {
            e -= 1;
        }
        while pow2(e + 1) <= x {
            e += 1;
        }
        pow2(e.max(emin) - mant)
    }
    pub fn min_normal(self) -> f64 {
        if self.double {
            f64::MIN_POSITIVE
        } else {
            f32::MIN_POSITIVE as f64
        }
    }
    fn encode(self, bits: u64, out: &mut Vec<u8>) {
        if self.double {
            out.extend_from_slice(&bits.to_le_bytes());
        } else {
            out.extend_from_slice(&(f64::from_bits(bits) as f32).to_le_bytes());
        }
    }
    fn decode(self, b: &[u8], i: usize) -> f64 {
        if self.double {
            f64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap())
        } else {
            f32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap()) as f64
        }
    }
}

/// 2^e for any e a double can hold (powi underflows on the way for subnormals).
fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// Error of `dev` against the exact hi + lo in ULPs; 0 for an identical special value,
/// infinity for a wrong special value (NaN, infinity or the sign of a zero).
pub fn ulp_error(fmt: Fmt, dev: f64, hi: f64, lo: f64) -> f64 {
    if hi.is_nan() {
        return if dev.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if hi.is_infinite() || dev.is_nan() || dev.is_infinite() {
        return if dev == hi { 0.0 } else { f64::INFINITY };
    }
    if hi == 0.0 && lo == 0.0 && dev == 0.0 {
        // An exact zero: its sign is part of the answer.
        return if dev.is_sign_negative() == hi.is_sign_negative() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    ((dev - hi) - lo).abs() / fmt.ulp(hi)
}

/// The worst case of one run, for the report.
pub struct Worst {
    pub err: f64,
    pub what: String,
}

/// Runs built-in `func` of shape `kind` on every case and returns the worst error (in ULPs;
/// exact integer outputs count as infinity when wrong). `skip` drops cases outside a
/// function's defined domain (e.g. half_sin's |x| <= 2^16).
pub fn run(
    fmt: Fmt,
    func: &str,
    kind: Kind,
    cases: &[Case],
    opts: &str,
    ftz: bool,
) -> (Worst, Vec<String>) {
    let ty = fmt.ty();
    let n = cases.len();
    let ext = if fmt.double {
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    } else {
        ""
    };
    let body = match kind {
        Kind::F => format!("o[i] = {func}(a[i]);"),
        Kind::FF => format!("o[i] = {func}(a[i], b[i]);"),
        Kind::FFF => format!("o[i] = {func}(a[i], b[i], c[i]);"),
        Kind::FI => format!("o[i] = {func}(a[i], ib[i]);"),
        Kind::I => format!("io[i] = {func}(a[i]);"),
        Kind::Frexp => format!("int e; o[i] = {func}(a[i], &e); io[i] = e;"),
        Kind::Modf | Kind::Sincos => format!("{ty} p; o[i] = {func}(a[i], &p); o2[i] = p;"),
        Kind::Remquo => format!("int q; o[i] = {func}(a[i], b[i], &q); io[i] = q;"),
    };
    let src = format!(
        "{ext}kernel void k(global {ty} *o, global {ty} *o2, global int *io, global const {ty} *a, \
         global const {ty} *b, global const {ty} *c, global const int *ib) {{\n\
         size_t i = get_global_id(0);\n{body}\n}}\n"
    );
    let e = Env::new();
    let p = e.program(&src, opts);
    let k = kernel(p, "k");
    let mut ins = [Vec::new(), Vec::new(), Vec::new()];
    let mut ib = Vec::new();
    for c in cases {
        for j in 0..3 {
            fmt.encode(c.args[j], &mut ins[j]);
        }
        ib.extend_from_slice(&(c.args[1] as i64 as i32).to_le_bytes());
    }
    let sz = n * fmt.size();
    let o = e.buffer(CL_MEM_READ_WRITE, sz, std::ptr::null_mut());
    let o2 = e.buffer(CL_MEM_READ_WRITE, sz, std::ptr::null_mut());
    let io = e.buffer(CL_MEM_READ_WRITE, n * 4, std::ptr::null_mut());
    let bufs = [
        o,
        o2,
        io,
        e.buffer_from(&ins[0]),
        e.buffer_from(&ins[1]),
        e.buffer_from(&ins[2]),
        e.buffer_from(&ib),
    ];
    for (i, b) in bufs.iter().enumerate() {
        arg(k, i as u32, b);
    }
    e.run(k, None, &[n], None);
    let out: Vec<u8> = e.read(o, sz);
    let out2: Vec<u8> = e.read(o2, sz);
    let iout: Vec<i32> = e.read(io, n);
    for b in bufs {
        unsafe { clReleaseMemObject(b) };
    }
    unsafe {
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
    let mut worst = Worst {
        err: 0.0,
        what: String::new(),
    };
    let mut wrong_exact = Vec::new();
    let argstr = |c: &Case| {
        let a: Vec<String> = (0..3)
            .map(|j| format!("{:e}", f64::from_bits(c.args[j])))
            .collect();
        format!("({}, {}, {} / int {})", a[0], a[1], a[2], c.args[1] as i64)
    };
    let ulp_error = |fmt: Fmt, dev: f64, hi: f64, lo: f64| {
        if ftz && dev == 0.0 && hi.abs() < fmt.min_normal() {
            0.0
        } else {
            ulp_error(fmt, dev, hi, lo)
        }
    };
    for (i, c) in cases.iter().enumerate() {
        let (err, dev) = match kind {
            Kind::I => {
                let ok = iout[i] as i64 == c.aux;
                (if ok { 0.0 } else { f64::INFINITY }, iout[i] as f64)
            }
            Kind::Frexp => {
                let d = fmt.decode(&out, i);
                let mut err = ulp_error(fmt, d, c.hi, c.lo);
                if c.hi.is_finite() && c.hi != 0.0 && iout[i] as i64 != c.aux {
                    err = f64::INFINITY;
                }
                (err, d)
            }
            Kind::Modf => {
                let d = fmt.decode(&out, i);
                let ip = fmt.decode(&out2, i);
                (
                    ulp_error(fmt, d, c.hi, 0.0).max(ulp_error(fmt, ip, c.lo, 0.0)),
                    d,
                )
            }
            Kind::Sincos => {
                let d = if c.aux == 0 {
                    fmt.decode(&out, i)
                } else {
                    fmt.decode(&out2, i)
                };
                (ulp_error(fmt, d, c.hi, c.lo), d)
            }
            Kind::Remquo => {
                let d = fmt.decode(&out, i);
                let mut err = ulp_error(fmt, d, c.hi, c.lo);
                // §6.15.2: quo has the sign of x/y and at least the 7 low bits of the
                // integral quotient's magnitude.
                let q = iout[i] as i64;
                if c.hi.is_finite() && c.aux != 0 {
                    let ok = (q.abs() & 0x7f) == (c.aux.abs() & 0x7f)
                        && (q.signum() == c.aux.signum() || (c.aux.abs() & 0x7f == 0 && q == 0));
                    if !ok {
                        err = f64::INFINITY;
                    }
                }
                (err, d)
            }
            _ => {
                let d = fmt.decode(&out, i);
                (ulp_error(fmt, d, c.hi, c.lo), d)
            }
        };
        if err > worst.err || (err.is_nan() && !worst.err.is_nan()) {
            worst.err = err;
            worst.what = format!(
                "{func}{} = {dev:e} (int {}), exact {:e} (+{:e}, aux {})",
                argstr(c),
                iout[i],
                c.hi,
                c.lo,
                c.aux
            );
        }
        if err.is_infinite() && wrong_exact.len() < 8 {
            wrong_exact.push(format!(
                "{func}{} = {dev:e} (int {}), expected {:e} (aux {})",
                argstr(c),
                iout[i],
                c.hi,
                c.aux
            ));
        }
    }
    (worst, wrong_exact)
}

/// CL_FP_DENORM in the device's config for this precision.
pub fn denormals(fmt: Fmt) -> bool {
    let p = if fmt.double { 0x1032 } else { 0x101B };
    let cfg: u64 = device_val(device(), p);
    cfg & 1 != 0
}

/// Checks `func` against its ULP bound (`bound` from the spec's table: 0 means correctly
/// rounded, which an error up to half an ULP is) and prints the worst case either way.
pub fn check(
    fmt: Fmt,
    func: &str,
    table_name: &str,
    kind: Kind,
    bound: f64,
    opts: &str,
    keep: impl Fn(&Case) -> bool,
) {
    // §7.5.3: without CL_FP_DENORM a subnormal argument or result may be flushed to zero.
    // A subnormal argument is then left out (its answer would be that of a zero), and a
    // subnormal result may come back as a zero of either sign.
    let ftz = !denormals(fmt);
    let sub = |bits: u64| {
        let x = f64::from_bits(bits);
        x != 0.0 && x.abs() < fmt.min_normal()
    };
    let cases: Vec<Case> = cases(fmt.double, table_name)
        .into_iter()
        .filter(|c| keep(c))
        .filter(|c| !ftz || kind == Kind::FI || !c.args.iter().any(|&a| sub(a)))
        .filter(|c| !ftz || kind != Kind::FI || !sub(c.args[0]))
        .collect();
    let known = known_failure(fmt, func);
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(fmt, func, kind, &cases, opts, ftz)
    }));
    let (w, wrong) = match (ran, &known) {
        (Ok(r), _) => r,
        (Err(_), Some(why)) => {
            println!("known failure ({EXPECTATIONS}): {} {func}: {why}", fmt.ty());
            return;
        }
        (Err(e), None) => std::panic::resume_unwind(e),
    };
    let limit = bound.max(0.5);
    println!(
        "ULP {} {func}: max {:.3} (bound {bound}) over {} cases; worst {}",
        fmt.ty(),
        w.err,
        cases.len(),
        w.what
    );
    if let Some(why) = known {
        // The list was measured on lavapipe; elsewhere a listed function may pass.
        let lavapipe = device_str(device(), CL_DEVICE_NAME).contains("llvmpipe");
        assert!(
            w.err > limit || !lavapipe,
            "{} {func} meets its bound now: remove it from {EXPECTATIONS}",
            fmt.ty()
        );
        println!("known failure ({EXPECTATIONS}): {} {func}: {why}", fmt.ty());
        return;
    }
    assert!(
        w.err <= limit,
        "{} {func}: max error {:.3} ULP exceeds {bound}: {}\nwrong special values/signs/integers:\n{}",
        fmt.ty(),
        w.err,
        w.what,
        wrong.join("\n")
    );
}

/// The built-ins known to miss their bound on vkcl (a bug each, with its reason): such a test
/// reports the failure and passes while it still fails, and fails once the function meets
/// its bound (then the line goes).
const EXPECTATIONS: &str = "ci/expectations/math.txt";

/// The reason `func` of `fmt`'s type is listed in EXPECTATIONS (lines `<type> <func> # why`).
pub fn known_failure(fmt: Fmt, func: &str) -> Option<String> {
    let path = crate::common::repo_file(EXPECTATIONS);
    let text = std::fs::read_to_string(path).expect(EXPECTATIONS);
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .find_map(|l| {
            let (key, why) = l.split_once('#')?;
            let mut key = key.split_whitespace();
            (key.next()? == fmt.ty() && key.next()? == func).then(|| why.trim().to_string())
        })
}
