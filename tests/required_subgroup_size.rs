//! cl_intel_required_subgroup_size: CL_DEVICE_SUB_GROUP_SIZES_INTEL, kernels that require one
//! of those sizes (`intel_reqd_sub_group_size`) build and run with it, CL_KERNEL_COMPILE_SUB_
//! GROUP_SIZE_INTEL reports it (0 without the attribute), a size the device lacks fails the
//! build with a log that names it, and the extension's macro is defined in every OpenCL C
//! version.
#[macro_use]
mod common;
use common::*;
use std::ptr::null_mut;

const CL_DEVICE_SUB_GROUP_SIZES_INTEL: cl_uint = 0x4108;
const CL_KERNEL_SPILL_MEM_SIZE_INTEL: cl_uint = 0x4109;
const CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL: cl_uint = 0x410A;
const CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE: cl_uint = 0x2033;

/// The device's sub-group sizes where it lists the extension.
fn sizes(e: &Env) -> Option<Vec<usize>> {
    let extensions = bytes_to_string(&info_bytes(|sz, v, r| unsafe {
        clGetDeviceInfo(e.dev, CL_DEVICE_EXTENSIONS, sz, v, r)
    }));
    let listed = extensions
        .split(' ')
        .any(|n| n == "cl_intel_required_subgroup_size");
    let mut ret = 0usize;
    let err = unsafe {
        clGetDeviceInfo(
            e.dev,
            CL_DEVICE_SUB_GROUP_SIZES_INTEL,
            0,
            null_mut(),
            &mut ret,
        )
    };
    assert_eq!(err == CL_SUCCESS, listed, "query answered iff listed");
    if !listed {
        eprintln!("skipped: no cl_intel_required_subgroup_size");
        return None;
    }
    Some(bytes_to_vec(&info_bytes(|sz, v, r| unsafe {
        clGetDeviceInfo(e.dev, CL_DEVICE_SUB_GROUP_SIZES_INTEL, sz, v, r)
    })))
}

/// Each work-item records its kernel's sub-group size, its sub-group's size and a
/// sub-group sum of ones, at a local size that leaves a partial last sub-group.
fn source(n: usize) -> String {
    format!(
        "#ifndef cl_intel_required_subgroup_size\n#error no macro\n#endif\n\
         #pragma OPENCL EXTENSION cl_intel_required_subgroup_size : enable\n\
         kernel __attribute__((intel_reqd_sub_group_size({n}))) void required(global uint *o) {{\n\
           size_t g = get_global_id(0);\n\
           o[3 * g] = get_max_sub_group_size();\n\
           o[3 * g + 1] = get_sub_group_size();\n\
           o[3 * g + 2] = sub_group_reduce_add(1u); }}\n\
         kernel void plain(global uint *o) {{ o[get_global_id(0)] = get_max_sub_group_size(); }}\n"
    )
}

#[test]
fn kernels_run_with_the_size_they_require() {
    setup();
    let e = Env::new();
    let Some(sizes) = sizes(&e) else { return };
    assert!(
        !sizes.is_empty() && sizes.iter().all(|s| s.is_power_of_two()),
        "{sizes:?}"
    );
    for &n in &sizes {
        let p = e.program(&source(n), "-cl-std=CL3.0");
        let (k, plain) = (kernel(p, "required"), kernel(p, "plain"));
        let local = 3 * n - 1;
        assert_eq!(
            sub_group_info(k, e.dev, CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL, local),
            n
        );
        assert_eq!(
            sub_group_info(plain, e.dev, CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL, local),
            0
        );
        assert_eq!(
            sub_group_info(k, e.dev, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, local),
            n
        );
        let mut spill = u64::MAX;
        check!(clGetKernelWorkGroupInfo(
            k,
            e.dev,
            CL_KERNEL_SPILL_MEM_SIZE_INTEL,
            8,
            (&mut spill as *mut u64).cast(),
            null_mut()
        ));
        assert_eq!(spill, 0);
        let attrs = bytes_to_string(&info_bytes(|sz, v, r| unsafe {
            clGetKernelInfo(k, CL_KERNEL_ATTRIBUTES, sz, v, r)
        }));
        assert!(
            attrs.contains(&format!("intel_reqd_sub_group_size({n})")),
            "{attrs}"
        );
        // Two work-groups of 3n - 1 items: sub-groups of n, n and n - 1.
        let groups = 2;
        let out = e.buffer_from(&vec![0u32; 3 * local * groups]);
        arg(k, 0, &out);
        e.run(k, None, &[local * groups], Some(&[local]));
        let got = e.read::<u32>(out, 3 * local * groups);
        for g in 0..local * groups {
            let last = (g % local) / n == 2;
            let size = if last { n - 1 } else { n } as u32;
            assert_eq!(&got[3 * g..3 * g + 3], [n as u32, size, size], "item {g}");
        }
        check!(clReleaseMemObject(out));
        check!(clReleaseKernel(k));
        check!(clReleaseKernel(plain));
        check!(clReleaseProgram(p));
    }
}

#[test]
fn a_size_the_device_lacks_fails_the_build() {
    setup();
    let e = Env::new();
    let Some(sizes) = sizes(&e) else { return };
    let n = (1..=128usize).find(|s| !sizes.contains(s)).unwrap();
    let src = format!(
        "kernel __attribute__((intel_reqd_sub_group_size({n}))) void required(global int *o) {{\n\
         o[0] = 1; }}\n"
    );
    for std in ["-cl-std=CL3.0", "-cl-std=CL1.2", ""] {
        match build_program(e.ctx, e.dev, &src, std) {
            Ok(_) => panic!("intel_reqd_sub_group_size({n}) built ({std})"),
            Err((code, log)) => {
                assert_eq!(code, CL_BUILD_PROGRAM_FAILURE, "{std}");
                assert!(
                    log.contains(&format!(
                        "kernel required: intel_reqd_sub_group_size({n}) is not a sub-group size"
                    )),
                    "{std}: {log}"
                );
            }
        }
    }
}

/// The macro is there in OpenCL C 1.2 too (the attribute is), and the supported size builds.
#[test]
fn opencl_c_1_2_programs_see_the_extension() {
    setup();
    let e = Env::new();
    let Some(sizes) = sizes(&e) else { return };
    let src = format!(
        "#ifndef cl_intel_required_subgroup_size\n#error no macro\n#endif\n\
         kernel __attribute__((intel_reqd_sub_group_size({}))) void k(global int *o) {{ o[0] = 1; }}\n",
        sizes[0]
    );
    let p = e.program(&src, "");
    let k = kernel(p, "k");
    assert_eq!(
        sub_group_info(k, e.dev, CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL, 1),
        sizes[0]
    );
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}
