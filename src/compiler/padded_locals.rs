//! The tail padding of `__local` structs written as members (an LLVM IR pass, before clspv's
//! own passes).
//!
//! A narrower view of a member of a `__local` array of `struct w { ulong v; int d; }` (16
//! bytes, 4 of them tail padding), `(__local uint *)&ld[i][j].v` read at a run-time word,
//! crashed clspv 0.0.1 (SIGSEGV in ReplacePointerBitcastPass, after SimplifyPointerBitcast had
//! already dropped the word within the struct: `(w >> 2) << 2`). The same struct with the
//! padding declared, `struct w { ulong v; int d; int pad; }`, compiles and reads right. So each
//! named struct (not packed) that a `__local` variable holds, whose members are scalars or
//! arrays of them and whose tail padding is whole words, gets those words as `i32` members at
//! its end: the same size, alignment and member offsets, and every existing member index means
//! what it meant. Structs given by value (`byval`) or written as constants are left as they are.

use std::collections::HashSet;

use super::wrapped_copy::{parse, Ty, Types};

/// `ll` with those structs padded; `None` when there is none.
pub fn patch(ll: &str) -> Option<String> {
    let types = Types::of_module(ll);
    const LOCAL: &str = " addrspace(3) global ";
    let mut held = HashSet::new();
    for line in ll.lines().filter(|l| l.starts_with('@')) {
        if let Some((t, _)) = line
            .find(LOCAL)
            .and_then(|i| parse(&line[i + LOCAL.len()..]))
        {
            named_in(&t, &types, &mut held);
        }
    }
    let mut pads: Vec<(String, u64)> = vec![];
    for name in held {
        if ll.contains(&format!("byval({name})")) || ll.contains(&format!("{name} {{")) {
            continue;
        }
        let Some(Ty::Record {
            packed: false,
            members,
        }) = types.named.get(&name)
        else {
            continue;
        };
        let plain = |t: &Ty| match t {
            Ty::Scalar(..) => true,
            Ty::Array(_, e) => matches!(**e, Ty::Scalar(..)),
            _ => false,
        };
        if !members.iter().all(plain) {
            continue;
        }
        let Some((size, _)) = types.layout(&Ty::Named(name.clone())) else {
            continue;
        };
        // The end of the last member.
        let mut end = 0u64;
        for m in members {
            let (s, a) = types.layout(m)?;
            end = end.next_multiple_of(a) + s;
        }
        let pad = size - end;
        if pad > 0 && pad % 4 == 0 && end % 4 == 0 {
            pads.push((name, pad / 4));
        }
    }
    if pads.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(ll.len() + pads.len() * 16);
    for line in ll.split_inclusive('\n') {
        let padded = line.split_once(" = type ").and_then(|(name, def)| {
            let (_, words) = pads.iter().find(|(n, _)| n == name.trim())?;
            let body = def.trim_end().strip_suffix('}')?.trim_end();
            let extra = ", i32".repeat(*words as usize);
            Some(format!("{name} = type {body}{extra} }}\n"))
        });
        out.push_str(padded.as_deref().unwrap_or(line));
    }
    Some(out)
}

/// The named structs `t` holds, through arrays (not their members).
fn named_in(t: &Ty, types: &Types, out: &mut HashSet<String>) {
    match t {
        Ty::Array(_, e) => named_in(e, types, out),
        Ty::Named(n) if types.named.contains_key(n) => {
            out.insert(n.clone());
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::patch;

    #[test]
    fn tail_padding_of_local_structs_becomes_members() {
        let ll = "%struct.w = type { i64, i32 }\n%struct.p = type <{ i64, i32 }>\n\
                  %struct.q = type { i32, i32 }\n\
                  @k.ld = internal addrspace(3) global [4 x [5 x %struct.w]] undef, align 8\n\
                  @k.lp = internal addrspace(3) global [4 x %struct.p] undef, align 1\n\
                  @k.lq = internal addrspace(3) global [4 x %struct.q] undef, align 4\n";
        let out = patch(ll).unwrap();
        assert!(
            out.starts_with("%struct.w = type { i64, i32, i32 }\n"),
            "{out}"
        );
        assert_eq!(
            out.lines().skip(1).collect::<Vec<_>>(),
            ll.lines().skip(1).collect::<Vec<_>>()
        );
        // Not __local, given by value, or a constant of it.
        let global =
            "%struct.w = type { i64, i32 }\n@g = addrspace(1) global %struct.w zeroinitializer\n";
        assert_eq!(patch(global), None);
        let byval = format!("{ll}define void @f(ptr byval(%struct.w) %a) {{ ret void }}\n");
        assert_eq!(patch(&byval), None);
    }
}
