//! clCreateImage, clCreateImageWithProperties, clCreateImage2D/3D: errors, and the values
//! clGetImageInfo and clGetMemObjectInfo report for every image type.
use crate::common::*;
use crate::format::*;
use crate::util::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn create_err(
    e: &Env,
    flags: cl_bitfield,
    fmt: Format,
    desc: &cl_image_desc,
    host: *mut c_void,
) -> cl_int {
    match create_image(e, flags, fmt, desc, host) {
        Ok(m) => {
            check!(clReleaseMemObject(m));
            CL_SUCCESS
        }
        Err(c) => c,
    }
}

/// Asserts a creation error. pocl 3.1's clCreateImage validates little of the descriptor and
/// flags (no host pointer, pitch, buffer or flag inheritance checks) and answers
/// CL_INVALID_OPERATION, CL_INVALID_VALUE or CL_INVALID_MEM_OBJECT for the errors it finds
/// (lib/CL/clCreateImage.c): on pocl the code is not checked; vkcl is held to the exact code.
fn assert_create_err(got: cl_int, want: cl_int, what: &str) {
    if is_pocl() {
        return;
    }
    assert_eq!(
        got,
        want,
        "{what}: expected {}, got {}",
        err_name(want),
        err_name(got)
    );
}

fn usize_info(m: cl_mem, p: cl_uint) -> usize {
    image_val(m, p)
}

/// clGetImageInfo for every parameter, against the values the spec prescribes for the type.
fn check_image_info(m: cl_mem, fmt: Format, shape: Shape, buf: cl_mem) {
    let what = format!("{:?} {fmt}", shape.ty);
    let f: cl_image_format = image_val(m, CL_IMAGE_FORMAT);
    assert_eq!(Format::from_cl(f), fmt, "{what}");
    let elem = fmt.elem_size();
    assert_eq!(usize_info(m, CL_IMAGE_ELEMENT_SIZE), elem, "{what}");
    let [w, h, d] = shape.size;
    assert_eq!(usize_info(m, CL_IMAGE_WIDTH), w, "{what}");
    // "height ... 0 for a 1D image, 1D image buffer and 1D image array", "depth ... 0 for
    // anything but a 3D image", "array size ... 0 if image is not an image array"
    let (height, depth, array) = match shape.ty {
        Ty::D1 | Ty::D1Buffer => (0, 0, 0),
        Ty::D1Array => (0, 0, h),
        Ty::D2 => (h, 0, 0),
        Ty::D2Array => (h, 0, d),
        Ty::D3 => (h, d, 0),
    };
    assert_eq!(usize_info(m, CL_IMAGE_HEIGHT), height, "{what} height");
    assert_eq!(usize_info(m, CL_IMAGE_DEPTH), depth, "{what} depth");
    assert_eq!(
        usize_info(m, CL_IMAGE_ARRAY_SIZE),
        array,
        "{what} array size"
    );
    let rp = usize_info(m, CL_IMAGE_ROW_PITCH);
    assert!(rp >= w * elem, "{what}: row pitch {rp}");
    let sp = usize_info(m, CL_IMAGE_SLICE_PITCH);
    // "slice pitch ... For a 1D image, 1D image buffer and 2D image object return 0."
    match shape.ty {
        Ty::D1 | Ty::D1Buffer | Ty::D2 => assert_eq!(sp, 0, "{what} slice pitch"),
        Ty::D1Array => assert!(sp >= rp, "{what}: slice pitch {sp} < row pitch {rp}"),
        Ty::D2Array | Ty::D3 => assert!(sp >= rp * h, "{what}: slice pitch {sp}"),
    }
    assert_eq!(image_val::<cl_mem>(m, CL_IMAGE_BUFFER), buf, "{what}");
    assert_eq!(
        image_val::<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS),
        0,
        "{what}"
    );
    assert_eq!(image_val::<cl_uint>(m, CL_IMAGE_NUM_SAMPLES), 0, "{what}");
    // clGetMemObjectInfo on an image
    assert_eq!(mem_val::<cl_uint>(m, CL_MEM_TYPE), shape.ty.cl(), "{what}");
    let size: usize = mem_val(m, CL_MEM_SIZE);
    assert!(size >= shape.pixels() * elem, "{what}: CL_MEM_SIZE {size}");
    assert_eq!(
        mem_val::<cl_mem>(m, CL_MEM_ASSOCIATED_MEMOBJECT),
        buf,
        "{what}"
    );
    assert_eq!(mem_val::<usize>(m, CL_MEM_OFFSET), 0, "{what}");
    assert_eq!(mem_val::<cl_uint>(m, CL_MEM_MAP_COUNT), 0, "{what}");
}

