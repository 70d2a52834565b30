//! Programs from SPIR-V (clCreateProgramWithIL, issue 16). The modules are SPIR-V assembly in
//! tests/il/, assembled here with spirv-as (SPIRV-Tools, installed beside the translator):
//! printf through the OpenCL.std instruction, SPIR-V 1.4 instructions and decorations, and
//! a half8 OpCompositeInsert, each checked against values the host computes.
#[macro_use]
mod common;
use common::*;
use std::ptr::null_mut;

const CL_DEVICE_IL_VERSION: cl_uint = 0x105B;

/// `tests/il/<name>.spvasm` assembled for SPIR-V `version` ("1.0" ... "1.4").
fn assemble(name: &str, version: &str) -> Vec<u8> {
    let dir = repo_file("tests/il");
    // One file per call: tests running at once assemble the same module.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!(
        "vkcl-il-{name}-{version}-{}-{n}.spv",
        std::process::id()
    ));
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", &format!("spv{version}")])
        .arg(dir.join(format!("{name}.spvasm")))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("spirv-as runs");
    assert!(st.success(), "spirv-as {name}.spvasm");
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(out);
    bytes
}

/// Whether the device takes SPIR-V. A device reporting no IL version (no SPIR-V translator
/// installed, as on the H200 machine) must refuse clCreateProgramWithIL with
/// CL_INVALID_OPERATION ("if no devices in context support intermediate language programs"),
/// which this checks.
fn takes_il(e: &Env) -> bool {
    if !device_str(e.dev, CL_DEVICE_IL_VERSION).trim().is_empty() {
        return true;
    }
    let il = assemble("basic", "1.0");
    let mut err = 0;
    let p = unsafe { clCreateProgramWithIL(e.ctx, il.as_ptr().cast(), il.len(), &mut err) };
    assert!(
        p.is_null() && err == CL_INVALID_OPERATION,
        "{}",
        err_name(err)
    );
    eprintln!("no IL version reported: clCreateProgramWithIL refused as the spec says");
    false
}

/// clCreateProgramWithIL + clBuildProgram; Err((code, log)) when the build fails.
fn build(e: &Env, il: &[u8]) -> Result<cl_program, (cl_int, String)> {
    let mut err = 0;
    let p = unsafe { clCreateProgramWithIL(e.ctx, il.as_ptr().cast(), il.len(), &mut err) };
    assert_eq!(err, CL_SUCCESS, "clCreateProgramWithIL: {}", err_name(err));
    let code = unsafe { clBuildProgram(p, 1, &e.dev, c"".as_ptr(), None, null_mut()) };
    if code == CL_SUCCESS {
        return Ok(p);
    }
    let log = build_str(p, e.dev, CL_PROGRAM_BUILD_LOG);
    unsafe { clReleaseProgram(p) };
    Err((code, log))
}

