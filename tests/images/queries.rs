//! Image device queries and clGetSupportedImageFormats.
use crate::common::*;
use crate::format::*;
use crate::util::*;
use std::ptr::null_mut;

/// The OpenCL C features the device reports (CL_DEVICE_OPENCL_C_FEATURES).
pub fn c_features(e: &Env) -> Vec<String> {
    bytes_to_vec::<cl_name_version>(&device_info(e.dev, CL_DEVICE_OPENCL_C_FEATURES))
        .iter()
        .map(|f| f.name())
        .collect()
}

/// CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS: non-zero where read_write images are supported.
pub fn max_rw_args(e: &Env) -> u32 {
    device_val(e.dev, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS)
}

#[test]
fn device_reports_images_with_the_full_profile_minimums() {
    let e = Env::new();
    let d = e.dev;
    assert_eq!(device_val::<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT), CL_TRUE);
    // Device queries table: minimum values for a full-profile device with images.
    for (name, q, min) in [
        ("IMAGE2D_MAX_WIDTH", CL_DEVICE_IMAGE2D_MAX_WIDTH, 16384),
        ("IMAGE2D_MAX_HEIGHT", CL_DEVICE_IMAGE2D_MAX_HEIGHT, 16384),
        ("IMAGE3D_MAX_WIDTH", CL_DEVICE_IMAGE3D_MAX_WIDTH, 2048),
        ("IMAGE3D_MAX_HEIGHT", CL_DEVICE_IMAGE3D_MAX_HEIGHT, 2048),
        ("IMAGE3D_MAX_DEPTH", CL_DEVICE_IMAGE3D_MAX_DEPTH, 2048),
        (
            "IMAGE_MAX_BUFFER_SIZE",
            CL_DEVICE_IMAGE_MAX_BUFFER_SIZE,
            65536,
        ),
        ("IMAGE_MAX_ARRAY_SIZE", CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, 2048),
    ] {
        let v: usize = device_val(d, q);
        assert!(v >= min, "CL_DEVICE_{name} = {v} < {min}");
    }
    for (name, q, min) in [
        ("MAX_READ_IMAGE_ARGS", CL_DEVICE_MAX_READ_IMAGE_ARGS, 128),
        ("MAX_WRITE_IMAGE_ARGS", CL_DEVICE_MAX_WRITE_IMAGE_ARGS, 64),
        ("MAX_SAMPLERS", CL_DEVICE_MAX_SAMPLERS, 16),
    ] {
        let v: u32 = device_val(d, q);
        assert!(v >= min, "CL_DEVICE_{name} = {v} < {min}");
    }
    // "64 if the device supports read-write images (__opencl_c_read_write_images), else 0"
    let feats = c_features(&e);
    let has = |f: &str| feats.iter().any(|x| x == f);
    let rw = max_rw_args(&e);
    assert!(rw == 0 || rw >= 64, "MAX_READ_WRITE_IMAGE_ARGS {rw}");
    assert_eq!(rw > 0, has("__opencl_c_read_write_images"), "{feats:?}");
    assert!(
        has("__opencl_c_images"),
        "images without __opencl_c_images: {feats:?}"
    );
    assert_eq!(
        has_3d_writes(&e),
        has("__opencl_c_3d_image_writes"),
        "cl_khr_3d_image_writes and __opencl_c_3d_image_writes disagree"
    );
    // Pitch and base address alignment describe 2D images from buffers: 0 without
    // cl_khr_image2d_from_buffer, a power of two with it.
    let pitch: u32 = device_val(d, CL_DEVICE_IMAGE_PITCH_ALIGNMENT);
    let base: u32 = device_val(d, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT);
    if has_extension(&e, "cl_khr_image2d_from_buffer") {
        assert!(
            pitch.is_power_of_two() && base.is_power_of_two(),
            "{pitch} {base}"
        );
    } else {
        assert_eq!((pitch, base), (0, 0));
    }
}

const FLAG_SETS: [(&str, cl_bitfield); 3] = [
    ("READ_ONLY", CL_MEM_READ_ONLY),
    ("WRITE_ONLY", CL_MEM_WRITE_ONLY),
    ("READ_WRITE", CL_MEM_READ_WRITE),
];

