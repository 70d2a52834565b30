//! Kernels on images without samplers: read_image{f,i,ui} and write_image{f,i,ui} with integer
//! coordinates on every image type, the image query built-ins, and read_write images.
use crate::common::*;
use crate::format::*;
use crate::queries::max_rw_args;
use crate::util::*;
use std::ptr::null_mut;

/// Formats for kernel reads and writes: normalized 8/16-bit, integer, half, float, 1/2/4
/// channels and BGRA.
const FORMATS: [Format; 10] = [
    RGBA_UNORM8,
    RGBA_UNORM16,
    RGBA_SNORM8,
    RGBA_INT16,
    RGBA_UINT8,
    RGBA_HALF,
    RGBA_FLOAT,
    BGRA_UNORM8,
    R_FLOAT,
    RG_INT8,
];

/// The value kernels write at (x, y, z), channel c: k = ((x + 5y + 17z) * 4 + c) mod 23, then
/// float (k - 4) * 0.0625 * 1.1 (in [-0.275, 1.2375]: clamps for normalized types, rounds
/// for half), int k * 3000 - 30000 and uint k * 3000 (saturating 8- and 16-bit types).
const VALUE_FNS: &str = r#"
#ifdef cl_khr_3d_image_writes
#pragma OPENCL EXTENSION cl_khr_3d_image_writes : enable
#endif
int kv(int x, int y, int z, int c) { return ((x + 5 * y + 17 * z) * 4 + c) % 23; }
float fv(int x, int y, int z, int c) { return (float)(kv(x, y, z, c) - 4) * 0.0625f * 1.1f; }
float4 fval(int x, int y, int z) { return (float4)(fv(x, y, z, 0), fv(x, y, z, 1), fv(x, y, z, 2), fv(x, y, z, 3)); }
int4 ival(int x, int y, int z) {
    return (int4)(kv(x, y, z, 0), kv(x, y, z, 1), kv(x, y, z, 2), kv(x, y, z, 3)) * 3000 - 30000;
}
uint4 uival(int x, int y, int z) {
    return (uint4)(kv(x, y, z, 0), kv(x, y, z, 1), kv(x, y, z, 2), kv(x, y, z, 3)) * 3000u;
}
"#;

fn host_value(class: Class, [x, y, z]: [usize; 3]) -> [f64; 4] {
    let k = |c: usize| ((x + 5 * y + 17 * z) * 4 + c) % 23;
    std::array::from_fn(|c| match class {
        Class::Float => ((k(c) as f32 - 4.0) * 0.0625 * 1.1f32) as f64,
        Class::Int => k(c) as f64 * 3000.0 - 30000.0,
        Class::Uint => k(c) as f64 * 3000.0,
    })
}

/// rd_<type>_<sfx>: out[linear id] = read_image<sfx>(img, coord); wr_<type>_<sfx>: writes the
/// VALUE_FNS value at its coordinate (3D writes only with cl_khr_3d_image_writes).
fn source(writes_3d: bool) -> String {
    let mut src = VALUE_FNS.to_string();
    for ty in ALL_TYPES {
        for class in [Class::Float, Class::Int, Class::Uint] {
            let (sfx, t, n, c) = (class.suffix(), class.vec4(), ty.cl_c(), ty.int_coord());
            let ids = "int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);";
            src += &format!(
                "kernel void rd_{n}_{sfx}(read_only {n} img, global {t} *out) {{\n    {ids}\n\
                 \x20   out[x + get_global_size(0) * (y + get_global_size(1) * z)] = read_image{sfx}(img, {c});\n}}\n"
            );
            if ty != Ty::D3 || writes_3d {
                let val = match class {
                    Class::Float => "fval",
                    Class::Int => "ival",
                    Class::Uint => "uival",
                };
                src += &format!(
                    "kernel void wr_{n}_{sfx}(write_only {n} img) {{\n    {ids}\n    write_image{sfx}(img, {c}, {val}(x, y, z));\n}}\n"
                );
            }
        }
    }
    src
}

fn decode_out(class: Class, raw: [u32; 4]) -> [f64; 4] {
    raw.map(|b| match class {
        Class::Float => f32::from_bits(b) as f64,
        Class::Int => b as i32 as f64,
        Class::Uint => b as f64,
    })
}

#[test]
fn kernels_read_every_type_and_format_without_a_sampler() {
    let e = Env::new();
    let prog = e.program(&source(has_3d_writes(&e)), "");
    for ty in ALL_TYPES {
        for fmt in usable(&e, CL_MEM_READ_ONLY, ty, &FORMATS) {
            read_without_a_sampler(&e, prog, ty, fmt);
        }
    }
    check!(clReleaseProgram(prog));
}

