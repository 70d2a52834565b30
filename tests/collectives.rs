//! Work-group collective functions (__opencl_c_work_group_collective_functions, OpenCL C 2.0
//! and 3.0): work_group_all/any, broadcast in 1, 2 and 3 dimensions, reduce and inclusive and
//! exclusive scans of add/min/max on every scalar type the device has, in uniform work-groups
//! and in launches whose last work-groups are partial, against a host model of each group.
#[macro_use]
mod common;
use common::*;

const CL_DEVICE_OPENCL_C_FEATURES: cl_uint = 0x106F;
const FEATURE: &str = "__opencl_c_work_group_collective_functions";

const SOURCE: &str = r#"
#ifdef HALF
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
#if __OPENCL_C_VERSION__ >= 300 && !defined(__opencl_c_work_group_collective_functions)
#error __opencl_c_work_group_collective_functions is not defined
#endif
/* out[10 g ..]: reduce, inclusive scan and exclusive scan of add, min, max, then the
   broadcast of the item at (bx, by, bz); flags[2 g ..]: all and any of pred. */
kernel void collectives(global const T *in, global const int *pred, global T *out,
                        global int *flags, uint bx, uint by, uint bz) {
    size_t g = get_global_id(0) + get_global_size(0) * (get_global_id(1)
               + get_global_size(1) * get_global_id(2));
    T x = in[g];
    global T *o = out + 10 * g;
    o[0] = work_group_reduce_add(x);
    o[1] = work_group_reduce_min(x);
    o[2] = work_group_reduce_max(x);
    o[3] = work_group_scan_inclusive_add(x);
    o[4] = work_group_scan_inclusive_min(x);
    o[5] = work_group_scan_inclusive_max(x);
    o[6] = work_group_scan_exclusive_add(x);
    o[7] = work_group_scan_exclusive_min(x);
    o[8] = work_group_scan_exclusive_max(x);
    uint d = get_work_dim();
    if (d == 1)
        o[9] = work_group_broadcast(x, (size_t)bx);
    else if (d == 2)
        o[9] = work_group_broadcast(x, (size_t)bx, (size_t)by);
    else
        o[9] = work_group_broadcast(x, (size_t)bx, (size_t)by, (size_t)bz);
    flags[2 * g] = work_group_all(pred[g]);
    flags[2 * g + 1] = work_group_any(pred[g]);
}
"#;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Signed,
    Unsigned,
    Float,
}

/// A scalar type: its name, size in bytes and kind. Values are kept as i128: integers
/// normalised to the type's range, floats as small integers (exact in every type and in any
/// order of addition), with i128::MAX / MIN standing for +/- infinity.
#[derive(Clone, Copy)]
struct Ty {
    name: &'static str,
    size: usize,
    kind: Kind,
}

impl Ty {
    fn bits(self) -> u32 {
        8 * self.size as u32
    }

    fn normalise(self, v: i128) -> i128 {
        if self.kind == Kind::Float {
            return v;
        }
        let m = v & ((1i128 << self.bits()) - 1);
        match self.kind {
            Kind::Signed if m >= 1i128 << (self.bits() - 1) => m - (1i128 << self.bits()),
            _ => m,
        }
    }

    /// The identities of min and max (the first value of their exclusive scans).
    fn min_identity(self) -> i128 {
        match self.kind {
            Kind::Float => i128::MAX,
            Kind::Signed => (1i128 << (self.bits() - 1)) - 1,
            Kind::Unsigned => (1i128 << self.bits()) - 1,
        }
    }

    fn max_identity(self) -> i128 {
        match self.kind {
            Kind::Float => i128::MIN,
            Kind::Signed => -(1i128 << (self.bits() - 1)),
            Kind::Unsigned => 0,
        }
    }

    /// The bytes of `v` as the device stores it.
    fn encode(self, v: i128) -> Vec<u8> {
        if self.kind != Kind::Float {
            return v.to_le_bytes()[..self.size].to_vec();
        }
        let f = match v {
            i128::MAX => f64::INFINITY,
            i128::MIN => f64::NEG_INFINITY,
            v => v as f64,
        };
        match self.size {
            8 => f.to_le_bytes().to_vec(),
            4 => (f as f32).to_le_bytes().to_vec(),
            _ => half_bits(f as f32).to_le_bytes().to_vec(),
        }
    }

