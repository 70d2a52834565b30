//! 2D images created from buffers (cl_khr_image2d_from_buffer): the buffer's bytes, rows
//! image_row_pitch apart, are the image's texels, whichever side writes them (kernels, image
//! commands, buffer commands), and the padding between rows stays the buffer's.
use super::common::*;
use super::format::RGBA_UINT8;
use super::util::*;
use std::ptr::{null, null_mut};

const W: usize = 7;
const H: usize = 5;
/// Rows padded by three pixels.
const PITCH: usize = (W + 3) * 4;

fn desc(buffer: cl_mem, row_pitch: usize) -> cl_image_desc {
    desc_2d(W, H, row_pitch, buffer)
}

/// The pixel (x, y) of the image inside `bytes` (the buffer's contents).
fn pixel(bytes: &[u8], x: usize, y: usize) -> [u8; 4] {
    let at = y * PITCH + x * 4;
    bytes[at..at + 4].try_into().unwrap()
}

#[test]
fn image2d_from_buffer_shares_the_buffer_bytes() {
    let e = Env::new();
    assert!(has_extension(&e, "cl_khr_image2d_from_buffer"));
    assert!(device_val::<cl_uint>(e.dev, CL_DEVICE_IMAGE_PITCH_ALIGNMENT) >= 1);
    let init: Vec<u8> = (0..PITCH * H).map(|i| (i * 7 + 3) as u8).collect();
    let buf = e.buffer_from(&init);
    let m = create_image(
        &e,
        CL_MEM_READ_WRITE,
        RGBA_UINT8,
        &desc(buf, PITCH),
        null_mut(),
    )
    .expect("image from a buffer");
    assert_eq!(image_val::<usize>(m, CL_IMAGE_ROW_PITCH), PITCH);
    assert_eq!(mem_val::<cl_mem>(m, CL_MEM_ASSOCIATED_MEMOBJECT), buf);

    // A kernel reads the buffer's bytes through the image ...
    let prog = e.program(
        "kernel void get(read_only image2d_t img, global uint4 *out) {\n\
         \x20   int x = get_global_id(0), y = get_global_id(1);\n\
         \x20   out[y * get_image_width(img) + x] = read_imageui(img, (int2)(x, y));\n}\n\
         kernel void put(write_only image2d_t img) {\n\
         \x20   int x = get_global_id(0), y = get_global_id(1);\n\
         \x20   write_imageui(img, (int2)(x, y), (uint4)(x, y, 200, 255));\n}\n",
        "",
    );
    let get = kernel(prog, "get");
    let out = e.buffer(CL_MEM_READ_WRITE, W * H * 16, null_mut());
    arg(get, 0, &m);
    arg(get, 1, &out);
    e.run(get, None, &[W, H], None);
    let got: Vec<u32> = e.read(out, W * H * 4);
    for y in 0..H {
        for x in 0..W {
            let want = pixel(&init, x, y).map(u32::from);
            assert_eq!(
                got[(y * W + x) * 4..][..4],
                want,
                "kernel read of ({x}, {y})"
            );
        }
    }

    // ... and writes land in the buffer, rows at the pitch, the padding untouched.
    let put = kernel(prog, "put");
    arg(put, 0, &m);
    e.run(put, None, &[W, H], None);
    let after: Vec<u8> = e.read(buf, PITCH * H);
    for y in 0..H {
        for x in 0..W + 3 {
            let want = if x < W {
                [x as u8, y as u8, 200, 255]
            } else {
                pixel(&init, x, y)
            };
            assert_eq!(
                pixel(&after, x, y),
                want,
                "buffer pixel ({x}, {y}) after the kernel"
            );
        }
    }

    // A buffer write is what the next image read sees; an image write reaches the buffer.
    let fresh: Vec<u8> = (0..PITCH * H).map(|i| (i * 11 + 1) as u8).collect();
    e.write(buf, &fresh);
    let mut region = vec![0u8; 3 * 2 * 4];
    check!(clEnqueueReadImage(
        e.queue,
        m,
        CL_TRUE,
        [2usize, 1, 0].as_ptr(),
        [3usize, 2, 1].as_ptr(),
        0,
        0,
        region.as_mut_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    for (i, p) in region.chunks(4).enumerate() {
        assert_eq!(
            p,
            pixel(&fresh, 2 + i % 3, 1 + i / 3),
            "image read of the new bytes"
        );
    }
    let px = [9u8, 8, 7, 6];
    check!(clEnqueueWriteImage(
        e.queue,
        m,
        CL_TRUE,
        [6usize, 4, 0].as_ptr(),
        [1usize, 1, 1].as_ptr(),
        0,
        0,
        px.as_ptr().cast(),
        0,
        null(),
        null_mut()
    ));
    let last: Vec<u8> = e.read(buf, PITCH * H);
    let mut want = fresh.clone();
    want[4 * PITCH + 24..4 * PITCH + 28].copy_from_slice(&px);
    assert_eq!(
        last, want,
        "an image write changes exactly its pixel in the buffer"
    );

    check!(clReleaseKernel(get));
    check!(clReleaseKernel(put));
    check!(clReleaseProgram(prog));
    check!(clReleaseMemObject(m));
    check!(clReleaseMemObject(out));
    check!(clReleaseMemObject(buf));
}

#[test]
fn image2d_from_buffer_errors() {
    let e = Env::new();
    let buf = e.buffer(CL_MEM_READ_WRITE, PITCH * H, null_mut());
    let create = |d: &cl_image_desc, host: *mut std::ffi::c_void| {
        create_image(&e, CL_MEM_READ_WRITE, RGBA_UINT8, d, host)
    };
    // A row pitch that is not whole pixels, or rows that do not fit in the buffer.
    assert_eq!(
        create(&desc(buf, PITCH + 2), null_mut()).err(),
        Some(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    assert_eq!(
        create(&desc(buf, PITCH + 4), null_mut()).err(),
        Some(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    assert_eq!(
        create(&desc(buf, W * 4 - 4), null_mut()).err(),
        Some(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    // No host pointer of its own.
    let mut host = vec![0u8; PITCH * H];
    assert_eq!(
        create(&desc(buf, PITCH), host.as_mut_ptr().cast()).err(),
        Some(CL_INVALID_HOST_PTR)
    );
    // A row pitch of 0: packed rows (fit easily).
    let m = create(&desc(buf, 0), null_mut()).expect("packed rows");
    assert_eq!(image_val::<usize>(m, CL_IMAGE_ROW_PITCH), W * 4);
    check!(clReleaseMemObject(m));
    check!(clReleaseMemObject(buf));
}