/// Every format the device lists for 1D buffer images reads like the same format in a 1D
/// image: swizzled orders (CL_A, CL_RA, CL_INTENSITY, CL_LUMINANCE, CL_ARGB, CL_ABGR, CL_BGRA)
/// and sRGB included.
#[test]
fn kernels_read_every_listed_buffer_image_format() {
    let e = Env::new();
    let prog = e.program(&source(has_3d_writes(&e)), "");
    let listed = supported(&e, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE1D_BUFFER);
    assert!(!listed.is_empty());
    // The host model has no packed channels (565, 555, 101010: packed.rs tests them in 2D).
    let packed = [CL_UNORM_SHORT_565, CL_UNORM_SHORT_555, CL_UNORM_INT_101010];
    for fmt in listed.into_iter().filter(|f| !packed.contains(&f.ty)) {
        read_without_a_sampler(&e, prog, Ty::D1Buffer, fmt);
    }
    check!(clReleaseProgram(prog));
}

/// read_image{f,i,ui} with integer coordinates of every texel of a `ty` image of `fmt`.
fn read_without_a_sampler(e: &Env, prog: cl_program, ty: Ty, fmt: Format) {
    let what = format!("{ty:?} {fmt}");
    let class = fmt.class();
    let h = HostImage::pattern(fmt, ty.small(), 21);
    let img = Img::from_host(e, CL_MEM_READ_ONLY, &h);
    let k = kernel(prog, &format!("rd_{}_{}", ty.cl_c(), class.suffix()));
    let n = h.shape.pixels();
    let out = e.buffer(CL_MEM_READ_WRITE, n * 16, null_mut());
    arg(k, 0, &img.mem);
    arg(k, 1, &out);
    e.run(k, None, &h.shape.size, None);
    let got: Vec<[u32; 4]> = e.read(out, n);
    for (i, p) in points(h.shape.size).enumerate() {
        let want = h.texel(p);
        let g = decode_out(class, got[i]);
        // normalized → float "≤ 1.5 ulp"; half and float are exact, integers too; sRGB
        // decoding may be 0.5 ULP of the 8-bit value off.
        let srgb = matches!(fmt.order, CL_sRGBA | CL_sBGRA);
        for c in 0..4 {
            let tol = if srgb && c < 3 {
                0.6 / 255.0
            } else {
                2.0 * f32::EPSILON as f64 * want[c].abs()
            };
            assert!(
                (g[c] - want[c]).abs() <= tol,
                "{what}: pixel {p:?}: got {g:?}, want {want:?}"
            );
        }
    }
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
}

#[test]
fn kernels_write_every_type_and_format_without_a_sampler() {
    let e = Env::new();
    let writes_3d = has_3d_writes(&e);
    let prog = e.program(&source(writes_3d), "");
    for ty in ALL_TYPES {
        // pocl 3.1 crashes (SIGSEGV) writing image1d_buffer_t in kernels.
        if ty == Ty::D3 && !writes_3d || ty == Ty::D1Buffer && is_pocl() {
            continue;
        }
        for fmt in usable(&e, CL_MEM_WRITE_ONLY, ty, &FORMATS) {
            let what = format!("{ty:?} {fmt}");
            let class = fmt.class();
            let img = Img::new(&e, CL_MEM_WRITE_ONLY, fmt, ty.small());
            let k = kernel(prog, &format!("wr_{}_{}", ty.cl_c(), class.suffix()));
            arg(k, 0, &img.mem);
            e.run(k, None, &img.shape.size, None);
            let got = img.download(&e);
            for p in points(img.shape.size) {
                if let Err(m) = fmt.check_encoded(host_value(class, p), got.px(p)) {
                    panic!("{what}: pixel {p:?}: {m}");
                }
            }
            check!(clReleaseKernel(k));
        }
    }
    check!(clReleaseProgram(prog));
}

/// get_image_width/height/depth/array_size/dim and get_image_channel_data_type/order against
/// the CLK_ constants, for every type.
#[test]
fn image_query_built_ins() {
    let e = Env::new();
    for fmt in [RGBA_UNORM16, BGRA_UNORM8, RGBA_INT8, RGBA_FLOAT] {
        let (order, dtype) = fmt.clk_names();
        let mut src = String::new();
        // pocl 3.1 lacks get_image_channel_order/data_type for image1d_buffer_t (the kernel
        // fails to load).
        let types: Vec<Ty> = ALL_TYPES
            .into_iter()
            .filter(|&t| !(is_pocl() && t == Ty::D1Buffer))
            .collect();
        for &ty in &types {
            let n = ty.cl_c();
            let h = if matches!(ty, Ty::D2 | Ty::D2Array | Ty::D3) {
                "get_image_height(img)"
            } else {
                "-1"
            };
            let d = if ty == Ty::D3 {
                "get_image_depth(img)"
            } else {
                "-1"
            };
            let a = if ty.is_array() {
                "(int)get_image_array_size(img)"
            } else {
                "-1"
            };
            let dim = match ty {
                Ty::D2 | Ty::D2Array => {
                    "int2 dm = get_image_dim(img); o[5] = dm.x; o[6] = dm.y; o[7] = -1;"
                }
                Ty::D3 => "int4 dm = get_image_dim(img); o[5] = dm.x; o[6] = dm.y; o[7] = dm.z;",
                _ => "o[5] = o[6] = o[7] = -1;",
            };
            src += &format!(
                "kernel void q_{n}(read_only {n} img, global int *o) {{\n\
                 \x20   o[0] = get_image_width(img); o[1] = {h}; o[2] = {d}; o[3] = {a};\n\
                 \x20   o[4] = (get_image_channel_data_type(img) == {dtype}) | (get_image_channel_order(img) == {order}) << 1;\n\
                 \x20   {dim}\n}}\n"
            );
        }
        let prog = e.program(&src, "");
        for &ty in &types {
            if !is_supported(&e, CL_MEM_READ_ONLY, ty, fmt) {
                continue;
            }
            let img = Img::new(&e, CL_MEM_READ_ONLY, fmt, ty.small());
            let k = kernel(prog, &format!("q_{}", ty.cl_c()));
            let out = e.buffer(CL_MEM_READ_WRITE, 32, null_mut());
            arg(k, 0, &img.mem);
            arg(k, 1, &out);
            e.run(k, None, &[1], None);
            let got: Vec<i32> = e.read(out, 8);
            let [w, h, d] = img.shape.size.map(|v| v as i32);
            let want = match ty {
                Ty::D1 | Ty::D1Buffer => [w, -1, -1, -1, 3, -1, -1, -1],
                Ty::D1Array => [w, -1, -1, h, 3, -1, -1, -1],
                Ty::D2 => [w, h, -1, -1, 3, w, h, -1],
                Ty::D2Array => [w, h, -1, d, 3, w, h, -1],
                Ty::D3 => [w, h, d, -1, 3, w, h, d],
            };
            assert_eq!(got, want, "{ty:?} {fmt}");
            check!(clReleaseMemObject(out));
            check!(clReleaseKernel(k));
        }
        check!(clReleaseProgram(prog));
    }
}

