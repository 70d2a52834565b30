//! Volatile pointer variables (`int * volatile p = ...`) made ordinary in clang's IR.
//!
//! clspv 0.0.1 crashes on a volatile private variable holding a pointer to a program-scope
//! variable: "Invalid bitcast ptr addrspace(1) @arr to ptr" (SIGABRT) through a generic
//! pointer, SIGSEGV through a `global` one (the conformance suite's generic_advanced_casting
//! kernel, `const int * volatile ptr = (const int *)arr`). A private variable whose address
//! is never taken is seen by its work-item alone, so `volatile` changes nothing OpenCL can
//! observe there: [`patch`] drops it from the loads and stores of such pointer variables,
//! and clspv promotes them as any other.

/// Whether a source (without vkcl's prelude) may declare a volatile pointer variable: a `*`
/// followed by `volatile`.
pub fn declares(source: &[u8]) -> bool {
    let mut star = false;
    for w in source
        .split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
    {
        for part in split_stars(w) {
            if star && part.starts_with(b"volatile") {
                return true;
            }
            star = part == b"*";
        }
    }
    false
}

/// `w` with each `*` as a part of its own.
fn split_stars(w: &[u8]) -> Vec<&[u8]> {
    let mut out = vec![];
    let mut start = 0;
    for (i, &c) in w.iter().enumerate() {
        if c == b'*' {
            if start < i {
                out.push(&w[start..i]);
            }
            out.push(&w[i..=i]);
            start = i + 1;
        }
    }
    if start < w.len() {
        out.push(&w[start..]);
    }
    out
}

/// `ll` with the volatile accesses of each function's pointer variables whose address is
/// only loaded from and stored to made ordinary; None where there are none.
pub fn patch(ll: &str) -> Option<String> {
    let mut out: Vec<String> = vec![];
    let mut changed = false;
    let mut lines = ll.lines();
    while let Some(line) = lines.next() {
        out.push(line.to_string());
        if !line.starts_with("define ") {
            continue;
        }
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "}").collect();
        let variables: Vec<&str> = body
            .iter()
            .filter_map(|l| l.trim().split_once(" = "))
            .filter(|(_, rhs)| {
                rhs.starts_with("alloca ptr,") || rhs.starts_with("alloca ptr addrspace(")
            })
            .map(|(d, _)| d)
            .filter(|a| {
                body.iter()
                    .all(|l| super::generic_spaces::only_loaded_or_stored(l.trim(), a))
            })
            .collect();
        for l in &body {
            let accessed = variables.iter().any(|a| {
                let t = l.trim();
                let rhs = t.split_once(" = ").map_or(t, |(_, r)| r);
                let args = super::wrapped_copy::split_args(rhs);
                args.get(1)
                    .and_then(|x| x.split_whitespace().last())
                    .is_some_and(|v| v == *a)
            });
            let ordinary = match accessed {
                true => l.replacen("load volatile ptr", "load ptr", 1).replacen(
                    "store volatile ptr",
                    "store ptr",
                    1,
                ),
                false => l.to_string(),
            };
            changed |= ordinary != *l;
            out.push(ordinary);
        }
        out.push("}".into());
    }
    changed.then(|| out.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volatile_pointer_variables() {
        assert!(declares(b"const int * volatile ptr = (const int *)arr;"));
        assert!(declares(b"int *volatile p;"));
        assert!(!declares(b"volatile int *p; int * const q;"));
        let ll = "define spir_kernel void @k() {\n\
                  entry:\n\
                  \x20 %p = alloca ptr addrspace(4), align 8\n\
                  \x20 %q = alloca ptr, align 8\n\
                  \x20 store volatile ptr addrspace(4) null, ptr %p, align 8\n\
                  \x20 %0 = load volatile ptr addrspace(4), ptr %p, align 8\n\
                  \x20 store volatile ptr %q, ptr %q, align 8\n\
                  \x20 ret void\n\
                  }\n";
        let patched = patch(ll).expect("patched");
        assert!(patched.contains("  store ptr addrspace(4) null, ptr %p, align 8"));
        assert!(patched.contains("  %0 = load ptr addrspace(4), ptr %p, align 8"));
        // %q's address is stored: it stays volatile.
        assert!(patched.contains("  store volatile ptr %q, ptr %q, align 8"));
    }
}