#[test]
fn image_info_for_every_type() {
    let e = Env::new();
    for ty in ALL_TYPES {
        let img = Img::new(&e, CL_MEM_READ_WRITE, RGBA_UNORM16, ty.small());
        check_image_info(img.mem, RGBA_UNORM16, img.shape, img.buf);
        assert_eq!(mem_val::<cl_mem>(img.mem, CL_MEM_HOST_PTR), null_mut());
        assert_eq!(mem_val::<cl_context>(img.mem, CL_MEM_CONTEXT), e.ctx);
        assert_eq!(mem_val::<cl_uint>(img.mem, CL_MEM_REFERENCE_COUNT), 1);
        assert_eq!(
            mem_val::<cl_bitfield>(img.mem, CL_MEM_FLAGS),
            CL_MEM_READ_WRITE
        );
    }
    let img = Img::new(&e, CL_MEM_READ_ONLY, R_FLOAT, Ty::D2.small());
    check_image_info(img.mem, R_FLOAT, img.shape, null_mut());
    // An unknown parameter, and a value buffer too small.
    let mut v = [0u8; 64];
    check_err!(
        clGetImageInfo(img.mem, 0x1234, 64, v.as_mut_ptr().cast(), null_mut()),
        CL_INVALID_VALUE
    );
    check_err!(
        clGetImageInfo(
            img.mem,
            CL_IMAGE_WIDTH,
            1,
            v.as_mut_ptr().cast(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    // A buffer is not an image (pocl 3.1 answers image queries on buffers, see
    // tests/robustness_memory.rs).
    if !is_pocl() {
        let b = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
        check_err!(
            clGetImageInfo(b, CL_IMAGE_WIDTH, 8, v.as_mut_ptr().cast(), null_mut()),
            CL_INVALID_MEM_OBJECT
        );
        check!(clReleaseMemObject(b));
    }
}

/// USE_HOST_PTR with pitches larger than packed: the image reports them, CL_MEM_HOST_PTR is the
/// pointer; COPY_HOST_PTR reports no host pointer; both start with the host data.
#[test]
fn images_from_host_memory_with_pitches() {
    let e = Env::new();
    for ty in [Ty::D1, Ty::D1Array, Ty::D2, Ty::D2Array, Ty::D3] {
        for fmt in [RGBA_UNORM8, RGBA_FLOAT] {
            let shape = ty.small();
            let want = HostImage::pattern(fmt, shape, 11);
            let elem = fmt.elem_size();
            let [w, h, _] = shape.size;
            let rp = (w + 3) * elem;
            let (rp, sp) = match ty {
                Ty::D1 => (0, 0),
                // pocl 3.1 lays 1D array layers out `row_pitch` apart in host memory, not
                // `slice_pitch` ("the size in bytes of each image in a 1D image array").
                Ty::D1Array if is_pocl() => (rp, rp),
                Ty::D1Array => (rp, rp * 2),
                Ty::D2 => (rp, 0),
                _ => (rp, rp * (h + 1)),
            };
            let bytes = want.region_bytes([0; 3], shape.size, rp, sp, 0xEE);
            let what = format!("{ty:?} {fmt}");
            for flags in [CL_MEM_USE_HOST_PTR, CL_MEM_COPY_HOST_PTR] {
                let mut host = Aligned::new(bytes.len());
                host.bytes().copy_from_slice(&bytes);
                let desc = shape.desc(rp, sp, null_mut());
                let m = create_image(&e, CL_MEM_READ_WRITE | flags, fmt, &desc, host.ptr.cast())
                    .unwrap_or_else(|c| panic!("{what}: {}", err_name(c)));
                check_image_info(m, fmt, shape, null_mut());
                let hp: *mut c_void = mem_val(m, CL_MEM_HOST_PTR);
                if flags == CL_MEM_USE_HOST_PTR {
                    assert_eq!(hp, host.ptr.cast(), "{what}");
                    if rp != 0 {
                        assert_eq!(usize_info(m, CL_IMAGE_ROW_PITCH), rp, "{what}");
                    }
                    if sp != 0 {
                        assert_eq!(usize_info(m, CL_IMAGE_SLICE_PITCH), sp, "{what}");
                    }
                } else {
                    assert!(hp.is_null(), "{what}: COPY_HOST_PTR reports a host pointer");
                    host.bytes().fill(0); // the image holds its own copy
                }
                let img = Img {
                    mem: m,
                    buf: null_mut(),
                    fmt,
                    shape,
                };
                assert_same(
                    &img.download(&e),
                    &want,
                    &format!("{what} flags {flags:#x}"),
                );
            }
        }
    }
}

#[test]
fn create_image_format_errors() {
    let e = Env::new();
    let desc = Ty::D2.small().desc(0, 0, null_mut());
    let mut err = 1;
    let m = unsafe {
        clCreateImage(
            e.ctx,
            CL_MEM_READ_WRITE,
            null(),
            &desc,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!((m, err), (null_mut(), CL_INVALID_IMAGE_FORMAT_DESCRIPTOR));
    // Combinations the channel order / data type tables exclude, and unknown values.
    for bad in [
        fmt(CL_RGBA, CL_UNORM_SHORT_565),
        fmt(CL_RGBA, CL_UNORM_SHORT_555),
        fmt(CL_R, CL_UNORM_INT_101010),
        fmt(CL_RG, CL_UNORM_INT_101010_2),
        fmt(CL_RGB, CL_UNORM_INT8),
        fmt(CL_RGBx, CL_FLOAT),
        fmt(CL_INTENSITY, CL_SIGNED_INT8),
        fmt(CL_LUMINANCE, CL_UNSIGNED_INT32),
        fmt(0x1234, CL_UNORM_INT8),
        fmt(CL_RGBA, 0x1234),
        fmt(0, 0),
    ] {
        let got = create_err(&e, CL_MEM_READ_WRITE, bad, &desc, null_mut());
        let what = format!("{:#x}/{:#x}", bad.order, bad.ty);
        assert_create_err(got, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, &what);
    }
}

#[test]
fn create_image_descriptor_errors() {
    let e = Env::new();
    let f = RGBA_UNORM8.cl();
    let mut err = 1;
    let m = unsafe { clCreateImage(e.ctx, CL_MEM_READ_WRITE, &f, null(), null_mut(), &mut err) };
    assert_eq!((m, err), (null_mut(), CL_INVALID_IMAGE_DESCRIPTOR));
    let rw = CL_MEM_READ_WRITE;
    let bad = |what: &str, d: cl_image_desc, host: *mut c_void, flags| {
        let got = create_err(&e, flags, RGBA_UNORM8, &d, host);
        assert_create_err(got, CL_INVALID_IMAGE_DESCRIPTOR, what);
    };
    for t in [0, CL_MEM_OBJECT_BUFFER, CL_MEM_OBJECT_PIPE, 0x10FF] {
        let mut d = Ty::D2.small().desc(0, 0, null_mut());
        d.image_type = t;
        bad(&format!("image_type {t:#x}"), d, null_mut(), rw);
    }
    let buf = e.buffer(CL_MEM_READ_WRITE, 4096, null_mut());
    for ty in ALL_TYPES {
        let b = if ty == Ty::D1Buffer { buf } else { null_mut() };
        let base = ty.small().desc(0, 0, b);
        let mut d = base;
        d.image_width = 0;
        bad(&format!("{ty:?} width 0"), d, null_mut(), rw);
        if matches!(ty, Ty::D2 | Ty::D2Array | Ty::D3) {
            let mut d = base;
            d.image_height = 0;
            bad(&format!("{ty:?} height 0"), d, null_mut(), rw);
        }
        if ty == Ty::D3 {
            let mut d = base;
            d.image_depth = 0;
            bad("3D depth 0", d, null_mut(), rw);
        }
        if ty.is_array() {
            let mut d = base;
            d.image_array_size = 0;
            bad(&format!("{ty:?} array size 0"), d, null_mut(), rw);
        }
        // "num_mip_levels and num_samples must be 0" (without cl_khr_mipmap_image)
        // (pocl 3.1 aborts the process on non-zero num_mip_levels or num_samples.)
        let mut d = base;
        d.num_samples = 1;
        if !is_pocl() {
            bad(&format!("{ty:?} num_samples 1"), d, null_mut(), rw);
        }
        if !is_pocl() && !has_extension(&e, "cl_khr_mipmap_image") {
            let mut d = base;
            d.num_mip_levels = 1;
            bad(&format!("{ty:?} num_mip_levels 1"), d, null_mut(), rw);
        }
        if ty == Ty::D1Buffer {
            continue;
        }
        // "row pitch ... must be 0 if host_ptr is NULL"
        let mut d = base;
        d.image_row_pitch = 4 * 64;
        bad(
            &format!("{ty:?} row pitch without host_ptr"),
            d,
            null_mut(),
            rw,
        );
        if matches!(ty, Ty::D1Array | Ty::D2Array | Ty::D3) {
            let mut d = base;
            d.image_slice_pitch = 4 * 64 * 8;
            bad(
                &format!("{ty:?} slice pitch without host_ptr"),
                d,
                null_mut(),
                rw,
            );
        }
        // With a host pointer: "≥ width * element size" and "a multiple of the element size".
        let mut host = Aligned::new(1 << 16);
        let hp: *mut c_void = host.bytes().as_mut_ptr().cast();
        let cp = rw | CL_MEM_COPY_HOST_PTR;
        let w = base.image_width;
        let mut d = base;
        d.image_row_pitch = w * 4 - 4;
        bad(&format!("{ty:?} row pitch < width"), d, hp, cp);
        let mut d = base;
        d.image_row_pitch = w * 4 + 2;
        bad(&format!("{ty:?} row pitch not a multiple"), d, hp, cp);
        // "≥ row pitch * height (2D array, 3D) or ≥ row pitch (1D array); a multiple of it"
        if matches!(ty, Ty::D1Array | Ty::D2Array | Ty::D3) {
            let rows = if ty == Ty::D1Array {
                1
            } else {
                base.image_height
            };
            let rp = w * 4 + 8;
            let mut d = base;
            d.image_row_pitch = rp;
            d.image_slice_pitch = rp * rows - rp;
            if d.image_slice_pitch != 0 {
                bad(&format!("{ty:?} slice pitch too small"), d, hp, cp);
            }
            d.image_slice_pitch = rp * rows + 4;
            bad(&format!("{ty:?} slice pitch not a multiple"), d, hp, cp);
        }
    }
    // A buffer only describes 1D buffer images (and 2D with cl_khr_image2d_from_buffer); a 1D
    // buffer image needs one holding "image_width * element size" bytes.
    for ty in [Ty::D1, Ty::D1Array, Ty::D2Array, Ty::D3] {
        bad(
            &format!("{ty:?} with a buffer"),
            ty.small().desc(0, 0, buf),
            null_mut(),
            rw,
        );
    }
    bad(
        "1D buffer without a buffer",
        Ty::D1Buffer.small().desc(0, 0, null_mut()),
        null_mut(),
        rw,
    );
    let mut d = Ty::D1Buffer.small().desc(0, 0, buf);
    d.image_width = 4096 / 4 + 1;
    bad("1D buffer larger than its buffer", d, null_mut(), rw);
    check!(clReleaseMemObject(buf));
}

#[test]
fn create_image_size_errors() {
    let e = Env::new();
    let max2d: usize = device_val(e.dev, CL_DEVICE_IMAGE2D_MAX_WIDTH);
    let max2dh: usize = device_val(e.dev, CL_DEVICE_IMAGE2D_MAX_HEIGHT);
    let max3d: usize = device_val(e.dev, CL_DEVICE_IMAGE3D_MAX_DEPTH);
    let max_array: usize = device_val(e.dev, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
    let max_buf: usize = device_val(e.dev, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE);
    let rw = CL_MEM_READ_WRITE;
    let too_big = |what: &str, d: cl_image_desc| {
        let got = create_err(&e, rw, RGBA_UNORM8, &d, null_mut());
        assert_create_err(got, CL_INVALID_IMAGE_SIZE, what);
    };
    let mut d = Ty::D1.small().desc(0, 0, null_mut());
    d.image_width = max2d + 1;
    too_big("1D width", d);
    let mut d = Ty::D2.small().desc(0, 0, null_mut());
    d.image_width = max2d + 1;
    too_big("2D width", d);
    let mut d = Ty::D2.small().desc(0, 0, null_mut());
    d.image_height = max2dh + 1;
    too_big("2D height", d);
    let mut d = Ty::D3.small().desc(0, 0, null_mut());
    d.image_depth = max3d + 1;
    too_big("3D depth", d);
    let mut d = Ty::D1Array.small().desc(0, 0, null_mut());
    d.image_array_size = max_array + 1;
    too_big("1D array size", d);
    let mut d = Ty::D2Array.small().desc(0, 0, null_mut());
    d.image_array_size = max_array + 1;
    too_big("2D array size", d);
    let buf = e.buffer(CL_MEM_READ_WRITE, 4096, null_mut());
    let mut d = Ty::D1Buffer.small().desc(0, 0, buf);
    d.image_width = max_buf + 1;
    too_big("1D buffer width", d);
    check!(clReleaseMemObject(buf));
    // clCreateImage2D/3D: "CL_INVALID_IMAGE_SIZE if image_width or image_height are 0", "...
    // image_depth <= 1" (pocl 3.1 answers CL_INVALID_BUFFER_SIZE, see
    // tests/robustness_memory.rs).
    if !is_pocl() {
        let f = RGBA_UNORM8.cl();
        let mut err = 1;
        let m = unsafe { clCreateImage2D(e.ctx, rw, &f, 0, 4, 0, null_mut(), &mut err) };
        assert_eq!((m, err), (null_mut(), CL_INVALID_IMAGE_SIZE));
        let m = unsafe { clCreateImage3D(e.ctx, rw, &f, 4, 4, 1, 0, 0, null_mut(), &mut err) };
        assert_eq!((m, err), (null_mut(), CL_INVALID_IMAGE_SIZE));
    }
}

/// A format in no channel order / data type exclusion but not in the supported list.
fn unsupported_valid_format(e: &Env) -> Option<Format> {
    let listed = supported(e, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D);
    [
        fmt(CL_RGB, CL_UNORM_INT_101010),
        fmt(CL_RGB, CL_UNORM_SHORT_565),
        fmt(CL_RGB, CL_UNORM_SHORT_555),
        fmt(CL_RGBx, CL_UNORM_SHORT_565),
        fmt(CL_ABGR, CL_SNORM_INT8),
        fmt(CL_ARGB, CL_SIGNED_INT8),
        fmt(CL_RA, CL_UNSIGNED_INT32),
        fmt(CL_A, CL_SIGNED_INT32),
        fmt(CL_Rx, CL_FLOAT),
        fmt(CL_RGx, CL_HALF_FLOAT),
        fmt(CL_LUMINANCE, CL_SNORM_INT16),
        fmt(CL_INTENSITY, CL_HALF_FLOAT),
    ]
    .into_iter()
    .find(|f| !listed.contains(f))
}

#[test]
fn create_image_flag_and_host_ptr_errors() {
    let e = Env::new();
    let shape = Ty::D2.small();
    let d = shape.desc(0, 0, null_mut());
    let host = Aligned::new(4096);
    let hp: *mut c_void = host.ptr.cast();
    let c = |flags, host| create_err(&e, flags, RGBA_UNORM8, &d, host);
    assert_eq!(c(CL_MEM_READ_WRITE, null_mut()), CL_SUCCESS);
    assert_eq!(c(0, null_mut()), CL_SUCCESS, "flags 0 means READ_WRITE");
    assert_create_err(
        c(CL_MEM_COPY_HOST_PTR, null_mut()),
        CL_INVALID_HOST_PTR,
        "COPY",
    );
    assert_create_err(
        c(CL_MEM_USE_HOST_PTR, null_mut()),
        CL_INVALID_HOST_PTR,
        "USE",
    );
    assert_create_err(
        c(CL_MEM_READ_WRITE, hp),
        CL_INVALID_HOST_PTR,
        "host_ptr alone",
    );
    assert_create_err(c(CL_MEM_ALLOC_HOST_PTR, hp), CL_INVALID_HOST_PTR, "ALLOC");
    for bad in [
        CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
        CL_MEM_READ_WRITE | CL_MEM_READ_ONLY,
        CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR,
        CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR,
        CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY,
        CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_READ_ONLY,
        1 << 40,
    ] {
        assert_create_err(c(bad, hp), CL_INVALID_VALUE, &format!("flags {bad:#x}"));
    }
    let f = RGBA_UNORM8.cl();
    let mut err = 1;
    let m = unsafe { clCreateImage(null_mut(), 0, &f, &d, null_mut(), &mut err) };
    assert_eq!((m, err), (null_mut(), CL_INVALID_CONTEXT));
    // CL_IMAGE_FORMAT_NOT_SUPPORTED: a valid format the device does not list.
    let fmt = unsupported_valid_format(&e).expect("the device lists every candidate format");
    let got = create_err(&e, CL_MEM_READ_WRITE, fmt, &d, null_mut());
    let what = format!("{:#x}/{:#x}", fmt.order, fmt.ty);
    assert_create_err(got, CL_IMAGE_FORMAT_NOT_SUPPORTED, &what);
}

/// A 1D image buffer takes its access flags from its buffer where none are given and may not
/// contradict them; host pointer flags come only from the buffer.
#[test]
fn image1d_buffer_flags() {
    let e = Env::new();
    let shape = Ty::D1Buffer.small();
    let n = shape.pixels() * 4;
    let ro = e.buffer(CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY, n, null_mut());
    let wo = e.buffer(CL_MEM_WRITE_ONLY, n, null_mut());
    let c = |flags, b| create_err(&e, flags, RGBA_UNORM8, &shape.desc(0, 0, b), null_mut());
    for (flags, b) in [
        (CL_MEM_READ_WRITE, wo),
        (CL_MEM_READ_ONLY, wo),
        (CL_MEM_WRITE_ONLY, ro),
        (CL_MEM_HOST_WRITE_ONLY, ro),
        (CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, ro),
    ] {
        assert_create_err(c(flags, b), CL_INVALID_VALUE, &format!("flags {flags:#x}"));
    }
    assert_eq!(c(CL_MEM_WRITE_ONLY, wo), CL_SUCCESS);
    let m = create_image(&e, 0, RGBA_UNORM8, &shape.desc(0, 0, ro), null_mut()).unwrap();
    let flags: cl_bitfield = mem_val(m, CL_MEM_FLAGS);
    assert_eq!(
        flags & (CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY),
        CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY,
        "inherited flags {flags:#x}"
    );
    // The image holds a reference to its buffer.
    assert_eq!(mem_val::<cl_uint>(ro, CL_MEM_REFERENCE_COUNT) >= 1, true);
    check!(clReleaseMemObject(m));
    check!(clReleaseMemObject(ro));
    check!(clReleaseMemObject(wo));
}

/// Every 1D buffer image size up to CL_DEVICE_IMAGE_MAX_BUFFER_SIZE works: the conformance
/// tests' 2,647,297 texels of CL_R / CL_SNORM_INT8 (odd, not a multiple of anything), read back
/// at both ends by a kernel.
#[test]
fn large_buffer_images() {
    let e = Env::new();
    let mut max = 0usize;
    check!(clGetDeviceInfo(
        e.dev,
        0x1040, // CL_DEVICE_IMAGE_MAX_BUFFER_SIZE
        8,
        (&mut max as *mut usize).cast(),
        null_mut()
    ));
    let fmt = fmt(CL_R, CL_SNORM_INT8);
    let n = 2_647_297usize;
    assert!(max >= n, "CL_DEVICE_IMAGE_MAX_BUFFER_SIZE {max}");
    let data: Vec<i8> = (0..n).map(|i| ((i % 251) as i32 - 125) as i8).collect();
    let buf = e.buffer_from(&data);
    let shape = Shape {
        ty: Ty::D1Buffer,
        size: [n, 1, 1],
    };
    let img = create_image(
        &e,
        CL_MEM_READ_ONLY,
        fmt,
        &shape.desc(0, 0, buf),
        null_mut(),
    )
    .unwrap_or_else(|c| panic!("clCreateImage of {n} texels: {}", err_name(c)));
    let prog = e.program(
        "kernel void k(read_only image1d_buffer_t img, global float *out, int n) {
            out[0] = read_imagef(img, 0).x;
            out[1] = read_imagef(img, n - 1).x;
            out[2] = read_imagef(img, n / 2).x;
        }",
        "",
    );
    let k = kernel(prog, "k");
    let out = e.buffer(CL_MEM_READ_WRITE, 12, null_mut());
    arg(k, 0, &img);
    arg(k, 1, &out);
    arg(k, 2, &(n as i32));
    e.run(k, None, &[1], None);
    let got: Vec<f32> = e.read(out, 3);
    let want = [0, n - 1, n / 2].map(|i| (data[i] as f32 / 127.0).max(-1.0));
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "got {got:?}, want {want:?}");
    }
    check!(clReleaseMemObject(img));
    check!(clReleaseMemObject(buf));
    check!(clReleaseMemObject(out));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(prog));
}

/// clCreateImage2D/3D and clCreateImageWithProperties make the same images as clCreateImage.
#[test]
fn create_image_variants() {
    let e = Env::new();
    let f = RGBA_FLOAT.cl();
    let s2 = Ty::D2.small();
    let want = HostImage::pattern(RGBA_FLOAT, s2, 5);
    let rp = (s2.size[0] + 1) * 16;
    let mut bytes = want.region_bytes([0; 3], s2.size, rp, 0, 0);
    let mut err = 1;
    let m = unsafe {
        let [w, h, _] = s2.size;
        let flags = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
        clCreateImage2D(
            e.ctx,
            flags,
            &f,
            w,
            h,
            rp,
            bytes.as_mut_ptr().cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    let img = Img {
        mem: m,
        buf: null_mut(),
        fmt: RGBA_FLOAT,
        shape: s2,
    };
    check_image_info(m, RGBA_FLOAT, s2, null_mut());
    assert_same(&img.download(&e), &want, "clCreateImage2D");
    let s3 = Ty::D3.small();
    let [w, h, d] = s3.size;
    let m = unsafe {
        clCreateImage3D(
            e.ctx,
            CL_MEM_READ_WRITE,
            &f,
            w,
            h,
            d,
            0,
            0,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    check_image_info(m, RGBA_FLOAT, s3, null_mut());
    check!(clReleaseMemObject(m));
    // Properties: none given reads back empty, an empty list reads back as [0], an unknown
    // property is refused.
    let desc = s2.desc(0, 0, null_mut());
    let with = |props: *const cl_mem_properties, err: &mut cl_int| unsafe {
        clCreateImageWithProperties(e.ctx, props, CL_MEM_READ_WRITE, &f, &desc, null_mut(), err)
    };
    let m = with(null(), &mut err);
    assert_eq!(err, CL_SUCCESS);
    check_image_info(m, RGBA_FLOAT, s2, null_mut());
    assert!(mem_info(m, CL_MEM_PROPERTIES).is_empty());
    check!(clReleaseMemObject(m));
    let empty: [cl_mem_properties; 1] = [0];
    let m = with(empty.as_ptr(), &mut err);
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(
        bytes_to_vec::<cl_mem_properties>(&mem_info(m, CL_MEM_PROPERTIES)),
        [0]
    );
    check!(clReleaseMemObject(m));
    let unknown: [cl_mem_properties; 3] = [0x7777, 1, 0];
    let m = with(unknown.as_ptr(), &mut err);
    assert_eq!((m, err), (null_mut(), CL_INVALID_PROPERTY));
}