    /// Random inputs: any value of an integer type, small integers for floats.
    fn random(self, seed: &mut u64) -> i128 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        match (self.kind, self.size) {
            (Kind::Float, 2) => (*seed % 17) as i128 - 8,
            (Kind::Float, _) => (*seed % 201) as i128 - 100,
            _ => self.normalise(*seed as i128),
        }
    }
}

/// IEEE half bits of `f`, an integer of magnitude below 2048 or an infinity.
fn half_bits(f: f32) -> u16 {
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if f == 0.0 {
        return sign;
    }
    if f.is_infinite() {
        return sign | 0x7c00;
    }
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    sign | ((exp as u16) << 10) | ((b >> 13) & 0x3ff) as u16
}

/// For each work-group of the launch, its items' global linear ids in local linear order,
/// and the position of the item at local id `at` (the broadcast source).
fn groups(gws: &[usize; 3], lws: &[usize; 3], at: [usize; 3]) -> Vec<(Vec<usize>, usize)> {
    let mut map = std::collections::BTreeMap::<[usize; 3], Vec<(usize, usize)>>::new();
    let mut source = std::collections::BTreeMap::new();
    for z in 0..gws[2] {
        for y in 0..gws[1] {
            for x in 0..gws[0] {
                let id = [x, y, z];
                let group = [0, 1, 2].map(|d| id[d] / lws[d]);
                let local = [0, 1, 2].map(|d| id[d] % lws[d]);
                let extent = [0, 1, 2].map(|d| lws[d].min(gws[d] - group[d] * lws[d]));
                let linear = local[0] + extent[0] * (local[1] + extent[1] * local[2]);
                let g = x + gws[0] * (y + gws[1] * z);
                map.entry(group).or_default().push((linear, g));
                if local == at {
                    source.insert(group, g);
                }
            }
        }
    }
    map.into_iter()
        .map(|(group, mut items)| {
            items.sort();
            let ids: Vec<usize> = items.iter().map(|&(_, g)| g).collect();
            let at = ids.iter().position(|&g| g == source[&group]).unwrap();
            (ids, at)
        })
        .collect()
}

/// The expected out[] (as values) and flags[] of SOURCE.
fn model(
    ty: Ty,
    input: &[i128],
    pred: &[i32],
    groups: &[(Vec<usize>, usize)],
) -> (Vec<i128>, Vec<i32>) {
    let mut out = vec![0; 10 * input.len()];
    let mut flags = vec![0; 2 * input.len()];
    type Op = fn(i128, i128) -> i128;
    let ops: [(Op, i128); 3] = [
        (|a, b| a + b, 0),
        (|a, b| a.min(b), ty.min_identity()),
        (|a, b| a.max(b), ty.max_identity()),
    ];
    for (ids, at) in groups {
        for (o, (op, identity)) in ops.iter().enumerate() {
            let mut carry = *identity;
            for (n, &g) in ids.iter().enumerate() {
                let x = input[g];
                out[10 * g + 6 + o] = carry;
                carry = if n == 0 {
                    x
                } else {
                    ty.normalise(op(carry, x))
                };
                out[10 * g + 3 + o] = carry;
            }
            for &g in ids {
                out[10 * g + o] = carry;
            }
        }
        let all = ids.iter().all(|&g| pred[g] != 0);
        let any = ids.iter().any(|&g| pred[g] != 0);
        for &g in ids {
            out[10 * g + 9] = input[ids[*at]];
            flags[2 * g] = all as i32;
            flags[2 * g + 1] = any as i32;
        }
    }
    (out, flags)
}

fn types() -> Vec<(Ty, &'static str)> {
    let ext = device_str(device(), CL_DEVICE_EXTENSIONS);
    let has = |e: &str| ext.split_whitespace().any(|w| w == e);
    let t = |name, size, kind| Ty { name, size, kind };
    let mut v = vec![
        (t("int", 4, Kind::Signed), ""),
        (t("uint", 4, Kind::Unsigned), ""),
        (t("long", 8, Kind::Signed), ""),
        (t("ulong", 8, Kind::Unsigned), ""),
        (t("float", 4, Kind::Float), ""),
    ];
    if has("cl_khr_fp64") {
        v.push((t("double", 8, Kind::Float), ""));
    }
    if has("cl_khr_fp16") {
        v.push((t("half", 2, Kind::Float), " -DHALF"));
    }
    v
}

