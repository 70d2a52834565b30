//! 2D images created from other 2D images: the same texels read with the sRGB / linear twin
//! of the channel order (section 5.3.1: CL_sRGBA / CL_RGBA, CL_sBGRA / CL_BGRA), whichever of
//! the two images is written.
use super::common::*;
use super::format::RGBA_UNORM8;
use super::util::*;
use std::ptr::{null, null_mut};

const W: usize = 4;
const H: usize = 2;

fn desc(original: cl_mem) -> cl_image_desc {
    desc_2d(W, H, 0, original)
}

fn format(order: cl_uint) -> cl_image_format {
    cl_image_format {
        image_channel_order: order,
        image_channel_data_type: CL_UNORM_INT8,
    }
}

fn create(
    e: &Env,
    flags: cl_bitfield,
    order: cl_uint,
    d: &cl_image_desc,
) -> Result<cl_mem, cl_int> {
    let mut err = 1;
    let f = format(order);
    let m = unsafe { clCreateImage(e.ctx, flags, &f, d, null_mut(), &mut err) };
    if err == CL_SUCCESS {
        Ok(m)
    } else {
        assert!(m.is_null());
        Err(err)
    }
}

/// The sRGB decoding of an 8-bit value (section 8.3.1.4 of the OpenCL C spec).
fn srgb_to_linear(v: u8) -> f32 {
    let c = v as f32 / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// read_imagef of every pixel of `img` (integer coordinates), as floats.
fn read_all(e: &Env, k: cl_kernel, img: cl_mem) -> Vec<f32> {
    let out = e.buffer(CL_MEM_READ_WRITE, W * H * 16, null_mut());
    arg(k, 0, &img);
    arg(k, 1, &out);
    e.run(k, None, &[W, H], None);
    let v = e.read(out, W * H * 4);
    check!(clReleaseMemObject(out));
    v
}

#[test]
fn an_srgb_image_over_a_linear_one_and_back() {
    let e = Env::new();
    let bytes: Vec<u8> = (0..W * H * 4).map(|i| (i * 37 + 11) as u8).collect();
    let host = HostImage {
        fmt: RGBA_UNORM8,
        shape: Shape {
            ty: Ty::D2,
            size: [W, H, 1],
        },
        data: bytes.clone(),
    };
    let rgba = Img::from_host(&e, CL_MEM_READ_WRITE, &host);
    let srgba = create(&e, CL_MEM_READ_ONLY, CL_sRGBA, &desc(rgba.mem)).expect("sRGBA over RGBA");
    assert_eq!(
        mem_val::<cl_mem>(srgba, CL_MEM_ASSOCIATED_MEMOBJECT),
        rgba.mem
    );
    let prog = e.program(
        "kernel void get(read_only image2d_t img, global float4 *out) {\n\
         \x20   int x = get_global_id(0), y = get_global_id(1);\n\
         \x20   out[y * get_image_width(img) + x] = read_imagef(img, (int2)(x, y));\n}\n\
         kernel void put(write_only image2d_t img) {\n\
         \x20   int x = get_global_id(0), y = get_global_id(1);\n\
         \x20   write_imagef(img, (int2)(x, y), (float4)(x / 255.0f, y / 255.0f, 1.0f, 0.0f));\n}\n",
        "",
    );
    let get = kernel(prog, "get");
    let check_views = |bytes: &[u8], what: &str| {
        let linear = read_all(&e, get, rgba.mem);
        let srgb = read_all(&e, get, srgba);
        for (i, &b) in bytes.iter().enumerate() {
            let alpha = i % 4 == 3;
            assert!(
                (linear[i] - b as f32 / 255.0).abs() < 1e-6,
                "{what}: linear {i}"
            );
            let want = if alpha {
                b as f32 / 255.0
            } else {
                srgb_to_linear(b)
            };
            // The spec allows sRGB conversions 0.5 ULP of the 8-bit value off.
            assert!(
                (srgb[i] - want).abs() < 0.6 / 255.0,
                "{what}: sRGB {i}: {} vs {want}",
                srgb[i]
            );
        }
    };
    check_views(&bytes, "initial");
    // Written through the linear image: the sRGB one reads the new bytes.
    let put = kernel(prog, "put");
    arg(put, 0, &rgba.mem);
    e.run(put, None, &[W, H], None);
    let written: Vec<u8> = (0..W * H)
        .flat_map(|p| [(p % W) as u8, (p / W) as u8, 255, 0])
        .collect();
    check_views(&written, "after a kernel wrote the linear image");
    // The other way: a linear image over an sRGB one, written by the host.
    // (Its flags come from the read-only sRGB image: asking for more is CL_INVALID_VALUE.)
    assert_eq!(
        create(&e, CL_MEM_READ_WRITE, CL_RGBA, &desc(srgba)).err(),
        Some(CL_INVALID_VALUE)
    );
    let linear_of_srgb = create(&e, 0, CL_RGBA, &desc(srgba)).expect("RGBA over sRGBA");
    let px = [1u8, 2, 3, 4];
    check!(clEnqueueWriteImage(
        e.queue,
        linear_of_srgb,
        CL_TRUE,
        [3usize, 1, 0].as_ptr(),
        [1usize, 1, 1].as_ptr(),
        0,
        0,
        px.as_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    let mut want = written.clone();
    want[(W + 3) * 4..(W + 4) * 4].copy_from_slice(&px);
    check_views(&want, "after the host wrote a third view");
    check!(clReleaseKernel(get));
    check!(clReleaseKernel(put));
    check!(clReleaseProgram(prog));
    check!(clReleaseMemObject(linear_of_srgb));
    check!(clReleaseMemObject(srgba));
}

#[test]
fn image_from_image_errors() {
    let e = Env::new();
    let rgba = Img::new(&e, CL_MEM_READ_WRITE, RGBA_UNORM8, Ty::D2.small());
    let mut d = desc(rgba.mem);
    // Not a twin format: another data type, or an unrelated channel order.
    let f = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNSIGNED_INT8,
    };
    let mut err = 1;
    d.image_width = Ty::D2.small().size[0];
    d.image_height = Ty::D2.small().size[1];
    let m = unsafe { clCreateImage(e.ctx, 0, &f, &d, null_mut(), &mut err) };
    assert_eq!((m, err), (null_mut(), CL_INVALID_IMAGE_FORMAT_DESCRIPTOR));
    assert_eq!(
        create(&e, CL_MEM_READ_ONLY, CL_BGRA, &d).err(),
        Some(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    );
    // Another size or row pitch.
    let mut other = d;
    other.image_width -= 1;
    assert_eq!(
        create(&e, CL_MEM_READ_ONLY, CL_sRGBA, &other).err(),
        Some(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    other = d;
    other.image_row_pitch = d.image_width * 4 + 4;
    assert_eq!(
        create(&e, CL_MEM_READ_ONLY, CL_sRGBA, &other).err(),
        Some(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    // A 3D image is not a 2D image's source.
    let d3 = Img::new(&e, CL_MEM_READ_WRITE, RGBA_UNORM8, Ty::D3.small());
    let mut from3 = d;
    from3.mem_object = d3.mem;
    assert_eq!(
        create(&e, CL_MEM_READ_ONLY, CL_sRGBA, &from3).err(),
        Some(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    // The same format is allowed, and the twin.
    let same = create(&e, CL_MEM_READ_ONLY, CL_RGBA, &d).expect("same format");
    let twin = create(&e, CL_MEM_READ_ONLY, CL_sRGBA, &d).expect("sRGB twin");
    check!(clReleaseMemObject(same));
    check!(clReleaseMemObject(twin));
}
