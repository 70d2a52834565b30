//! async_work_group_copy and async_work_group_strided_copy (OpenCL C §6.15.11), both
//! directions, against a host model of the bytes they move, for scalar and vector element
//! types, doubles among them (clspv 0.0.1 moved doubles as 32-bit floats: half the bytes, to
//! the wrong places; compiler::async_copies). 3-element vectors occupy 4 elements' room, and
//! only their 3 elements are compared (as the conformance suite does).
#[macro_use]
mod common;
use common::*;

const KERNELS: &str = r#"
kernel void g2l(global const T *src, global T *dst, local T *l, uint k) {
    size_t n = get_local_size(0), g = get_group_id(0);
    event_t e = async_work_group_copy(l, src + g * n, n, 0);
    wait_group_events(1, &e);
    dst[get_global_id(0)] = l[get_local_id(0)];
}
kernel void l2g(global const T *src, global T *dst, local T *l, uint k) {
    size_t n = get_local_size(0), g = get_group_id(0);
    l[get_local_id(0)] = src[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy(dst + g * n, l, n, 0);
    wait_group_events(1, &e);
}
kernel void sg2l(global const T *src, global T *dst, local T *l, uint k) {
    size_t n = get_local_size(0), g = get_group_id(0);
    event_t e = async_work_group_strided_copy(l, src + g * n * k, n, k, 0);
    wait_group_events(1, &e);
    dst[get_global_id(0)] = l[get_local_id(0)];
}
kernel void sl2g(global const T *src, global T *dst, local T *l, uint k) {
    size_t n = get_local_size(0), g = get_group_id(0);
    l[get_local_id(0)] = src[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_strided_copy(dst + g * n * k, l, n, k, 0);
    wait_group_events(1, &e);
}
"#;

/// (type, bytes of its elements compared, bytes it occupies).
fn types(fp64: bool) -> Vec<(&'static str, usize, usize)> {
    let mut t = vec![
        ("char3", 3, 4),
        ("int", 4, 4),
        ("long", 8, 8),
        ("float2", 8, 8),
        ("uint16", 64, 64),
    ];
    if fp64 {
        t.extend([
            ("double", 8, 8),
            ("double2", 16, 16),
            ("double3", 24, 32),
            ("double4", 32, 32),
            ("double8", 64, 64),
            ("double16", 128, 128),
        ]);
    }
    t
}

#[test]
fn copies_of_every_element_type_in_both_directions() {
    let e = Env::new();
    let fp64 = device_str(e.dev, CL_DEVICE_EXTENSIONS)
        .split_whitespace()
        .any(|x| x == "cl_khr_fp64");
    let (local, groups, k) = (16usize, 3usize, 3usize);
    let items = local * groups;
    for (ty, used, size) in types(fp64) {
        for std in ["-cl-std=CL1.2", "-cl-std=CL3.0"] {
            let opts = format!("{std} -Werror -DT={ty}");
            let src = format!("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n{KERNELS}");
            let src = if fp64 { src } else { KERNELS.to_string() };
            let prog = e.program(&src, &opts);
            let input: Vec<u8> = (0..items * k * size).map(|i| (i * 13 + 7) as u8).collect();
            for name in ["g2l", "l2g", "sg2l", "sl2g"] {
                let src_buf = e.buffer_from(&input);
                let dst_buf = e.buffer_from(&vec![0xEEu8; items * k * size]);
                let kern = kernel(prog, name);
                arg(kern, 0, &src_buf);
                arg(kern, 1, &dst_buf);
                arg_local(kern, 2, local * size);
                arg(kern, 3, &(k as u32));
                e.run(kern, None, &[items], Some(&[local]));
                let got = e.read::<u8>(dst_buf, items * k * size);
                // Element `to` of dst holds element `from` of src.
                let moved = |to: usize, from: usize| {
                    let (a, b) = (to * size, from * size);
                    assert_eq!(
                        got[a..a + used],
                        input[b..b + used],
                        "{ty} {std} {name}: element {to} (from {from})"
                    );
                };
                for g in 0..groups {
                    for j in 0..local {
                        match name {
                            "g2l" | "l2g" => moved(g * local + j, g * local + j),
                            "sg2l" => moved(g * local + j, (g * local + j) * k),
                            _ => moved((g * local + j) * k, g * local + j),
                        }
                    }
                }
                if name == "sl2g" {
                    // Between the strided elements, dst is untouched.
                    for i in (0..items * k).filter(|i| i % k != 0) {
                        assert!(
                            got[i * size..(i + 1) * size].iter().all(|&b| b == 0xEE),
                            "{ty} {std} {name}: element {i} written"
                        );
                    }
                }
                check!(clReleaseKernel(kern));
                for m in [src_buf, dst_buf] {
                    check!(clReleaseMemObject(m));
                }
            }
            check!(clReleaseProgram(prog));
        }
    }
}