#[test]
fn supported_formats_include_the_minimum_lists_for_every_type() {
    let e = Env::new();
    for ty in ALL_TYPES {
        for (fname, flags) in FLAG_SETS {
            let list = supported(&e, flags, ty.cl());
            for f in MIN_READ_OR_WRITE {
                assert!(list.contains(&f), "{ty:?} {fname}: {f} missing");
            }
            for (i, f) in list.iter().enumerate() {
                assert!(!list[..i].contains(f), "{ty:?} {fname}: {f:?} listed twice");
            }
        }
        if max_rw_args(&e) > 0 {
            for flags in [
                CL_MEM_KERNEL_READ_AND_WRITE,
                CL_MEM_KERNEL_READ_AND_WRITE | CL_MEM_READ_WRITE,
            ] {
                let list = supported(&e, flags, ty.cl());
                for f in min_read_and_write() {
                    assert!(
                        list.contains(&f),
                        "{ty:?} KERNEL_READ_AND_WRITE: {f} missing"
                    );
                }
            }
        }
    }
}

#[test]
fn supported_formats_fills_at_most_num_entries() {
    let e = Env::new();
    let all = supported(&e, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D);
    assert!(all.len() >= 3);
    let sentinel = cl_image_format {
        image_channel_order: 0xDEAD,
        image_channel_data_type: 0xBEEF,
    };
    let mut v = vec![sentinel; all.len()];
    let mut n = 0;
    check!(clGetSupportedImageFormats(
        e.ctx,
        CL_MEM_READ_ONLY,
        CL_MEM_OBJECT_IMAGE2D,
        2,
        v.as_mut_ptr(),
        &mut n
    ));
    assert_eq!(n as usize, all.len(), "num_image_formats is the full count");
    assert_eq!(Format::from_cl(v[0]), all[0]);
    assert_eq!(Format::from_cl(v[1]), all[1]);
    assert_eq!(Format::from_cl(v[2]), Format::from_cl(sentinel));
    // Both outputs are optional.
    check!(clGetSupportedImageFormats(
        e.ctx,
        CL_MEM_READ_ONLY,
        CL_MEM_OBJECT_IMAGE2D,
        1,
        v.as_mut_ptr(),
        null_mut()
    ));
}

#[test]
fn supported_formats_errors() {
    let e = Env::new();
    let mut v = [cl_image_format::default(); 4];
    let mut n = 7;
    let q = |ctx, flags, ty, num, out: *mut cl_image_format, n: &mut u32| unsafe {
        clGetSupportedImageFormats(ctx, flags, ty, num, out, n)
    };
    let out = v.as_mut_ptr();
    for bad_ty in [0, CL_MEM_OBJECT_BUFFER, CL_MEM_OBJECT_PIPE, 0x10FF] {
        assert_eq!(
            q(e.ctx, CL_MEM_READ_WRITE, bad_ty, 4, out, &mut n),
            CL_INVALID_VALUE,
            "type {bad_ty:#x}"
        );
    }
    // "num_entries is 0 and image_formats is not NULL"
    assert_eq!(
        q(
            e.ctx,
            CL_MEM_READ_WRITE,
            CL_MEM_OBJECT_IMAGE2D,
            0,
            out,
            &mut n
        ),
        CL_INVALID_VALUE
    );
    // pocl 3.1 does not validate flags (also noted in tests/robustness_memory.rs).
    if !is_pocl() {
        for bad in [
            CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
            CL_MEM_READ_WRITE | CL_MEM_READ_ONLY,
            CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY,
            1 << 40,
        ] {
            assert_eq!(
                q(e.ctx, bad, CL_MEM_OBJECT_IMAGE2D, 4, out, &mut n),
                CL_INVALID_VALUE,
                "flags {bad:#x}"
            );
        }
    }
    assert_eq!(
        q(
            null_mut(),
            CL_MEM_READ_WRITE,
            CL_MEM_OBJECT_IMAGE2D,
            4,
            out,
            &mut n
        ),
        CL_INVALID_CONTEXT
    );
}