/// Launches: global size, local size, broadcast source (valid in every group, partial ones
/// included).
const LAUNCHES: &[(&[usize], &[usize], [usize; 3])] = &[
    (&[256], &[64], [5, 0, 0]),
    // Partial last group (88 items), groups wider than the library's 128 slots.
    (&[600], &[256], [87, 0, 0]),
    (&[7], &[7], [6, 0, 0]),
    // Partial in both dimensions: 8+8+4 by 4+3.
    (&[20, 7], &[8, 4], [3, 2, 0]),
    // 4+2 by 4+2 by 2+1.
    (&[6, 6, 3], &[4, 4, 2], [1, 1, 0]),
    (&[4, 4, 4], &[4, 4, 4], [3, 2, 1]),
    // lavapipe's largest group: eight chunks of the library's slots.
    (&[2048], &[1024], [1000, 0, 0]),
];

fn features_listed() -> bool {
    let features =
        bytes_to_vec::<cl_name_version>(&device_info(device(), CL_DEVICE_OPENCL_C_FEATURES));
    features.iter().any(|f| f.name() == FEATURE)
}

#[test]
fn every_collective_function_type_and_dimension() {
    if !features_listed() {
        eprintln!("{FEATURE} not listed: nothing to test");
        return;
    }
    let e = Env::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    // Each launch shape is a pipeline of its own per region (up to 8 for a partial 3-D launch;
    // lavapipe takes about half a second of CPU for each): every shape for int, the partial
    // 1-D one for the other types and OpenCL C 2.0.
    let mut cases = vec![];
    for (ty, extra) in types() {
        if ty.name == "int" {
            cases.push(("-cl-std=CL2.0", ty, extra, vec![1]));
            cases.push(("-cl-std=CL3.0", ty, extra, (0..LAUNCHES.len()).collect()));
        } else {
            cases.push(("-cl-std=CL3.0", ty, extra, vec![1]));
        }
    }
    for (std, ty, extra, launches) in cases {
        {
            let p = e.program(SOURCE, &format!("{std} -DT={}{extra}", ty.name));
            let k = kernel(p, "collectives");
            for &(gws, lws, at) in launches.iter().map(|&i| &LAUNCHES[i]) {
                let what = format!("{} {std} gws {gws:?} lws {lws:?}", ty.name);
                let dims = |s: &[usize]| [0, 1, 2].map(|d| s.get(d).copied().unwrap_or(1));
                let (g3, l3) = (dims(gws), dims(lws));
                let max: usize = wg_val(k, e.dev, CL_KERNEL_WORK_GROUP_SIZE);
                if l3.iter().product::<usize>() > max {
                    eprintln!("{what}: more than the kernel's {max} work-items: not run");
                    continue;
                }
                let n: usize = g3.iter().product();
                let input: Vec<i128> = (0..n).map(|_| ty.random(&mut seed)).collect();
                let groups = groups(&g3, &l3, at);
                // Per group: all true, all false, one true, one false.
                let mut pred = vec![0i32; n];
                for (i, (ids, _)) in groups.iter().enumerate() {
                    for (j, &g) in ids.iter().enumerate() {
                        pred[g] = match i % 4 {
                            0 => 1 + j as i32,
                            1 => 0,
                            2 => (j == ids.len() / 2) as i32 * -7,
                            _ => (j != ids.len() - 1) as i32,
                        };
                    }
                }
                let bytes: Vec<u8> = input.iter().flat_map(|&v| ty.encode(v)).collect();
                let m_in = e.buffer_from(&bytes);
                let m_pred = e.buffer_from(&pred);
                let m_out = e.buffer_from(&vec![0u8; 10 * n * ty.size]);
                let m_flags = e.buffer_from(&vec![-1i32; 2 * n]);
                arg(k, 0, &m_in);
                arg(k, 1, &m_pred);
                arg(k, 2, &m_out);
                arg(k, 3, &m_flags);
                for (i, a) in at.iter().enumerate() {
                    arg(k, 4 + i as u32, &(*a as u32));
                }
                e.run(k, None, gws, Some(lws));
                let got = e.read::<u8>(m_out, 10 * n * ty.size);
                let flags = e.read::<i32>(m_flags, 2 * n);
                let (want, want_flags) = model(ty, &input, &pred, &groups);
                let names = [
                    "reduce_add",
                    "reduce_min",
                    "reduce_max",
                    "scan_inclusive_add",
                    "scan_inclusive_min",
                    "scan_inclusive_max",
                    "scan_exclusive_add",
                    "scan_exclusive_min",
                    "scan_exclusive_max",
                    "broadcast",
                ];
                for (i, w) in want.iter().enumerate() {
                    let g = &got[i * ty.size..(i + 1) * ty.size];
                    assert_eq!(
                        g,
                        ty.encode(*w),
                        "{what}: {} of item {} (want {w})",
                        names[i % 10],
                        i / 10
                    );
                }
                for (i, w) in want_flags.iter().enumerate() {
                    let f = ["all", "any"][i % 2];
                    assert_eq!(flags[i] != 0, *w != 0, "{what}: {f} of item {}", i / 2);
                }
                for m in [m_in, m_pred, m_out, m_flags] {
                    check!(clReleaseMemObject(m));
                }
            }
            check!(clReleaseKernel(k));
            check!(clReleaseProgram(p));
        }
    }
}

