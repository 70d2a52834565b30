//! Tests of the compiler layer. The fixtures in testdata/ are real clspv output (pyclspv 0.0.1)
//! for the sources quoted in each test, built with `options::clspv_args("", &target())` (and
//! `-cl-std=CL3.0` for offset_cl30.spv). The `compile_*` tests run the real helper and clspv.

use super::options::{clspv_args, StorageClasses, Target};
use super::reflection::{parse, ArgKind, ImageMetadataKind, PushRange, Reflection};
use super::spirv::instructions;
use super::{compile, words, CompileError};
use std::collections::HashMap;

pub(crate) fn target() -> Target {
    let all = StorageClasses {
        ssbo: true,
        ubo: true,
        push_constant: true,
    };
    Target {
        int8: true,
        int64: true,
        fp16: true,
        fp64: false,
        storage8: all,
        storage16: all,
        max_push_constant_size: 128,
        max_ubo_size: 65536,
        ubo_std430: true,
        spirv_version: (1, 5),
        images: true,
        read_write_images: true,
        subgroups: true,
        integer_dot_product: false,
        seq_cst: false,
        device_enqueue: None,
        pointers64: false,
    }
}

fn fixture(bytes: &[u8]) -> Reflection {
    let w = words(bytes).expect("fixture is SPIR-V");
    parse(&w).expect("fixture parses")
}

fn kinds(r: &Reflection, k: usize) -> Vec<ArgKind> {
    r.kernels[k].args.iter().map(|a| a.kind).collect()
}

// kernel void basic(global float* out, global const float* in, float scale, int n,
//                   local float* tmp, local int4* t2)  (uses get_global_id)
// kernel void unused_arg(global int* a, int unused, global int* b)
#[test]
fn reflects_buffers_pods_and_locals() {
    let r = fixture(include_bytes!("testdata/basic.spv"));
    assert_eq!(r.version, 5);
    let k = &r.kernels[0];
    assert_eq!((k.name.as_str(), k.num_args), ("basic", 6));
    assert_eq!(
        kinds(&r, 0),
        [
            ArgKind::StorageBuffer { set: 0, binding: 0 },
            ArgKind::StorageBuffer { set: 0, binding: 1 },
            ArgKind::PodPushConstant {
                offset: 16,
                size: 4
            },
            ArgKind::PodPushConstant {
                offset: 20,
                size: 4
            },
            ArgKind::Local {
                spec_id: 3,
                elem_size: 4
            },
            ArgKind::Local {
                spec_id: 4,
                elem_size: 16
            },
        ]
    );
    let info = k.args[1].info.as_ref().unwrap();
    assert_eq!(
        (info.name.as_str(), info.type_name.as_str()),
        ("in", "float*")
    );
    assert_eq!(
        (
            info.address_qualifier,
            info.access_qualifier,
            info.type_qualifier
        ),
        (0x119B, 0x11A3, 1)
    );
    assert_eq!(
        r.push_constants.global_offset,
        Some(PushRange {
            offset: 0,
            size: 12
        })
    );
    assert_eq!(r.spec_constants.workgroup_size, Some([0, 1, 2]));
    assert_eq!(r.push_constant_size, 24);
    assert_eq!(r.kernels[1].name, "unused_arg");
    assert_eq!(
        r.kernels[1].args[1].kind,
        ArgKind::PodPushConstant {
            offset: 16,
            size: 4
        }
    );
}

// constant int table[4] = {1, 2, 3, 4}; constant float4 ftab[2] = ...;
// kernel void cst(global int* out, constant int* cin)
#[test]
fn reflects_module_constants() {
    let r = fixture(include_bytes!("testdata/constant.spv"));
    let c = r.constant_data.as_ref().unwrap();
    assert_eq!((c.set, c.binding, c.is_uniform), (1, 0, false));
    assert_eq!(c.data, [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]);
    assert_eq!(
        r.kernels[0].args[1].kind,
        ArgKind::StorageBuffer { set: 0, binding: 1 }
    );
    assert_eq!(
        r.kernels[0].args[1]
            .info
            .as_ref()
            .unwrap()
            .address_qualifier,
        0x119D
    ); // constant
}

/// The required sub-group size comes from the attributes string, among other attributes.
#[test]
fn reads_the_required_sub_group_size_from_the_attributes() {
    let k = |attributes: &str| super::reflection::KernelReflection {
        attributes: attributes.into(),
        ..Default::default()
    };
    let both = k("reqd_work_group_size(8,1,1) intel_reqd_sub_group_size(16)");
    assert_eq!(both.reqd_sub_group_size(), Some(16));
    assert_eq!(
        k("intel_reqd_sub_group_size(8)").reqd_sub_group_size(),
        Some(8)
    );
    assert_eq!(k("reqd_work_group_size(8,1,1)").reqd_sub_group_size(), None);
    assert_eq!(k("").reqd_sub_group_size(), None);
}

// reqd_work_group_size(8, 4, 1) with `local int buf[32]`; work_group_size_hint + vec_type_hint
#[test]
fn reflects_work_group_attributes_and_static_local() {
    let r = fixture(include_bytes!("testdata/reqd.spv"));
    assert_eq!(r.kernels[0].reqd_work_group_size, Some([8, 4, 1]));
    assert_eq!(r.kernels[0].static_local_mem, 128);
    assert!(
        r.kernels[0]
            .attributes
            .contains("reqd_work_group_size(8, 4, 1)"),
        "{}",
        r.kernels[0].attributes
    );
    assert_eq!(r.kernels[1].reqd_work_group_size, None);
    assert_eq!(r.kernels[1].static_local_mem, 0);
    assert!(r.kernels[1].attributes.contains("vec_type_hint(float4)"));
}

