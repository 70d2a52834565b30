//! The physical-addressing build's last attempt where clspv crashed: pointer comparisons as
//! integer comparisons, in the program's LLVM IR.
//!
//! The pinned clspv crashes (SIGSEGV) in its physical mode on a comparison of a pointer that
//! was offset with another (`a + 1 == b`, `a < b + n`; `a == b` alone passes): the kernels a
//! launch runs in that build when two of its pointer parameters are bound to one buffer
//! (`core::svm::addressing`). With 64-bit addresses a pointer compares as its address does, so
//! each `icmp` of two global pointers in the IR text (`-output-format=ll`, before clspv's
//! passes) becomes an `icmp` of their `ptrtoint`s, and the text is compiled again (`-x ir`).

use super::{CompileError, CompileOutput};

/// `sources` compiled with `args` through their IR with integer pointer comparisons; None
/// where the IR has no pointer comparison to change or a step fails.
pub fn compile(sources: &[&[u8]], args: &[String]) -> Option<Result<CompileOutput, CompileError>> {
    let ll_args = [args, &["-output-format=ll".to_string()]].concat();
    let (ll, _) = super::compile_bytes(sources, &ll_args).ok()?;
    let text = rewrite(std::str::from_utf8(&ll).ok()?)?;
    super::dump_file("-pointer-compares.ll", text.as_bytes());
    let ir_args = [args, &["-x".to_string(), "ir".to_string()]].concat();
    Some(super::compile(&[text.as_bytes()], &ir_args))
}

/// The IR text with `%r = icmp P ptr addrspace(N) X, Y` (X, Y values or `null`) as
/// `%r.l = ptrtoint ... X to i64`, the same for Y, and `%r = icmp P i64 %r.l, %r.r`; None
/// where there is none.
fn rewrite(ll: &str) -> Option<String> {
    let mut out = String::with_capacity(ll.len() + 1024);
    let mut changed = false;
    for line in ll.split_inclusive('\n') {
        match compare(line.trim_end()) {
            Some(new) => {
                out.push_str(&new);
                out.push('\n');
                changed = true;
            }
            None => out.push_str(line),
        }
    }
    changed.then_some(out)
}

/// The integer form of one `icmp` line of two pointers, None for any other line.
fn compare(line: &str) -> Option<String> {
    let indent = &line[..line.len() - line.trim_start().len()];
    let (result, rest) = line.trim_start().split_once(" = icmp ")?;
    let (predicate, rest) = rest.split_once(' ')?;
    let rest = rest.strip_prefix("ptr addrspace(")?;
    let (space, operands) = rest.split_once(") ")?;
    let (x, y) = operands.split_once(", ")?;
    let value = |v: &str| v == "null" || (v.starts_with('%') && !v.contains([' ', ',', '(']));
    if !result.starts_with('%')
        || !space.bytes().all(|b| b.is_ascii_digit())
        || !value(x)
        || !value(y)
    {
        return None;
    }
    let mut new = String::new();
    let mut ints = vec![];
    for (side, v) in [("l", x), ("r", y)] {
        if v == "null" {
            ints.push("0".to_string());
        } else {
            let int = format!("{result}.{side}");
            new += &format!("{indent}{int} = ptrtoint ptr addrspace({space}) {v} to i64\n");
            ints.push(int);
        }
    }
    new += &format!(
        "{indent}{result} = icmp {predicate} i64 {}, {}",
        ints[0], ints[1]
    );
    Some(new)
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn pointer_comparisons_become_integer_ones() {
        let ll = "  %c = icmp eq ptr addrspace(1) %a, %b\n  %d = icmp ult ptr addrspace(1) %p.i, null\n  %e = icmp eq i32 %x, 0\n";
        assert_eq!(
            rewrite(ll).unwrap(),
            "  %c.l = ptrtoint ptr addrspace(1) %a to i64\n  %c.r = ptrtoint ptr addrspace(1) %b to i64\n  %c = icmp eq i64 %c.l, %c.r\n  %d.l = ptrtoint ptr addrspace(1) %p.i to i64\n  %d = icmp ult i64 %d.l, 0\n  %e = icmp eq i32 %x, 0\n"
        );
        assert_eq!(rewrite("  %e = icmp eq i32 %x, 0\n"), None);
        // A constant expression operand is left alone.
        let gep =
            "  %c = icmp eq ptr addrspace(1) getelementptr (i8, ptr addrspace(1) @g, i64 4), %b\n";
        assert_eq!(rewrite(gep), None);
    }
}