/// The feature is listed where vkcl's library works (64-bit integers), and its macro defined
/// for OpenCL C 3.0 programs exactly then.
#[test]
fn feature_macro_matches_the_device() {
    let e = Env::new();
    let src = "kernel void k(global int *o) {\n\
               #ifdef __opencl_c_work_group_collective_functions\n o[0] = 1;\n\
               #else\n o[0] = 2;\n#endif\n}";
    let p = e.program(src, "-cl-std=CL3.0");
    let k = kernel(p, "k");
    let o = e.buffer_from(&[0i32]);
    arg(k, 0, &o);
    e.run(k, None, &[1], None);
    let want = if features_listed() { 1 } else { 2 };
    assert_eq!(e.read::<i32>(o, 1)[0], want);
    // OpenCL 3.0: CL_TRUE exactly where the feature is listed.
    const CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT: cl_uint = 0x1068;
    let support: cl_bool = device_val(e.dev, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT);
    assert_eq!(support != 0, features_listed());
    let name = device_str(device(), CL_DEVICE_NAME);
    if name.contains("llvmpipe") || name.contains("NVIDIA") {
        assert!(features_listed(), "{FEATURE} expected on {name}");
    }
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// Collectives called from functions that are not kernels, through two levels and a
/// prototype, in a partial last work-group.
#[test]
fn collectives_in_helper_functions() {
    if !features_listed() {
        eprintln!("{FEATURE} not listed: nothing to test");
        return;
    }
    let src = "int total(int x);\n\
               int first(int x) { return work_group_broadcast(x, 0); }\n\
               int both(int x) { return total(x) * 1000 + first(x); }\n\
               int total(int x) { return work_group_reduce_add(x); }\n\
               kernel void k(global int *o) {\n\
                   int i = get_global_id(0);\n\
                   o[i] = both(i) + work_group_scan_exclusive_add(1) * 1000000;\n\
               }";
    let e = Env::new();
    let p = e.program(src, "-cl-std=CL3.0");
    let k = kernel(p, "k");
    // The library's scratch array (128 slots of 8 bytes) counts as the kernel's.
    let local: cl_ulong = wg_val(k, e.dev, CL_KERNEL_LOCAL_MEM_SIZE);
    assert!(local >= 1024, "CL_KERNEL_LOCAL_MEM_SIZE {local}");
    let n = 100usize;
    let o = e.buffer_from(&vec![-1i32; n]);
    arg(k, 0, &o);
    e.run(k, None, &[n], Some(&[64]));
    let got = e.read::<i32>(o, n);
    for (i, g) in got.iter().enumerate() {
        let (base, end) = if i < 64 { (0, 64) } else { (64, n) };
        let total: usize = (base..end).sum();
        let want = total * 1000 + base + (i - base) * 1_000_000;
        assert_eq!(*g as usize, want, "item {i}");
    }
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}
