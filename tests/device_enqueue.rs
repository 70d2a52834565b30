//! Device-side enqueue (OpenCL C 2.0 §6.13.17, OpenCL 3.0 §5.1 on-device queues): blocks
//! enqueued by kernels, their events and markers, the ND-range forms, `__local` blocks, the
//! error codes of enqueue_kernel, and the API of on-device queues.
#[macro_use]
mod common;
use common::*;
use std::ptr::{null, null_mut};

const CL_QUEUE_ON_DEVICE_DEFAULT: cl_bitfield = 1 << 3;
const CL_QUEUE_DEVICE_DEFAULT: cl_uint = 0x1095;
const CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES: cl_uint = 0x1070;
const CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES: cl_uint = 0x104E;
const CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE: cl_uint = 0x104F;
const CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE: cl_uint = 0x1050;
const CL_DEVICE_MAX_ON_DEVICE_QUEUES: cl_uint = 0x1051;
const CL_DEVICE_MAX_ON_DEVICE_EVENTS: cl_uint = 0x1052;
const CL_DEVICE_OPENCL_C_VERSION: cl_uint = 0x103D;

/// Whether the device offers device-side enqueue; where the compiler it needs (clang-15) is
/// installed, a device with buffer device addresses must.
fn supported(dev: cl_device_id) -> bool {
    let caps: cl_bitfield = device_val(dev, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES);
    let clang = std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| d.join("clang-15").is_file())
    });
    let addresses = device_str(dev, CL_DEVICE_EXTENSIONS).contains("cl_ext_buffer_device_address");
    assert_eq!(caps != 0, clang && addresses, "device-side enqueue offered where it works");
    caps != 0
}

/// A context with a host queue and a default device queue.
fn env() -> Option<(Env, cl_command_queue)> {
    let e = Env::new();
    if !supported(e.dev) {
        return None;
    }
    let props = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        0,
    ];
    let mut err = 0;
    let q = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, props.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS, "on-device queue: {}", err_name(err));
    Some((e, q))
}

fn build(e: &Env, src: &str, std: &str) -> cl_program {
    match build_program(e.ctx, e.dev, src, std) {
        Ok(p) => p,
        Err((code, log)) => panic!("{}: {log}", err_name(code)),
    }
}

const CAPTURES: &str = r#"
typedef struct { char c; int i; float2 f; } S;
kernel void parent(global long *out, int n, long big, float x, char c, float4 v, S s) {
    size_t id = get_global_id(0);
    short sh = (short)(id * 3);
    int r = enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_WAIT_KERNEL, ndrange_1D(n),
        ^{
            size_t j = get_global_id(0);
            global long *o = out + 16 * (id * n + j);
            o[0] = (long)id; o[1] = (long)j; o[2] = big; o[3] = (long)(x * 4.0f); o[4] = c;
            o[5] = (long)(v.x + v.y * 10 + v.z * 100 + v.w * 1000); o[6] = s.c; o[7] = s.i;
            o[8] = (long)(s.f.y * 2.0f); o[9] = sh; o[10] = (long)get_global_size(0);
        });
    out[1024 + id] = r;
}
"#;

/// Each work-item enqueues a block over `n` work-items that writes what it captured: values
/// of every size (char to long, a vector, a struct, a pointer), its own id.
#[test]
fn blocks_capture_values_of_every_kind() {
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let Some((e, dq)) = env() else { return };
        let p = build(&e, CAPTURES, std);
        let k = kernel(p, "parent");
        let out = e.buffer_from(&vec![0i64; 1024 + 8]);
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct S {
            c: i8,
            i: i32,
            f: [f32; 2],
        }
        let n = 5i32;
        arg(k, 0, &out);
        arg(k, 1, &n);
        arg(k, 2, &(1i64 << 40));
        arg(k, 3, &2.5f32);
        arg(k, 4, &(-7i8));
        arg(k, 5, &[1.0f32, 2.0, 3.0, 4.0]);
        arg(k, 6, &S { c: 9, i: -123456, f: [0.5, 7.5] });
        e.run(k, None, &[4], None);
        let o: Vec<i64> = e.read(out, 1024 + 8);
        for id in 0..4usize {
            assert_eq!(o[1024 + id], 0, "{std}: enqueue_kernel's result for {id}");
            for j in 0..n as usize {
                let r = &o[16 * (id * n as usize + j)..][..11];
                assert_eq!(
                    r,
                    [id as i64, j as i64, 1 << 40, 10, -7, 4321, 9, -123456, 15, 3 * id as i64, n as i64],
                    "{std}: child {j} of {id}"
                );
            }
        }
        check!(clReleaseMemObject(out));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
        check!(clReleaseCommandQueue(dq));
    }
}