// OpenCL C 3.0: get_global_offset + get_work_dim + get_global_size + get_num_groups +
// get_local_size + get_enqueued_local_size
#[test]
fn reflects_global_offset_and_work_dim() {
    let r = fixture(include_bytes!("testdata/offset_cl30.spv"));
    assert_eq!(
        r.push_constants.global_offset,
        Some(PushRange {
            offset: 0,
            size: 12
        })
    );
    assert_eq!(r.push_constants.region_offset, None);
    assert_eq!(r.push_constants.enqueued_local_size, None);
    assert_eq!(r.spec_constants.work_dim, Some(3));
    assert_eq!(r.spec_constants.global_offset, None);
}

// literal sampler (unnormalized, clamp-to-edge, nearest); kernel img(read_only image2d_t,
// write_only image2d_t, sampler_t, image1d_buffer_t, write_only image1d_buffer_t)
#[test]
fn reflects_images_and_samplers() {
    let r = fixture(include_bytes!("testdata/image.spv"));
    assert_eq!(r.literal_samplers.len(), 1);
    assert_eq!(
        (
            r.literal_samplers[0].set,
            r.literal_samplers[0].binding,
            r.literal_samplers[0].mask
        ),
        (0, 0, 0x12)
    );
    assert_eq!(
        kinds(&r, 0),
        [
            ArgKind::SampledImage { set: 1, binding: 0 },
            ArgKind::StorageImage { set: 1, binding: 1 },
            ArgKind::Sampler { set: 1, binding: 2 },
            ArgKind::UniformTexelBuffer { set: 1, binding: 3 },
            ArgKind::StorageTexelBuffer { set: 1, binding: 4 },
        ]
    );
    let m = fixture(include_bytes!("testdata/imgmeta.spv"));
    let k = m.kernels.iter().find(|k| k.name == "imgmeta").unwrap();
    let order = k
        .image_metadata
        .iter()
        .find(|i| i.kind == ImageMetadataKind::ChannelOrder)
        .unwrap();
    assert_eq!(
        (order.ordinal, order.push_constant),
        (0, Some(PushRange { offset: 0, size: 4 }))
    );
    assert_eq!(m.push_constant_size, 8);
    let local = m.kernels.iter().find(|k| k.name == "localstatic").unwrap();
    assert_eq!(local.static_local_mem, 64 * 4); // f2 is folded away
}

// printf("x=%d y=%f %s\n", a[0], 1.5f, "str"); printf("plain\n");
#[test]
fn reflects_printf() {
    let r = fixture(include_bytes!("testdata/printf.spv"));
    assert!(r.kernels[0].may_use_printf);
    let p = r.printf.as_ref().unwrap();
    assert_eq!(p.buffer, Some((1, 0, 1 << 20)));
    let f = p
        .formats
        .iter()
        .find(|f| f.format.starts_with("x="))
        .unwrap();
    assert_eq!(f.arg_sizes, [4, 4, 4]);
    assert!(p.formats.iter().any(|f| f.format == "str"));
}

// struct S {int; float; char} by value, int4, char, short, long, uchar2
#[test]
fn reflects_pod_layout() {
    let r = fixture(include_bytes!("testdata/pod.spv"));
    let pods: Vec<(u32, u32)> = r.kernels[0].args[1..]
        .iter()
        .map(|a| match a.kind {
            ArgKind::PodPushConstant { offset, size } => (offset, size),
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(
        pods,
        [(0, 12), (16, 16), (32, 1), (34, 2), (40, 8), (48, 2)]
    );
    assert_eq!(r.push_constant_size, 50);
}

#[test]
fn malformed_modules_are_errors_not_panics() {
    let good = words(include_bytes!("testdata/image.spv")).unwrap();
    for len in [0, 1, 5, 6, 40, good.len() / 2, good.len() - 1] {
        let _ = parse(&good[..len]); // must not panic
    }
    // Flip words everywhere: anything may come back, but no panic.
    for i in 5..good.len() {
        for v in [0, 1, 0xFFFF_FFFF, good[i] ^ 0x10, 0x0001_0000] {
            let mut w = good.clone();
            w[i] = v;
            let _ = parse(&w);
        }
    }
    assert!(parse(&[0x0723_0203, 0x10000, 0, 10, 0, 0xDEAD_BEEF]).is_err());
}

// ---------------------------------------------------------------------------------------------
// Through the helper and the real clspv.

const KERNEL: &[u8] = b"kernel void k(global int* a, int b) { a[get_global_id(0)] = b + X; }\n";

#[test]
fn compile_builds_and_reflects() {
    let args = clspv_args("-DX=\"1 + 2\"", &target()).unwrap();
    let out = compile(&[KERNEL], &args).unwrap();
    let r = parse(&out.spirv).unwrap();
    assert_eq!(
        r.kernels[0].args[1].kind,
        ArgKind::PodPushConstant {
            offset: 16,
            size: 4
        }
    );
}

#[test]
fn compile_reports_source_errors() {
    let args = clspv_args("", &target()).unwrap();
    match compile(&[b"kernel void k(global int* a) { a[0] = nope; }\n"], &args) {
        Err(CompileError::Failed { log }) => assert!(log.contains("nope"), "{log}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn compile_survives_clspv_crashes_and_exits() {
    // clspv 0.0.1 segfaults on the work-group collective functions (core in OpenCL C 2.0);
    // vkcl has its own (compiler::collectives), which the parenthesised name bypasses.
    let args = clspv_args("-cl-std=CL2.0", &target()).unwrap();
    let crash = b"kernel void k(global int* a) { a[0] = (work_group_reduce_add)(a[1]); }\n";
    match compile(&[crash], &args) {
        Err(CompileError::Failed { log }) => {
            assert!(log.contains("clspv crashed: killed by signal 11"), "{log}")
        }
        other => panic!("{other:?}"),
    }
    // An option clspv does not know makes it exit; what it printed ends up in the log.
    match compile(&[KERNEL], &["-bogus-option".to_string()]) {
        Err(CompileError::Failed { log }) => {
            assert!(
                log.contains("exited with status 1") && log.contains("bogus-option"),
                "{log}"
            )
        }
        other => panic!("{other:?}"),
    }
    // The next build gets a fresh helper.
    let ok = clspv_args("-DX=1", &target()).unwrap();
    assert!(compile(&[KERNEL], &ok).is_ok());
}

#[test]
fn compile_is_thread_safe() {
    let threads: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                let args = clspv_args(&format!("-DX={i}"), &target()).unwrap();
                compile(&[KERNEL], &args).map(|o| o.spirv.len())
            })
        })
        .collect();
    for t in threads {
        assert!(t.join().unwrap().is_ok());
    }
}

