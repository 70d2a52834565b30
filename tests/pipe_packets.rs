//! Pipes of every packet type OpenCL C has (1 to 128 bytes: scalars and vectors of every type,
//! structs whose size is not a multiple of 4), through every built-in form (the 2-argument
//! convenience form, reservations with the 4-argument form, work-group and sub-group
//! reservations), in the shape the conformance tests use: a producer kernel writing
//! `&src[gid]` of a global buffer into the pipe, a consumer reading into `&dst[gid]`. Several
//! rounds on one pipe, so that its counters run past its slots; every round's packets are
//! compared, as a multiset of bytes, with what was written.
#[macro_use]
mod common;
use common::*;
use std::ptr::{null, null_mut};

const STRUCTS: &str = r#"
typedef struct { char a; int b; } s_char_int;
typedef struct { char a, b, c; } s_char3;
typedef struct { short a; char b; } s_short_char;
typedef struct { short a, b, c; } s_short3;
typedef struct { long a; char b; } s_long_char;
typedef struct { char a[5]; } s_char5;
typedef struct { uchar a[127]; } s_127;
typedef struct { ulong a[16]; } s_128;
"#;

/// The packet types: (OpenCL C name, size in bytes).
fn packet_types(dev: cl_device_id) -> Vec<(String, usize)> {
    let ext = device_str(dev, CL_DEVICE_EXTENSIONS);
    let mut scalars = vec![
        ("char", 1),
        ("uchar", 1),
        ("short", 2),
        ("ushort", 2),
        ("int", 4),
        ("uint", 4),
        ("float", 4),
        ("long", 8),
        ("ulong", 8),
    ];
    if ext.contains("cl_khr_fp16") {
        scalars.push(("half", 2));
    }
    if ext.contains("cl_khr_fp64") {
        scalars.push(("double", 8));
    }
    let mut types = vec![];
    for (t, size) in scalars {
        types.push((t.to_string(), size));
        for n in [2, 3, 4, 8, 16] {
            // A 3-vector takes the size of a 4-vector.
            types.push((format!("{t}{n}"), size * if n == 3 { 4 } else { n }));
        }
    }
    for (t, size) in [
        ("s_char_int", 8),
        ("s_char3", 3),
        ("s_short_char", 4),
        ("s_short3", 6),
        ("s_long_char", 16),
        ("s_char5", 5),
        ("s_127", 127),
        ("s_128", 128),
    ] {
        types.push((t.to_string(), size));
    }
    if let Ok(only) = std::env::var("VKCL_PIPE_TYPES") {
        types.retain(|(t, _)| only.split(',').any(|o| o == t));
    }
    types
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Form {
    Convenience,
    Reserve,
    WorkGroup,
    SubGroup,
}

/// A producer `put_<i>` and a consumer `get_<i>` for packet type `t`, in the form `form`.
fn kernels(form: Form, i: usize, t: &str) -> String {
    match form {
        Form::Convenience => format!(
            "kernel void put_{i}(global {t} *src, write_only pipe {t} p, global int *st) {{
                int gid = get_global_id(0);
                st[gid] = write_pipe(p, &src[gid]);
            }}
            kernel void get_{i}(read_only pipe {t} p, global {t} *dst, global int *st) {{
                int gid = get_global_id(0);
                st[gid] = read_pipe(p, &dst[gid]);
            }}\n"
        ),
        Form::Reserve => format!(
            "kernel void put_{i}(global {t} *src, write_only pipe {t} p, global int *st) {{
                int gid = get_global_id(0);
                reserve_id_t r = reserve_write_pipe(p, 1);
                st[gid] = is_valid_reserve_id(r) ? write_pipe(p, r, 0, &src[gid]) : -5;
                if (is_valid_reserve_id(r)) commit_write_pipe(p, r);
            }}
            kernel void get_{i}(read_only pipe {t} p, global {t} *dst, global int *st) {{
                int gid = get_global_id(0);
                reserve_id_t r = reserve_read_pipe(p, 1);
                st[gid] = is_valid_reserve_id(r) ? read_pipe(p, r, 0, &dst[gid]) : -5;
                if (is_valid_reserve_id(r)) commit_read_pipe(p, r);
            }}\n"
        ),
        Form::WorkGroup => format!(
            "kernel void put_{i}(global {t} *src, write_only pipe {t} p, global int *st) {{
                int gid = get_global_id(0);
                __local reserve_id_t r;
                r = work_group_reserve_write_pipe(p, get_local_size(0));
                st[gid] = is_valid_reserve_id(r) ? write_pipe(p, r, get_local_id(0), &src[gid]) : -5;
                work_group_commit_write_pipe(p, r);
            }}
            kernel void get_{i}(read_only pipe {t} p, global {t} *dst, global int *st) {{
                int gid = get_global_id(0);
                __local reserve_id_t r;
                r = work_group_reserve_read_pipe(p, get_local_size(0));
                st[gid] = is_valid_reserve_id(r) ? read_pipe(p, r, get_local_id(0), &dst[gid]) : -5;
                work_group_commit_read_pipe(p, r);
            }}\n"
        ),
        Form::SubGroup => format!(
            "kernel void put_{i}(global {t} *src, write_only pipe {t} p, global int *st) {{
                int gid = get_global_id(0);
                reserve_id_t r = sub_group_reserve_write_pipe(p, get_sub_group_size());
                st[gid] = is_valid_reserve_id(r) ? write_pipe(p, r, get_sub_group_local_id(), &src[gid]) : -5;
                sub_group_commit_write_pipe(p, r);
            }}
            kernel void get_{i}(read_only pipe {t} p, global {t} *dst, global int *st) {{
                int gid = get_global_id(0);
                reserve_id_t r = sub_group_reserve_read_pipe(p, get_sub_group_size());
                st[gid] = is_valid_reserve_id(r) ? read_pipe(p, r, get_sub_group_local_id(), &dst[gid]) : -5;
                sub_group_commit_read_pipe(p, r);
            }}\n"
        ),
    }
}