/// A read_write image: each work-item reads its pixel, writes a new value, fences
/// (CLK_IMAGE_MEM_FENCE) and reads its own write back. Needs read-write image support
/// (CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS > 0, __opencl_c_read_write_images).
#[test]
fn read_write_images_see_their_own_writes_after_a_fence() {
    let e = Env::new();
    assert_eq!(
        device_val::<cl_bool>(e.dev, CL_DEVICE_IMAGE_SUPPORT),
        CL_TRUE
    );
    if max_rw_args(&e) == 0 {
        // Optional in OpenCL 3.0: the device must then not claim the feature.
        let feats = crate::queries::c_features(&e);
        assert!(
            !feats.iter().any(|f| f == "__opencl_c_read_write_images"),
            "{feats:?}"
        );
        return;
    }
    let src = r#"
#if defined(__opencl_c_atomic_order_acq_rel)
#define ORDER memory_order_acq_rel
#else
#define ORDER memory_order_seq_cst
#endif
kernel void rw_f(read_write image2d_t img, global float4 *out) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 v = read_imagef(img, p);
    write_imagef(img, p, v * 0.5f + (float4)(0.25f, 0.5f, -0.25f, 1.0f));
    atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, ORDER, memory_scope_work_item);
    out[p.x + get_global_size(0) * p.y] = read_imagef(img, p);
}
kernel void rw_ui(read_write image2d_array_t img) {
    int4 p = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);
    write_imageui(img, p, read_imageui(img, p) * 3u + 1u);
}
"#;
    let prog = e.program(src, "-cl-std=CL3.0");
    // float: values exact in binary, so v * 0.5 + c is exact whether or not it is fused.
    let shape = Ty::D2.small();
    let h = HostImage::from_fn(RGBA_FLOAT, shape, |[x, y, _]| {
        (0..4)
            .flat_map(|c| ((x * 4 + y * 3 + c) as f32 * 0.125).to_le_bytes())
            .collect()
    });
    let img = Img::from_host(&e, CL_MEM_READ_WRITE, &h);
    let k = kernel(prog, "rw_f");
    let out = e.buffer(CL_MEM_READ_WRITE, shape.pixels() * 16, null_mut());
    arg(k, 0, &img.mem);
    arg(k, 1, &out);
    e.run(k, None, &shape.size[..2], None);
    let got: Vec<[f32; 4]> = e.read(out, shape.pixels());
    let after = img.download(&e);
    let add = [0.25, 0.5, -0.25, 1.0];
    for (i, p) in points(shape.size).enumerate() {
        let v = h.texel(p);
        let want: [f64; 4] = std::array::from_fn(|c| v[c] * 0.5 + add[c]);
        assert_eq!(got[i].map(|x| x as f64), want, "read back at {p:?}");
        assert_eq!(after.texel(p), want, "image at {p:?}");
    }
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
    // uint, 2D array
    let shape = Ty::D2Array.small();
    let h = HostImage::pattern(R_UINT32, shape, 22);
    let img = Img::from_host(&e, CL_MEM_READ_WRITE, &h);
    let k = kernel(prog, "rw_ui");
    arg(k, 0, &img.mem);
    e.run(k, None, &shape.size, None);
    let after = img.download(&e);
    for p in points(shape.size) {
        let v = u32::from_le_bytes(h.px(p).try_into().unwrap());
        assert_eq!(
            after.px(p),
            v.wrapping_mul(3).wrapping_add(1).to_le_bytes(),
            "{p:?}"
        );
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(prog));
}
