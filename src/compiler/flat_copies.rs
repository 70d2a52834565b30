//! Whole-record copies to and from the records [`super::flat_records`] flattens: one load and
//! store per leaf, the flat side by GEPs of its element type, the other by its own record
//! type's GEPs (which clspv lowers right; a struct-valued store into the array was dropped).

use super::flat_layout::{leaves, Flat, Leaf};
use super::flat_uses::Uses;
use super::wrapped_copy::{pointee, split_args, Ty, Types};

/// One side of a copy: the pointer's type and value, the flat array it points into (if it
/// does), and the record type copied there (the pointee or its first member at any depth, of
/// the copy's size), where its definition says.
struct Side<'a> {
    ptr: String,
    value: String,
    flat: Option<&'a Flat>,
    ty: Option<Ty>,
}

/// The leaf-by-leaf copy replacing the memcpy on `line` (the `n`th such) when one side points
/// into a flattened record, and both sides' records (where known: one at least) have the same
/// leaf layout; None where it is not such a copy.
pub(super) fn copy_leaves(types: &Types, uses: &Uses, line: &str, n: usize) -> Option<String> {
    let at = line.find("call void @llvm.memcpy.p")?;
    let args = &line[at..];
    let args = &args[args.find('(')? + 1..args.rfind(')')?];
    let args = split_args(args);
    let [dst, src, size, volatile] = args.as_slice() else {
        return None;
    };
    let size: u64 = super::flat_layout::index_value(size)?.parse().ok()?;
    if *volatile != "i1 false" {
        return None;
    }
    let side = |a: &str| -> Option<Side> {
        let value = a.rsplit(' ').next()?.to_string();
        let ptr = a.split(" align").next()?.trim().to_string();
        let flat = uses.into.get(&value).map(|_| uses.flat(&value));
        let ty = pointee(types, &uses.defs, a).and_then(|t| {
            types
                .chain(t)
                .into_iter()
                .find(|t| matches!(t, Ty::Named(_)) && types.layout(t).map(|l| l.0) == Some(size))
        });
        if flat.is_none() && ty.is_none() {
            return None;
        }
        Some(Side {
            ptr,
            value,
            flat,
            ty,
        })
    };
    let (d, s) = (side(dst)?, side(src)?);
    d.flat.or(s.flat)?;
    // The flat side's leaves name the types copied (as the old record had them).
    let (first, second) = if d.flat.is_some() { (&d, &s) } else { (&s, &d) };
    let copied = first.ty.as_ref().or(second.ty.as_ref())?;
    let (copied, _) = leaves(types, copied)?;
    let layout = |l: &[Leaf]| l.iter().map(|l| (l.offset, l.size)).collect::<Vec<_>>();
    let own = |side: &Side| -> Option<Vec<Leaf>> {
        let Some(t) = &side.ty else {
            return Some(copied.clone());
        };
        let (own, _) = leaves(types, t)?;
        (layout(&own) == layout(&copied)).then_some(own)
    };
    let (own_s, own_d) = (own(&s)?, own(&d)?);
    if let Some(f) = [d.flat, s.flat].into_iter().flatten().next() {
        if copied
            .iter()
            .any(|l| l.offset % f.unit != 0 || l.size % f.unit != 0)
        {
            return None;
        }
    }
    let indent = &line[..line.len() - line.trim_start().len()];
    let mut out = String::new();
    for (w, leaf) in copied.iter().enumerate() {
        let (sg, dg) = (leaf_gep(&s, &own_s[w])?, leaf_gep(&d, &own_d[w])?);
        out += &format!(
            "{indent}%__vkcl_w.{n}.{w}s = {sg}\n\
             {indent}%__vkcl_w.{n}.{w} = load {t}, ptr{} %__vkcl_w.{n}.{w}s, align {a}\n\
             {indent}%__vkcl_w.{n}.{w}d = {dg}\n\
             {indent}store {t} %__vkcl_w.{n}.{w}, ptr{} %__vkcl_w.{n}.{w}d, align {a}\n",
            addrspace(&s.ptr),
            addrspace(&d.ptr),
            t = leaf.name,
            a = leaf_align(leaf),
        );
    }
    Some(out)
}

/// The GEP text reaching `leaf` (of the side's own record) on `side`.
fn leaf_gep(side: &Side, leaf: &Leaf) -> Option<String> {
    let (p, v) = (&side.ptr, &side.value);
    if let Some(f) = side.flat {
        let e = leaf.offset / f.unit;
        return Some(format!("getelementptr {}, {p} {v}, i32 {e}", f.elem));
    }
    let Some(Ty::Named(tname)) = &side.ty else {
        return None;
    };
    let idx: String = leaf.path.iter().map(|i| format!(", i32 {i}")).collect();
    Some(format!(
        "getelementptr inbounds {tname}, {p} {v}, i32 0{idx}"
    ))
}

/// The alignment a leaf has in its record: its size, where its offset allows (a packed
/// record's leaves may have less).
pub(super) fn leaf_align(leaf: &Leaf) -> u64 {
    match leaf.offset {
        0 => leaf.size,
        o => leaf.size.min(1 << o.trailing_zeros()),
    }
}

/// ` addrspace(N)` of a pointer type `ptr addrspace(N)`, or nothing.
fn addrspace(p: &str) -> String {
    p.strip_prefix("ptr").unwrap_or("").to_string()
}