/// Sorted packets (each `size` bytes) of a buffer.
fn packets(bytes: &[u8], size: usize) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = bytes.chunks(size).collect();
    v.sort();
    v
}

fn every_type_in(form: Form) {
    let e = Env::new();
    let types = packet_types(e.dev);
    let mut src = String::from(STRUCTS);
    for (i, (t, _)) in types.iter().enumerate() {
        src += &kernels(form, i, t);
    }
    let prog = e.program(&src, "-cl-std=CL2.0");
    // Work-group sizes that divide the launch; capacity not a power of two (as the
    // conformance tests make it), 3 rounds: the counters run past the slots.
    let (n, lws, rounds) = (256usize, Some(64usize), 3);
    let mut failures = vec![];
    let mut seed = 0x1234_5678u32;
    for (i, (t, size)) in types.iter().enumerate() {
        let mut err = 0;
        let p = unsafe {
            clCreatePipe(
                e.ctx,
                CL_MEM_HOST_NO_ACCESS,
                *size as u32,
                n as u32 + 3,
                null(),
                &mut err,
            )
        };
        assert_eq!(err, CL_SUCCESS, "clCreatePipe of {size}-byte packets");
        let put = kernel(prog, &format!("put_{i}"));
        let get = kernel(prog, &format!("get_{i}"));
        for round in 0..rounds {
            let data: Vec<u8> = (0..n * size)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    seed as u8
                })
                .collect();
            let sbuf = e.buffer_from(&data);
            let dbuf = e.buffer(CL_MEM_READ_WRITE, n * size, null_mut());
            let st1 = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
            let st2 = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
            arg(put, 0, &sbuf);
            arg(put, 1, &p);
            arg(put, 2, &st1);
            arg(get, 0, &p);
            arg(get, 1, &dbuf);
            arg(get, 2, &st2);
            let l = lws.map(|l| [l]);
            e.run(put, None, &[n], l.as_ref().map(|l| &l[..]));
            e.run(get, None, &[n], l.as_ref().map(|l| &l[..]));
            let s1: Vec<i32> = e.read(st1, n);
            let s2: Vec<i32> = e.read(st2, n);
            let out: Vec<u8> = e.read(dbuf, n * size);
            if s1.iter().chain(&s2).any(|&s| s != 0) {
                failures.push(format!(
                    "{t} round {round}: statuses {:?} / {:?}",
                    &s1[..4],
                    &s2[..4]
                ));
            } else if packets(&out, *size) != packets(&data, *size) {
                failures.push(format!("{t} round {round}: packets differ"));
            }
            for m in [sbuf, dbuf, st1, st2] {
                check!(clReleaseMemObject(m));
            }
        }
        check!(clReleaseKernel(put));
        check!(clReleaseKernel(get));
        check!(clReleaseMemObject(p));
    }
    check!(clReleaseProgram(prog));
    assert!(failures.is_empty(), "{form:?}: {}", failures.join("\n"));
}

#[test]
fn every_packet_type_through_write_pipe_and_read_pipe() {
    every_type_in(Form::Convenience);
}

#[test]
fn every_packet_type_through_reservations() {
    every_type_in(Form::Reserve);
}

#[test]
fn every_packet_type_through_work_group_reservations() {
    every_type_in(Form::WorkGroup);
}

/// Sub-group reservations exist wherever the device has sub-groups (lavapipe and NVIDIA do).
#[test]
fn every_packet_type_through_sub_group_reservations() {
    let mut n: cl_uint = 0;
    check!(clGetDeviceInfo(
        device(),
        0x105C, /* MAX_NUM_SUB_GROUPS */
        4,
        (&mut n as *mut cl_uint).cast(),
        std::ptr::null_mut()
    ));
    assert!(n > 0, "the device has no sub-groups");
    every_type_in(Form::SubGroup);
}