const PIPES: &[u8] = b"#ifndef __opencl_c_pipes
#error no pipes
#endif
typedef struct { int a; float b; } pair;
kernel void w(write_only pipe pair p, global int *ok) {
    pair v = { 1, 2.0f };
    ok[0] = write_pipe(p, &v);
}
kernel void r(__read_only pipe int p, global int *out) {
    reserve_id_t id = work_group_reserve_read_pipe(p, 2);
    if (is_valid_reserve_id(id)) read_pipe(p, id, get_local_id(0), out);
    work_group_commit_read_pipe(p, id);
    out[1] = get_pipe_num_packets(p);
}
";

#[test]
fn compile_lowers_pipes() {
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let mut src = PIPES.to_vec();
        if std.ends_with("2.0") {
            // The 3.0 feature macro is only defined for 3.0.
            src.drain(..PIPES.iter().position(|&b| b == b't').unwrap());
        }
        let args = clspv_args(std, &target()).unwrap();
        let out = compile(&[&src], &args).unwrap_or_else(|e| panic!("{std}: {e}"));
        let r = parse(&out.spirv).unwrap();
        let info = |k: usize| r.kernels[k].args[0].info.clone().unwrap();
        let (w, rd) = if r.kernels[0].name == "w" {
            (info(0), info(1))
        } else {
            (info(1), info(0))
        };
        assert_eq!((w.name.as_str(), w.type_name.as_str()), ("p", "pair"));
        assert_eq!(
            (rd.type_name.as_str(), rd.access_qualifier),
            ("int", 0x11A0)
        );
        assert_eq!((w.type_qualifier, w.access_qualifier), (8, 0x11A1));
    }
    // Before OpenCL C 2.0 the pipe built-ins are ordinary names, and pipes are refused: the
    // source goes to clspv as it is.
    let args = clspv_args("", &target()).unwrap();
    let plain = b"kernel void k(global int *read_pipe) { read_pipe[0] = 1; }\n";
    assert!(compile(&[plain], &args).is_ok());
    let pipe = b"kernel void k(read_only pipe int p) {}\n";
    assert!(matches!(
        compile(&[pipe], &args),
        Err(CompileError::Failed { .. })
    ));
}

#[test]
fn pipe_errors_keep_line_numbers() {
    let args = clspv_args("-cl-std=CL3.0", &target()).unwrap();
    let src =
        b"kernel void k(read_only pipe int p)\n{\n  int v;\n  read_pipe(p, &v);\n  nope();\n}\n";
    match compile(&[src], &args) {
        Err(CompileError::Failed { log }) => assert!(log.contains("source:5:"), "{log}"),
        other => panic!("{other:?}"),
    }
}

// Read-only buffers: `NonWritable` per kernel (spirv::mark_read_only_buffers).

const SHARED_BINDINGS: &[u8] = b"
kernel void add(global const float* a, global const float* b, global float* c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}
kernel void scale(global float* x, global const float* y) {
    size_t i = get_global_id(0);
    x[i] = y[i] * 2.0f;
}
kernel void count(global int* n) { atomic_inc(n); }
kernel void copy_through(global const float* in, global float* out) {
    global const float* p = in + 1;
    out[0] = p[get_global_id(0)];
}
";

/// Per entry point: (binding, NonWritable) of each storage buffer its functions name.
fn buffer_views(spirv: &[u32]) -> std::collections::BTreeMap<String, Vec<(u32, bool)>> {
    use super::spirv::{entry_point_name, instructions};
    let (mut binding, mut non_writable, mut buffers) = (HashMap::new(), vec![], vec![]);
    let (mut entries, mut current, mut named) = (HashMap::new(), None, HashMap::new());
    for (_, inst) in instructions(spirv) {
        match inst[0] & 0xffff {
            15 => {
                entries.insert(inst[2], entry_point_name(inst).unwrap().0);
            }
            71 if inst[2] == 33 => {
                binding.insert(inst[1], inst[3]);
            }
            71 if inst[2] == 24 => non_writable.push(inst[1]),
            59 if inst[3] == 12 => buffers.push(inst[2]),
            54 => current = Some(inst[2]),
            _ => {
                for w in &inst[1..] {
                    if buffers.contains(w) {
                        let e: &mut Vec<(u32, bool)> = named.entry(current.unwrap()).or_default();
                        e.push((binding[w], non_writable.contains(w)));
                    }
                }
            }
        }
    }
    entries
        .into_iter()
        .map(|(f, name)| {
            let mut v = named.remove(&f).unwrap_or_default();
            v.sort();
            v.dedup();
            (name, v)
        })
        .collect()
}