/// printf of an int32, an int64 and a float from SPIR-V: run in a child process (this test
/// again) whose stdout is read; each of 4 work-items prints its line and gets 0 back.
#[test]
fn printf_of_int32_int64_and_float() {
    if !takes_il(&Env::new()) {
        return;
    }
    if std::env::var_os("VKCL_TEST_IL_PRINTF_CHILD").is_some() {
        let e = Env::new();
        let p = build(&e, &assemble("printf", "1.0"))
            .unwrap_or_else(|(c, log)| panic!("build: {}\n{log}", err_name(c)));
        let k = kernel(p, "k");
        let o = e.buffer_from(&[-7i32; 4]);
        arg(k, 0, &o);
        e.run(k, None, &[4], Some(&[1]));
        assert_eq!(e.read::<i32>(o, 4), [0; 4], "printf's results");
        check!(clReleaseMemObject(o));
        check!(clReleaseKernel(k));
        check!(clReleaseProgram(p));
        return;
    }
    let text = stdout_of_test_run(
        "printf_of_int32_int64_and_float",
        "VKCL_TEST_IL_PRINTF_CHILD",
    );
    let mut lines: Vec<String> = text
        .lines()
        // (libtest's own "test ... " line may precede the first one on the same line.)
        .map(|l| l.rsplit("... ").next().unwrap_or(l).trim().to_string())
        .filter(|l| l.split(' ').count() == 3 && l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    lines.sort();
    let expected: Vec<String> = (0..4u64)
        .map(|i| format!("{i} {} {:.6}", i * 3_000_000_000, i as f32))
        .collect();
    assert_eq!(lines, expected, "{text}");
}

/// Reads `n` ulongs written by kernel `k(global uint *a, global ulong *out)` of `module`.
fn run_a_out(e: &Env, module: &[u8], n: usize) -> Vec<u64> {
    let p = build(e, module).unwrap_or_else(|(c, log)| panic!("build: {}\n{log}", err_name(c)));
    let k = kernel(p, "k");
    let a = e.buffer_from(&[0u32; 8]);
    let out = e.buffer_from(&vec![u64::MAX; n]);
    arg(k, 0, &a);
    arg(k, 1, &out);
    e.run(k, None, &[1], None);
    let v = e.read::<u64>(out, n);
    for m in [a, out] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
    v
}

/// SPIR-V 1.4: OpPtrDiff, OpPtrEqual, OpPtrNotEqual and OpDecorateString (llvm-spirv-15
/// aborted on them: "Not implemented").
#[test]
fn spirv_1_4_pointer_comparison_difference_and_decorate_string() {
    let e = Env::new();
    if !takes_il(&e) {
        return;
    }
    assert!(device_str(e.dev, CL_DEVICE_IL_VERSION).contains("SPIR-V_1.4"));
    assert_eq!(run_a_out(&e, &assemble("ptr_ops", "1.4"), 3), [3, 1, 1]);
}

/// SPIR-V 1.4's pointer comparisons and difference of two pointer parameters that a launch
/// binds to one buffer, and to two sub-buffers of one (conformance spirv_new spirv14_ptrops
/// passes one buffer twice; the first build folded them as different objects: equal 0,
/// difference a constant). Devices without device addresses only report.
#[test]
fn spirv_1_4_pointer_relations_of_parameters_bound_to_one_buffer() {
    let e = Env::new();
    if !takes_il(&e) {
        return;
    }
    if device_val::<cl_bitfield>(e.dev, CL_DEVICE_SVM_CAPABILITIES) == 0 {
        eprintln!("no device addresses on this device: the first build's answers stand");
        return;
    }
    let il = assemble("ptr_params", "1.4");
    let p = build(&e, &il).unwrap_or_else(|(c, log)| panic!("build: {}\n{log}", err_name(c)));
    let k = kernel(p, "k");
    let whole = e.buffer_from(&[0u32; 1024]);
    let align = device_val::<cl_uint>(e.dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN) as usize / 8;
    let region = [align, align];
    let mut err = 0;
    let sub = unsafe {
        clCreateSubBuffer(
            whole,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            region.as_ptr().cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    let out = e.buffer_from(&[u64::MAX; 3]);
    for (b, want) in [(whole, [1, 0, 0]), (sub, [0, 1, (align / 4) as u64])] {
        arg(k, 0, &whole);
        arg(k, 1, &out);
        arg(k, 2, &b);
        e.run(k, None, &[1], None);
        assert_eq!(e.read::<u64>(out, 3), want);
    }
    for m in [sub, whole, out] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// SPIR-V 1.4's OpCopyLogical between logically matching nested structs and arrays
/// (llvm-spirv-15 aborted: "Not implemented"), and a function-scope variable with an
/// initialiser copied by OpCopyMemorySized with two memory operands (lavapipe crashed on the
/// module clspv made of it: conformance spirv14_copylogical, _copymemory_memory_operands).
#[test]
fn spirv_1_4_logical_copies_and_initialised_function_variables() {
    let e = Env::new();
    if !takes_il(&e) {
        return;
    }
    assert_eq!(
        run_a_out(&e, &assemble("copies", "1.4"), 6),
        [1024, 7, 9, 11, 42, 42]
    );
}

/// An image read through a sampler argument, a literal sampler and a function of the module
/// given both (clspv crashed on every IL module that used an image: conformance
/// spirv14_image_operand_signextend / _zeroextend).
#[test]
fn image_reads_through_sampler_arguments_literals_and_functions() {
    let e = Env::new();
    if !takes_il(&e) {
        return;
    }
    let texels: Vec<u32> = (0..16).map(|i| 100 + i).collect(); // 2x2 RGBA uint32
    let format = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNSIGNED_INT32,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: 2,
        image_height: 2,
        image_depth: 1,
        image_array_size: 1,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        mem_object: null_mut(),
    };
    let mut err = 0;
    let flags = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    let host = texels.as_ptr() as *mut std::ffi::c_void;
    let img = unsafe { clCreateImage(e.ctx, flags, &format, &desc, host, &mut err) };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    let s = unsafe { clCreateSampler(e.ctx, 0, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &mut err) };
    assert_eq!(err, CL_SUCCESS, "{}", err_name(err));
    let p = build(&e, &assemble("images", "1.0"))
        .unwrap_or_else(|(c, log)| panic!("build: {}\n{log}", err_name(c)));
    let k = kernel(p, "k");
    let out = e.buffer_from(&[0u32; 12]);
    arg(k, 0, &out);
    arg(k, 1, &img);
    arg(k, 2, &s);
    e.run(k, None, &[1], None);
    let texel = |x: usize, y: usize| texels[4 * (2 * y + x)..][..4].to_vec();
    let want = [texel(1, 0), texel(0, 1), texel(1, 1)].concat();
    assert_eq!(e.read::<u32>(out, 12), want);
    check!(clReleaseMemObject(out));
    check!(clReleaseMemObject(img));
    check!(clReleaseSampler(s));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// OpVectorInsertDynamic into a half8 at each position, given as an argument (position 0
/// came back wrong in the conformance run).
#[test]
fn half8_insert_at_every_position() {
    let e = Env::new();
    if !takes_il(&e) {
        return;
    }
    if !device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp16") {
        eprintln!("no cl_khr_fp16: nothing to check");
        return;
    }
    let p = build(&e, &assemble("half8_insert", "1.0"))
        .unwrap_or_else(|(c, log)| panic!("build: {}\n{log}", err_name(c)));
    let k = kernel(p, "k");
    let n = 16usize;
    // Distinct halves: 1.0 + k/64 as bits (0x3c00 + 16 k); the inserted ones negative.
    let before: Vec<u16> = (0..8 * n).map(|k| 0x3c00 + 16 * k as u16).collect();
    let values: Vec<u16> = (0..n).map(|i| 0xc000 + 16 * i as u16).collect();
    let input = e.buffer_from(&values);
    for pos in 0..8u32 {
        let out = e.buffer_from(&before);
        arg(k, 0, &input);
        arg(k, 1, &out);
        arg(k, 2, &pos);
        e.run(k, None, &[n], None);
        let got = e.read::<u16>(out, 8 * n);
        let mut expected = before.clone();
        for (i, v) in values.iter().enumerate() {
            expected[8 * i + pos as usize] = *v;
        }
        assert_eq!(got, expected, "position {pos}");
        check!(clReleaseMemObject(out));
    }
    check!(clReleaseMemObject(input));
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

/// Every SPIR-V version CL_DEVICE_IL_VERSION names builds and runs a module.
#[test]
fn every_reported_spirv_version_builds_and_runs() {
    let e = Env::new();
    if !takes_il(&e) {
        return;
    }
    let versions = device_str(e.dev, CL_DEVICE_IL_VERSION);
    let versions: Vec<&str> = versions
        .split_whitespace()
        .filter_map(|v| v.strip_prefix("SPIR-V_"))
        .collect();
    assert!(!versions.is_empty(), "no SPIR-V version reported");
    for v in versions {
        assert_eq!(
            run_a_out(&e, &assemble("basic", v), 3),
            [3, 4, 5],
            "SPIR-V {v}"
        );
    }
}

/// OpFMod's result: the remainder with the divisor's sign (SPIR-V: "the sign of a non-0
/// result comes from Operand 2"; a zero's sign is not specified: `same_fmod`).
fn fmod_with_divisors_sign(x: f64, y: f64) -> f64 {
    let r = x % y;
    if r != 0.0 && (r < 0.0) != (y < 0.0) {
        r + y
    } else {
        r
    }
}

/// Whether `got` is `want` exactly (the same bits, or both NaN).
fn same(got: f64, want: f64) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

/// `same` for OpFMod's results, whose zeros may have either sign.
fn same_fmod(got: f64, want: f64) -> bool {
    same(got, want) || (got == 0.0 && want == 0.0)
}

/// OpFRem and OpFMod of floats, doubles and double2, and OpenCL.std fmod and copysign of
/// doubles, exact (OpenCL's fmod is correctly rounded, so are the SPIR-V remainders in the
/// OpenCL environment): lavapipe's OpFRem, which clspv made of them, was a few ULP off in one
/// case of ten (conformance spirv_new op_frem_float), OpFMod of doubles returned frem + y
/// (op_fmod_double: clspv's double copysign), libclc's double fmod was far off where the
/// magnitudes differ.
#[test]
fn remainders_and_copysign_are_exact() {
    let e = Env::new();
    if !takes_il(&e) {
        return;
    }
    if !device_str(e.dev, CL_DEVICE_EXTENSIONS).contains("cl_khr_fp64") {
        eprintln!("no cl_khr_fp64: nothing to check");
        return;
    }
    let pairs: [(f64, f64); 12] = [
        (0.9357893, 0.31166252),
        (5.5, 2.0),
        (-5.5, 2.0),
        (5.5, -2.0),
        (-0.25, 0.75),
        (0.25, -0.75),
        (1e20, 3.3),
        (-7.25, 0.5),
        (1e300, 1.7),
        (123456789.123, 1e-5),
        (3.0, 0.0),
        (-0.0, 2.0),
    ];
    let n = pairs.len();
    let x: Vec<f32> = pairs.iter().map(|p| p.0 as f32).collect();
    let y: Vec<f32> = pairs.iter().map(|p| p.1 as f32).collect();
    let u: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let v: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let p = build(&e, &assemble("remainders", "1.0"))
        .unwrap_or_else(|(c, log)| panic!("build: {}\n{log}", err_name(c)));
    let k = kernel(p, "k");
    let bufs = [
        e.buffer_from(&x),
        e.buffer_from(&y),
        e.buffer_from(&u),
        e.buffer_from(&v),
        e.buffer_from(&vec![0f32; 2 * n]),
        e.buffer_from(&vec![0f64; 6 * n]),
    ];
    for (i, b) in bufs.iter().enumerate() {
        arg(k, i as u32, b);
    }
    e.run(k, None, &[n], None);
    let of = e.read::<f32>(bufs[4], 2 * n);
    let od = e.read::<f64>(bufs[5], 6 * n);
    for i in 0..n {
        let (xf, yf) = (x[i], y[i]);
        let float_want = [
            xf % yf,
            fmod_with_divisors_sign(xf as f64, yf as f64) as f32,
        ];
        for (j, want) in float_want.iter().enumerate() {
            let got = of[2 * i + j] as f64;
            let ok = match j {
                0 => same(got, *want as f64),
                _ => same_fmod(got, *want as f64),
            };
            assert!(ok, "float {j} of ({xf}, {yf}): {got} for {want}");
        }
        let (a, b) = (u[i], v[i]);
        let double_want = [
            a % b,
            fmod_with_divisors_sign(a, b),
            a % b,
            a.copysign(b),
            fmod_with_divisors_sign(b, a),
            b % a,
        ];
        for (j, want) in double_want.iter().enumerate() {
            let got = od[6 * i + j];
            let ok = match j {
                1 | 4 => same_fmod(got, *want),
                _ => same(got, *want),
            };
            assert!(ok, "double {j} of ({a}, {b}): {got:e} for {want:e}");
        }
    }
    for b in bufs {
        check!(clReleaseMemObject(b));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}
