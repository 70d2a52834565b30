//! A NULL buffer argument (clSetKernelArg with NULL arg_value, or a pointer to a NULL cl_mem)
//! arrives in the kernel as a null pointer (issue 16): `p == 0`, `!p`, `if (p)` see it. A
//! write through one that the kernel does not test is discarded, not a crash.
#[macro_use]
mod common;
use common::*;
use std::ptr::null;

const SRC: &str = r#"
kernel void tests(global int *buf, global int *res) {
    res[0] = buf == 0;
    res[1] = buf != NULL;
    res[2] = !buf;
    res[3] = buf ? 10 : 20;
    if (buf) buf[0] = 7;
}
kernel void writes(global int *p, global int *res) {
    p[get_global_id(0)] = 5;
    res[get_global_id(0)] = 1;
}
"#;

#[test]
fn a_null_buffer_argument_is_a_null_pointer() {
    let e = Env::new();
    let p = e.program(SRC, "");
    let k = kernel(p, "tests");
    let res = e.buffer_from(&[-1i32; 4]);
    arg(k, 1, &res);
    let null_mem: cl_mem = std::ptr::null_mut();
    for (how, value) in [
        ("NULL arg_value", null()),
        ("a NULL cl_mem", (&null_mem as *const cl_mem).cast()),
    ] {
        e.write(res, &[-1i32; 4]);
        check!(clSetKernelArg(k, 0, std::mem::size_of::<cl_mem>(), value));
        e.run(k, None, &[1], None);
        assert_eq!(e.read::<i32>(res, 4), vec![1, 0, 1, 20], "{how}");
    }
    let buf = e.buffer_from(&[0i32; 1]);
    arg(k, 0, &buf);
    e.run(k, None, &[1], None);
    assert_eq!(e.read::<i32>(res, 4), vec![0, 1, 0, 10], "a buffer");
    assert_eq!(e.read::<i32>(buf, 1), vec![7], "written through the buffer");
    check!(clReleaseMemObject(buf));
    check!(clReleaseMemObject(res));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn a_write_through_a_null_argument_is_discarded() {
    let e = Env::new();
    let p = e.program(SRC, "");
    let k = kernel(p, "writes");
    let n = 64;
    let res = e.buffer_from(&vec![0i32; n]);
    check!(clSetKernelArg(k, 0, std::mem::size_of::<cl_mem>(), null()));
    arg(k, 1, &res);
    e.run(k, None, &[n], None);
    assert_eq!(e.read::<i32>(res, n), vec![1; n], "the kernel ran on");
    check!(clReleaseMemObject(res));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

#[test]
fn the_cts_null_buffer_kernel() {
    // The api suite's test_null_buffer_arg kernel, over 4096 work-items.
    let src = "kernel void test_kernel(global float *src, global long *dst)\n\
               {\n    uint tid = get_global_id(0);\n    dst[tid] = (long)(src != 0);\n}\n";
    let e = Env::new();
    let p = e.program(src, "");
    let k = kernel(p, "test_kernel");
    let n = 4096;
    let input = e.buffer_from(&vec![0f32; n]);
    let dst = e.buffer_from(&vec![-1i64; n]);
    arg(k, 1, &dst);
    arg(k, 0, &input);
    e.run(k, None, &[n], None);
    assert_eq!(e.read::<i64>(dst, n), vec![1; n], "a buffer");
    let null_mem: cl_mem = std::ptr::null_mut();
    arg(k, 0, &null_mem);
    e.run(k, None, &[n], None);
    assert_eq!(e.read::<i64>(dst, n), vec![0; n], "&NULL");
    for m in [input, dst] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}