pub(crate) fn spirv_val(spirv: &[u32]) {
    spirv_val_with(spirv, &[]);
}

/// spirv-val with more options (the layout rules: `--uniform-buffer-standard-layout` ...).
pub(crate) fn spirv_val_with(spirv: &[u32], options: &[&str]) {
    // One file per call: tests run on several threads of one process.
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("vkcl-ro-{}-{n}.spv", std::process::id()));
    std::fs::write(
        &path,
        spirv
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let out = std::process::Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2"])
        .args(options)
        .arg(&path)
        .output()
        .expect("spirv-val (Debian's spirv-tools) runs");
    std::fs::remove_file(&path).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn buffers_a_kernel_only_reads_are_non_writable_in_that_kernel() {
    let args = clspv_args("", &target()).unwrap();
    let out = compile(&[SHARED_BINDINGS], &args).unwrap();
    spirv_val(&out.spirv);
    let views = buffer_views(&out.spirv);
    // add reads bindings 0 and 1 and writes 2; scale writes 0 and reads 1: add's binding 0
    // is a NonWritable copy, binding 1 is NonWritable everywhere.
    assert_eq!(views["add"], [(0, true), (1, true), (2, false)]);
    assert_eq!(views["scale"], [(0, false), (1, true)]);
    assert_eq!(views["count"], [(0, false)]);
    assert_eq!(views["copy_through"], [(0, true), (1, false)]);
    // The reflection still describes the same interface.
    let r = parse(&out.spirv).unwrap();
    let add = r.kernels.iter().find(|k| k.name == "add").unwrap();
    assert_eq!(
        add.args[0].kind,
        ArgKind::StorageBuffer { set: 0, binding: 0 }
    );
}

#[test]
fn modules_it_does_not_understand_are_left_alone() {
    let args = clspv_args("", &target()).unwrap();
    let spirv = compile(&[SHARED_BINDINGS], &args).unwrap().spirv;
    let cut = &spirv[..spirv.len() - 3];
    assert_eq!(super::spirv::mark_read_only_buffers(cut), cut);
    assert_eq!(
        super::spirv::mark_read_only_buffers(&spirv[..5]),
        &spirv[..5]
    );
}

#[test]
fn one_kernels_module_is_valid_and_holds_only_it() {
    use super::spirv::{entry_point_name, entry_point_only, instructions};
    let src = format!(
        "{}\n{}",
        std::str::from_utf8(SHARED_BINDINGS).unwrap(),
        "kernel void tiles(global const float* a, global float* c, local float* t) {
             local float fixed[64];
             size_t l = get_local_id(0);
             fixed[l] = a[get_global_id(0)];
             t[l] = fixed[l] * 2.0f;
             barrier(CLK_LOCAL_MEM_FENCE);
             c[get_global_id(0)] = fma(t[(l + 1) % 64], 3.0f, fixed[l]);
         }
         kernel void speak(int x) { printf(\"%d\\n\", x); }"
    );
    let args = clspv_args("", &target()).unwrap();
    let spirv = compile(&[src.as_bytes()], &args).unwrap().spirv;
    let functions = |m: &[u32]| instructions(m).filter(|(_, i)| i[0] & 0xffff == 54).count();
    for name in ["add", "scale", "count", "copy_through", "tiles", "speak"] {
        let one = entry_point_only(&spirv, name).expect(name);
        spirv_val(&one);
        let entries: Vec<String> = instructions(&one)
            .filter(|(_, i)| i[0] & 0xffff == 15)
            .map(|(_, i)| entry_point_name(i).unwrap().0)
            .collect();
        assert_eq!(entries, [name]);
        assert!(functions(&one) < functions(&spirv), "{name}");
    }
    assert_eq!(entry_point_only(&spirv, "nope"), None);
    let single = compile(&[KERNEL], &clspv_args("-DX=1", &target()).unwrap()).unwrap();
    assert_eq!(entry_point_only(&single.spirv, "k"), None);
}

#[test]
fn packed_struct_rewrite_only_where_a_struct_may_be_packed() {
    use super::without_needless_packed_rewrite as adjust;
    let args: Vec<String> = ["-cl-std=CL1.2", "-rewrite-packed-structs", "-w"]
        .map(String::from)
        .to_vec();
    let has = |a: &[String]| a.iter().any(|s| s == "-rewrite-packed-structs");
    let plain = b"typedef struct { uint x[2]; } s; kernel void k(global s *a) {}";
    assert_eq!(adjust(&args, &[plain], false), ["-cl-std=CL1.2", "-w"]);
    for src in [
        &b"typedef struct __attribute__((packed)) { char c; int i; } s;"[..],
        b"struct __attribute__((__packed__)) t { char c; int i; };",
        b"#pragma pack(push, 1)",
    ] {
        assert!(has(&adjust(&args, &[plain, src], false)), "{src:?}");
    }
    assert!(has(&adjust(&args, &[plain], true)), "LLVM IR keeps it");
    let mut with_dir = args.clone();
    with_dir.push("-I/inc".into());
    assert!(
        has(&adjust(&with_dir, &[plain], false)),
        "-I of a missing folder keeps it"
    );
    // A folder whose headers pack nothing (pyopencl's): dropped, also with an #include.
    let dir = super::tempdir::PrivateDir::new("packed-test").unwrap();
    std::fs::write(dir.path().join("plain.h"), "typedef struct { int a; } p;").unwrap();
    let include = b"#include \"plain.h\"\nkernel void k() {}";
    for form in [
        vec![format!("-I{}", dir.path().display())],
        vec!["-I".into(), dir.path().display().to_string()],
    ] {
        let mut a = args.clone();
        a.extend(form);
        assert!(!has(&adjust(&a, &[plain, include], false)), "{a:?}");
        std::fs::write(dir.path().join("packed.h"), "#pragma pack(1)").unwrap();
        assert!(
            has(&adjust(&a, &[plain, include], false)),
            "a packed header: {a:?}"
        );
        std::fs::remove_file(dir.path().join("packed.h")).unwrap();
    }
    assert!(
        has(&adjust(&args, &[plain, include], false)),
        "#include without -I keeps it"
    );
}

#[test]
fn build_log_lines_count_from_the_applications_source() {
    use super::shift_source_lines as shift;
    assert_eq!(
        shift(
            "source:9:3: error: x\nsource:12:1: note: y source:2:1: z",
            7
        ),
        "source:2:3: error: x\nsource:5:1: note: y source:2:1: z"
    );
    assert_eq!(
        shift("<built-in>:410:9: w\nsource: x", 7),
        "<built-in>:410:9: w\nsource: x"
    );
}

/// A helper that never answers and floods its stderr in tiny writes (as clspv 0.0.1 does on
/// pyopencl's radix-sort scan kernels) ends the build in bounded time, with a bounded log.
#[cfg(unix)]
#[test]
fn a_compile_that_never_finishes_is_stopped() {
    use super::helper::{Client, Lost};
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("vkcl-hang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("helper.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf '\\001\\000\\000\\000\\002\\000\\000\\000ok'\n\
         while :; do echo 'Instruction: call void @llvm.memcpy.p0.p3.i32' >&2; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut client = Client::spawn(&script, &dir).expect("fake helper starts");
    client.timeout = std::time::Duration::from_secs(2);
    let start = std::time::Instant::now();
    let answer = client.compile("-cl-std=CL1.2", &[b"kernel void k() {}"]);
    let took = start.elapsed();
    std::fs::remove_dir_all(&dir).ok();
    match answer {
        Err(Lost::During(why)) => {
            assert!(why.starts_with("clspv did not finish within 2 s"), "{why}");
            assert!(why.len() < 80 * 1024, "log of {} bytes", why.len());
            assert!(why.contains("llvm.memcpy"), "{why}");
        }
        _ => panic!("the hung compile got an answer"),
    }
    assert!(took < std::time::Duration::from_secs(8), "took {took:?}");
}

/// The scalarised vector built-ins are in the prelude only for programs that may name them
/// (each on its own; through a -D too).
#[test]
fn scalarised_builtins_are_chosen_by_identifiers() {
    let prelude = |src: &str, args: &[String]| super::prelude(&[], &[src.as_bytes()], args);
    let none = prelude("kernel void k(global int *o) { o[0] = 1; }", &[]);
    assert!(!none.contains("__vkcl_f"), "{none}");
    let maxmag = prelude(
        "kernel void k(global float4 *o) { o[0] = maxmag(o[1], o[2]); }",
        &[],
    );
    assert!(maxmag.contains("#define maxmag(a, b) __vkcl_maxmag(a, b)"));
    assert!(!maxmag.contains("__vkcl_fdim") && !maxmag.contains("__vkcl_fract"));
    let defined = clspv_args("-DG=fract", &target()).unwrap();
    let fract = prelude(
        "kernel void k(global float4 *o) { o[0] = G(o[1], o + 2); }",
        &defined,
    );
    assert!(fract.contains("__vkcl_fract(float16 x, __local float16 *ip)"));
    assert!(!fract.contains("__vkcl_minmag"));
}

/// Which sources are built in OpenCL C 2.0 mode at once for their program-scope variables.
#[test]
fn writable_globals_are_recognised() {
    let yes = [
        "global int g = 1;\nkernel void k(global int *o) { o[0] = g; }",
        "__global volatile atomic_uint n = ATOMIC_VAR_INIT(0);",
        "kernel void k(global int *o) { static int s; o[0] = s++; }",
    ];
    let no = [
        "kernel void k(global int *o) { o[0] = 1; }",
        "constant int c = 2;\nint f(global int *p) { return *p; }\n\
         kernel void k(__global int *o) { o[0] = f(o) + c; }",
        "// global int g;\n/* __global int h; */\nkernel void k(global int *o) { o[0] = 3; }",
        "struct s { global int *p; };\nkernel void k(global int *o) { o[0] = 4; }",
    ];
    for src in yes {
        assert!(
            super::globals::declares_writable_globals(src.as_bytes()),
            "{src}"
        );
    }
    for src in no {
        assert!(
            !super::globals::declares_writable_globals(src.as_bytes()),
            "{src}"
        );
    }
}

/// The prelude's scalarised vector built-ins compile for double too, in every language
/// version (generic address space from 2.0 on), and clspv accepts the output.
#[test]
fn scalarised_vector_builtins_compile_with_fp64_and_generic_pointers() {
    let mut t = target();
    t.fp64 = true;
    let src = b"kernel void k(global double4 *a, global float3 *b) {\n\
        double4 ip; a[0] = fdim(a[1], a[2]) + maxmag(a[1], a[2]) + minmag(a[1], a[2]) + fract(a[3], &ip) + ip;\n\
        b[0] = fract(b[1], &b[2]);\n}\n";
    for std in [
        "-cl-std=CL1.0",
        "-cl-std=CL1.1",
        "",
        "-cl-std=CL2.0",
        "-cl-std=CL3.0",
    ] {
        let args = clspv_args(&format!("{std} -Werror"), &t).unwrap();
        let out = compile(&[src], &args).unwrap_or_else(|e| panic!("{std}: {e}"));
        spirv_val(&out.spirv);
    }
}

/// The helper-function form of a struct member array: member_index reads the word through an
/// Aliased word view of the binding, and the module stays valid.
#[test]
fn member_array_through_a_helper_reads_through_a_word_view() {
    let src = b"typedef struct { uint d[16]; uint len; } msg_t;\n\
        void rd(global const uint *w, uint pos, global uint *out) { *out = w[pos]; }\n\
        void wr(global uint *w, uint pos, uint v) { w[pos] = v; }\n\
        kernel void k(global msg_t *a, global const uint *idx, global uint *out) {\n\
        rd(a[idx[0]].d, idx[1], out); wr(a[idx[2]].d, idx[3], 7); }\n";
    let args = clspv_args("", &target()).unwrap();
    let out = compile(&[src], &args).unwrap();
    spirv_val(&out.spirv);
    let aliased = super::spirv::instructions(&out.spirv)
        .filter(|(_, i)| i[0] & 0xffff == 71 && i.get(2) == Some(&20))
        .count();
    assert_eq!(aliased, 2, "the buffer and its word view are Aliased");
    // Nothing to repair: left as clspv wrote it.
    let plain = clspv_args("-DX=1", &target()).unwrap();
    let k = compile(&[KERNEL], &plain).unwrap();
    assert!(super::member_index::repair(&k.spirv).is_none());
}

/// tests/byval_many.rs's 64 `half3` parameters (which fail on NVIDIA at the 58th, its middle
/// component): with NVIDIA's 256 bytes of push constants and lavapipe's 128 they all go to the
/// by-value uniform buffer, each at 8 bytes times its index (std430: a 3-vector of 2-byte
/// elements is 8-aligned, and this is also where the C layout puts them), the block decorated
/// with exactly those offsets, and the module valid under the strictest uniform layout rules
/// (std140, no scalar or relaxed block layout) as well as under std430.
#[test]
fn half3_parameters_sit_at_their_std430_offsets() {
    let decls: Vec<String> = (0..64).map(|i| format!("half3 p{i}")).collect();
    let body: String = (0..64)
        .map(|i| format!("vstore3(p{i}, 0, (global half *)(out + {}));\n", i * 8))
        .collect();
    let src = format!(
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n\
         kernel void k(global uchar *out, {}) {{\n{body}}}\n",
        decls.join(", ")
    );
    for push in [128, 256] {
        let mut t = target();
        t.max_push_constant_size = push;
        let args = clspv_args("", &t).unwrap();
        let spirv = compile(&[src.as_bytes()], &args).unwrap().spirv;
        spirv_val(&spirv);
        spirv_val_with(&spirv, &["--uniform-buffer-standard-layout"]);
        let r = super::reflection::parse(&spirv).unwrap();
        let offsets: Vec<(u32, u32)> = r.kernels[0].args[1..]
            .iter()
            .map(|a| match a.kind {
                ArgKind::PodUniform { offset, size, .. } => (offset, size),
                ref k => panic!("{k:?}"),
            })
            .collect();
        let expected: Vec<(u32, u32)> = (0..64).map(|i| (8 * i, 6)).collect();
        assert_eq!(offsets, expected);
        // The decorations of the block's struct say the same.
        let decorated: Vec<u32> = instructions(&spirv)
            .filter(|(_, i)| i[0] & 0xffff == 72 && i.get(3) == Some(&35))
            .map(|(_, i)| i[4])
            .collect();
        let at = decorated
            .windows(64)
            .position(|w| w == (0..64).map(|i| 8 * i).collect::<Vec<_>>());
        assert!(at.is_some(), "{decorated:?}");
    }
}

/// The math prelude's parts are chosen by whole identifiers: `asin` (or `constant`, `using`)
/// does not bring the float trig library that `sin` does; a -D body and a header found in a
/// -I folder name built-ins as the source does; an include that cannot be followed brings
/// everything.
#[test]
fn math_prelude_is_chosen_by_identifiers() {
    const SIN: &str = "#define sin(x) __vkcl_sin(x)";
    const ASIN: &str = "#define asin(x) __vkcl_asin(x)";
    let prelude = |src: &str, args: &[String]| super::prelude(&[], &[src.as_bytes()], args);
    let asin = prelude(
        "// using a single constant\nkernel void k(constant float *c, global float *o) \
         { o[0] = asin(c[0]); }",
        &[],
    );
    assert!(asin.contains(ASIN) && !asin.contains(SIN));
    assert!(!asin.contains("__vkcl_sin_d"), "no double trig either");
    for call in ["sin(o[1])", "half_cos(o[1])", "sincos(o[1], o)"] {
        let p = prelude(
            &format!("kernel void k(global float *o) {{ o[0] = {call}; }}"),
            &[],
        );
        assert!(p.contains(SIN), "{call}");
    }
    let body = "kernel void k(global float *o) { o[0] = F(o[1]); }";
    assert!(!prelude(body, &[]).contains(SIN));
    let defined = clspv_args("-D F(x)=sin(x)", &target()).unwrap();
    assert!(prelude(body, &defined).contains(SIN));
    let dir = super::tempdir::PrivateDir::new("prelude-test").unwrap();
    std::fs::write(dir.path().join("f.h"), "#define F(x) asin(x)\n").unwrap();
    let inc = clspv_args(&format!("-I {}", dir.path().display()), &target()).unwrap();
    let header = prelude(&format!("#include \"f.h\"\n{body}"), &inc);
    assert!(header.contains(ASIN) && !header.contains(SIN));
    let lost = prelude(&format!("#include \"lost.h\"\n{body}"), &inc);
    assert!(lost.contains(ASIN) && lost.contains(SIN));
}

/// Workgroup arrays of arrays leave clspv's output as one array of the innermost element
/// (compiler::workgroup_arrays, for NVIDIA's driver), and selects of their pointers as selects
/// of indices (compiler::pointer_selects): a 3D `__local` array of a struct indexed
/// at run time and at constants, and a 2D one whose row is chosen by conditions. The modules
/// are valid and nest no Workgroup array; tests/clspv_fixes.rs checks the values.
#[test]
fn workgroup_arrays_of_arrays_become_flat() {
    const OP_TYPE_ARRAY: u32 = 28;
    const OP_TYPE_POINTER: u32 = 32;
    const OP_VARIABLE: u32 = 59;
    let src = "struct p { float x; int y; };\n\
               kernel void k(global float *o, int n) {\n\
               local struct p a[3][5][7];\n local uint l[17][257];\n\
               int i = get_local_id(0);\n\
               a[i % 3][i % 5][i % 7].x = i; a[1][2][3].y = n; l[i % 17][i] = i;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               uint s = l[0][i]; for (int k = 1; k < 16; k++) if (i * 16 + k < n) s = l[k][i];\n\
               o[i] = a[n % 3][n % 5][i % 7].x + a[1][2][3].y + s; }\n";
    let args = clspv_args("", &target()).unwrap();
    let spirv = compile(&[src.as_bytes()], &args).unwrap().spirv;
    spirv_val(&spirv);
    let arrays: HashMap<u32, u32> = instructions(&spirv)
        .filter(|(_, i)| i[0] & 0xffff == OP_TYPE_ARRAY)
        .map(|(_, i)| (i[1], i[2]))
        .collect();
    let pointees: HashMap<u32, u32> = instructions(&spirv)
        .filter(|(_, i)| i[0] & 0xffff == OP_TYPE_POINTER)
        .map(|(_, i)| (i[1], i[3]))
        .collect();
    let workgroup: Vec<u32> = instructions(&spirv)
        .filter(|(_, i)| i[0] & 0xffff == OP_VARIABLE && i[3] == 4)
        .map(|(_, i)| pointees[&i[1]])
        .collect();
    assert_eq!(workgroup.len(), 2, "two Workgroup arrays");
    for a in workgroup {
        assert!(
            !arrays.contains_key(&arrays[&a]),
            "a nested Workgroup array is left"
        );
    }
}

/// pyopencl's scan reads its `__local` packed structs through an `int *` (clspv: a pointer
/// access chain from a struct's first word into the next structs): the array becomes words
/// (compiler::workgroup_words), with no pointer access chain into Workgroup memory and no
/// `VariablePointers` left; in the physical-addressing build too, where clspv indexes with
/// 64-bit `size_t`s (the passes took 32-bit indices only and left that module as clspv wrote
/// it) and its PhysicalStorageBuffer pointer access chains need no `VariablePointers`.
/// tests/clspv_fixes.rs checks the values.
#[test]
fn workgroup_structs_read_as_words_become_word_arrays() {
    const OP_CAPABILITY: u32 = 17;
    const OP_TYPE_POINTER: u32 = 32;
    const OP_PTR_ACCESS_CHAIN: u32 = 67;
    const WORKGROUP: u32 = 4;
    let src = "typedef struct { int a, b, c, d; } counts;\n\
               struct __attribute__((packed)) wrapped { counts v; int dummy; };\n\
               kernel void k(global int *o, global const int *in) {\n\
               local struct wrapped l[3][23];\n\
               int i = get_local_id(0);\n\
               counts c = { in[4 * i], in[4 * i + 1], in[4 * i + 2], in[4 * i + 3] };\n\
               l[i % 3][i / 3].v = c; l[i % 3][i / 3].dummy = -1;\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               for (int k = 0; k < 4; k++) { int w = 64 * k + i, d = w / 4;\n\
               local int *src = (local int *) &l[d % 3][d / 3].v;\n\
               o[w] = src[w - 4 * d]; } }\n";
    for physical in [false, true] {
        let mut args = clspv_args("", &target()).unwrap();
        if physical {
            args.extend(["-arch=spir64".into(), "-physical-storage-buffers".into()]);
        }
        let spirv = compile(&[src.as_bytes()], &args).unwrap().spirv;
        assert_eq!(super::physical::is_physical(&spirv), physical);
        spirv_val(&spirv);
        let ops: Vec<&[u32]> = instructions(&spirv).map(|(_, i)| i).collect();
        let workgroup: Vec<u32> = ops
            .iter()
            .filter(|i| i[0] & 0xffff == OP_TYPE_POINTER && i[2] == WORKGROUP)
            .map(|i| i[1])
            .collect();
        assert!(
            !ops.iter()
                .any(|i| i[0] & 0xffff == OP_PTR_ACCESS_CHAIN && workgroup.contains(&i[1])),
            "a pointer access chain into Workgroup memory is left (physical: {physical})"
        );
        assert!(
            !ops.iter()
                .any(|i| i[0] & 0xffff == OP_CAPABILITY && i[1] == 4442),
            "VariablePointers is left (physical: {physical})"
        );
    }
}

/// Program-scope variables in a physical-addressing build: no PhysicalStorageBuffer variable
/// is left (clspv writes initialised ones), the module is valid, and the buffer's initial
/// bytes end with the 16-byte slot the runtime fills with the buffer's address.
#[test]
fn physical_program_scope_variables_are_reached_through_the_buffer_address() {
    let src = b"global int counter = 5;\n\
        global float table[4] = {1.5f, 2.5f, 3.5f, 4.5f};\n\
        int bump(void) { static global int n = 9; return n++ + counter; }\n\
        kernel void k(global int *o) { o[0] = counter++ + bump(); o[1] = (int)table[o[2]]; }\n";
    let mut args = clspv_args("-cl-std=CL2.0", &target()).unwrap();
    args.extend(["-arch=spir64".into(), "-physical-storage-buffers".into()]);
    let out = compile(&[src], &args).unwrap();
    spirv_val(&out.spirv);
    const OP_VARIABLE: u32 = 59;
    const PHYSICAL_STORAGE_BUFFER: u32 = 5349;
    let physical_variables = super::spirv::instructions(&out.spirv)
        .filter(|(_, i)| i[0] & 0xffff == OP_VARIABLE && i.get(3) == Some(&PHYSICAL_STORAGE_BUFFER))
        .count();
    assert_eq!(physical_variables, 0);
    let r = super::reflection::parse(&out.spirv).unwrap();
    let g = r.globals.expect("a program-scope variables buffer");
    // counter, table, n at 16-byte steps; then the address slot.
    assert_eq!(g.data.len(), 48 + 16);
    assert_eq!(g.data[..4], 5i32.to_le_bytes());
    assert_eq!(g.data[48..], [0; 16]);
}

/// member_index's physical form: the helper's `OpPtrAccessChain base (X / C) 0 ...` on a
/// struct pointer becomes a chain of X elements from the base cast to the element pointer.
#[test]
fn physical_member_array_through_a_helper_is_a_word_chain() {
    let src = b"typedef struct { uint x[3]; } in_t;\n\
        typedef struct { in_t in[2]; uint n; } out_t;\n\
        void put(global uint *p, uint k, uint v) { p[k] = v; }\n\
        kernel void k(global out_t *a, global const uint *idx) {\n\
        put(a[idx[0]].in[idx[1] % 2].x, idx[2] % 3, 7); }\n";
    let mut args = clspv_args("", &target()).unwrap();
    args.extend(["-arch=spir64".into(), "-physical-storage-buffers".into()]);
    let out = compile(&[src], &args).unwrap();
    spirv_val(&out.spirv);
    const OP_BITCAST: u32 = 124;
    let casts = super::spirv::instructions(&out.spirv)
        .filter(|(_, i)| i[0] & 0xffff == OP_BITCAST)
        .count();
    assert!(casts >= 1, "no word chain");
}

#[test]
fn a_kernels_module_declares_variable_pointers_only_where_it_needs_them() {
    use super::spirv::instructions;
    // `pick` selects between two buffers (VariablePointersStorageBuffer); `plain` does not.
    let src = "kernel void pick(global int *a, global int *b, int c) {
                   global int *p = c ? &a[1] : &b[2];
                   *p += 1;
               }
               kernel void plain(global int *o) { o[0] = 7; }";
    let args = clspv_args("", &target()).unwrap();
    let spirv = compile(&[src.as_bytes()], &args).unwrap().spirv;
    let variable = |m: &[u32]| {
        instructions(m).any(|(_, i)| i[0] & 0xffff == 17 && matches!(i.get(1), Some(&4441 | &4442)))
    };
    assert!(
        variable(&spirv),
        "the program's module needs VariablePointers"
    );
    let pick = super::kernel_module(&spirv, "pick").unwrap();
    let plain = super::kernel_module(&spirv, "plain").unwrap();
    spirv_val(&pick);
    spirv_val(&plain);
    assert!(variable(&pick));
    assert!(
        !variable(&plain),
        "plain's module keeps VariablePointers it does not need"
    );
}

#[test]
fn coalesced_modules_are_valid_and_group_observers_are_refused() {
    use super::coalesce::{coalesce, push_offset};
    let src = "int helper(void) { return get_local_id(0) + get_group_id(1); }
               kernel void ids(global uint *o) {
                   size_t g = get_global_id(0) + get_global_size(0) * get_global_id(1);
                   o[g] = helper() + get_num_groups(2) + get_local_size(0)
                        + get_global_offset(1) + get_local_id(2);
               }
               kernel void none(global uint *o) { o[0] = 1; }
               kernel void bar(global uint *o) {
                   barrier(CLK_GLOBAL_MEM_FENCE);
                   o[get_global_id(0)] = 1;
               }
               kernel void loc(global uint *o) {
                   local uint t[4];
                   t[get_local_id(0) % 4] = 1;
                   o[get_global_id(0)] = t[0];
               }
               kernel void arg(global uint *o, local uint *t) {
                   t[0] = 1;
                   o[get_global_id(0)] = t[0];
               }
               kernel void sub(global uint *o) { o[get_global_id(0)] = get_sub_group_local_id(); }";
    for std in ["", "-cl-std=CL3.0"] {
        let args = clspv_args(std, &target()).unwrap();
        let spirv = compile(&[src.as_bytes()], &args).unwrap().spirv;
        let size = parse(&spirv).unwrap().push_constant_size;
        for name in ["bar", "loc", "arg", "sub"] {
            let own = super::kernel_module(&spirv, name).unwrap();
            assert_eq!(push_offset(&own, size), None, "{std}: {name} is coalesced");
        }
        for name in ["ids", "none"] {
            let own = super::kernel_module(&spirv, name).unwrap();
            let at = push_offset(&own, size).expect(name);
            assert!(at >= size && at % 16 == 0, "{std}: {name} pushes at {at}");
            for dim in 0..3 {
                let c = coalesce(&own, dim, at).expect(name);
                spirv_val(&c.spirv);
                // The pushed count and the new constant are reflected nowhere: the module's
                // reflection is unchanged.
                assert_eq!(parse(&c.spirv).unwrap(), parse(&own).unwrap());
                assert!(c.size_spec_id > 2);
            }
        }
    }
}
