//! The layout side of [`super::flat_records`]: a record's scalar leaves at their C offsets, the
//! flat array it becomes, and the offsets of GEPs into it in that array's elements.

use super::wrapped_copy::{Ty, Types};

/// More leaves than this and a record is left alone (each whole copy becomes a load and a
/// store per leaf).
const MAX_LEAVES: usize = 1024;

/// A scalar (or, where asked for, vector) leaf of a record: its byte offset, LLVM scalar type,
/// size, the GEP indices after the first `0` that reach it, and its lanes (1 for a scalar).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Leaf {
    pub offset: u64,
    pub name: &'static str,
    pub size: u64,
    pub path: Vec<u64>,
    pub lanes: u64,
}

impl Leaf {
    /// The leaf's LLVM type: `float`, `<2 x float>`.
    pub(super) fn ty(&self) -> String {
        match self.lanes {
            1 => self.name.to_string(),
            n => format!("<{n} x {}>", self.name),
        }
    }
}

/// How a record is flattened: an `alloca [count x elem]`, elements of `unit` bytes.
#[derive(Clone, Debug)]
pub(super) struct Flat {
    pub elem: &'static str,
    pub unit: u64,
    pub count: u64,
    /// All leaves of one type (the element type).
    pub uniform: bool,
}

/// The leaves of `t` in order, and whether an array is among its members (at any depth); None
/// where a member is a vector, a pointer or unknown, or there are too many.
pub(super) fn leaves(types: &Types, t: &Ty) -> Option<(Vec<Leaf>, bool)> {
    let walk = Walk::of(types, t, false)?;
    Some((walk.out, walk.arrays))
}

/// The leaves of `t` in order with its vectors as leaves; None where a member is a pointer or
/// unknown, or there are too many.
pub(super) fn leaves_and_vectors(types: &Types, t: &Ty) -> Option<Vec<Leaf>> {
    Some(Walk::of(types, t, true)?.out)
}

/// A walk over a type's leaves (`leaves`): whether vectors are leaves, the leaves found, and
/// whether an array was among the members.
struct Walk<'a> {
    types: &'a Types,
    vectors: bool,
    out: Vec<Leaf>,
    arrays: bool,
}

impl<'a> Walk<'a> {
    /// The walk over `t`, vectors leaves or not.
    fn of(types: &'a Types, t: &Ty, vectors: bool) -> Option<Walk<'a>> {
        let mut walk = Walk {
            types,
            vectors,
            out: vec![],
            arrays: false,
        };
        walk.collect(t, 0, &mut vec![])?;
        Some(walk)
    }

    fn collect(&mut self, t: &Ty, offset: u64, path: &mut Vec<u64>) -> Option<()> {
        let types = self.types;
        if self.out.len() > MAX_LEAVES || path.len() > 16 {
            return None;
        }
        match types.resolve(t)? {
            Ty::Scalar(size, name) => self.out.push(Leaf {
                offset,
                name,
                size: *size,
                path: path.clone(),
                lanes: 1,
            }),
            Ty::Vector(n, e) if self.vectors => {
                let Some(Ty::Scalar(_, name)) = types.resolve(e) else {
                    return None;
                };
                self.out.push(Leaf {
                    offset,
                    name,
                    size: types.layout(t)?.0,
                    path: path.clone(),
                    lanes: *n,
                })
            }
            Ty::Array(n, e) => {
                self.arrays = true;
                let (size, align) = types.layout(e)?;
                for i in 0..*n {
                    path.push(i);
                    self.collect(e, offset + i * size.next_multiple_of(align), path)?;
                    path.pop();
                }
            }
            Ty::Record { packed, members } => {
                let offsets = member_offsets(types, members, *packed)?;
                for (k, (m, o)) in members.iter().zip(offsets).enumerate() {
                    path.push(k as u64);
                    self.collect(m, offset + o, path)?;
                    path.pop();
                }
            }
            Ty::Vector(..) | Ty::Named(_) => return None,
        }
        Some(())
    }
}

/// The byte offset of each of a record's `members`, as LLVM lays them out.
pub(super) fn member_offsets(types: &Types, members: &[Ty], packed: bool) -> Option<Vec<u64>> {
    let mut at = 0u64;
    let mut out = vec![];
    for m in members {
        let (size, align) = types.layout(m)?;
        at = at.next_multiple_of(if packed { 1 } else { align });
        out.push(at);
        at += size;
    }
    Some(out)
}

/// The flat array a record of `leaves` becomes: of its one leaf type where there is one, else
/// of integers of its smallest leaf's size (every leaf is then a whole number of elements at a
/// whole element offset, C layout aligning each one to its size; a packed record's may not).
pub(super) fn flat(types: &Types, t: &Ty, leaves: &[Leaf]) -> Option<Flat> {
    let first = leaves.first()?;
    let size = types.layout(t)?.0;
    if leaves.iter().all(|l| l.name == first.name) {
        return Some(Flat {
            elem: first.name,
            unit: first.size,
            count: size / first.size,
            uniform: true,
        });
    }
    let unit = leaves.iter().map(|l| l.size).min()?;
    let whole = |n: u64| n % unit == 0;
    if !whole(size) || !leaves.iter().all(|l| whole(l.offset) && whole(l.size)) {
        return None;
    }
    let elem = match unit {
        1 => "i8",
        2 => "i16",
        4 => "i32",
        8 => "i64",
        _ => return None,
    };
    Some(Flat {
        elem,
        unit,
        count: size / unit,
        uniform: false,
    })
}

/// An offset in elements: a constant and (typed value, scale) terms (`i32 %k`, or `i64 %k`
/// in a module of 64-bit pointers: `-arch=spir64`, the physical-addressing build).
#[derive(Default, Debug, PartialEq)]
pub(super) struct Offset {
    pub constant: i64,
    pub terms: Vec<(String, i64)>,
}

/// A GEP index's value: `i32 v` or `i64 v` → `v`.
pub(super) fn index_value(index: &str) -> Option<&str> {
    let v = index
        .strip_prefix("i32 ")
        .or_else(|| index.strip_prefix("i64 "))?;
    Some(v.trim())
}

/// The offset in `unit`-byte elements of a GEP over `t` with `indices` (the first one
/// included); None where an index is not an `i32` or `i64`, a step is not a whole number of
/// elements, or a vector is indexed.
pub(super) fn gep_offset(types: &Types, t: &Ty, indices: &[&str], unit: u64) -> Option<Offset> {
    let mut off = Offset::default();
    let mut add = |index: &str, bytes: u64| -> Option<()> {
        if bytes % unit != 0 {
            return None;
        }
        let scale = (bytes / unit) as i64;
        let v = index_value(index)?;
        match v.parse::<i64>() {
            Ok(c) => off.constant += c * scale,
            Err(_) if v.starts_with('%') => off.terms.push((index.trim().to_string(), scale)),
            Err(_) => return None,
        }
        Some(())
    };
    let stride = |t: &Ty| types.layout(t).map(|(s, a)| s.next_multiple_of(a));
    add(indices.first()?, stride(t)?)?;
    let mut t = t.clone();
    for i in &indices[1..] {
        t = match types.resolve(&t)?.clone() {
            Ty::Array(_, e) => {
                add(i, stride(&e)?)?;
                *e
            }
            Ty::Record { members, packed } => {
                let k: usize = i.strip_prefix("i32 ")?.trim().parse().ok()?;
                let at = *member_offsets(types, &members, packed)?.get(k)?;
                add("i32 1", at)?;
                members[k].clone()
            }
            _ => return None,
        };
    }
    Some(off)
}

#[cfg(test)]
mod tests {
    use super::super::wrapped_copy::parse;
    use super::*;
    use std::collections::HashMap;

    fn types() -> Types {
        let mut named = HashMap::new();
        for (n, d) in [
            ("%blk", "{ [16 x i8], i32 }"),
            ("%nest", "{ i32, %blk, [3 x i16] }"),
            ("%pad", "{ i8, [3 x i32], [5 x i8] }"),
            ("%fv", "{ [4 x float], i32 }"),
            ("%words", "{ [16 x i32], i32 }"),
            ("%packed", "<{ i8, i32 }>"),
            ("%vec", "{ <4 x i32>, i32 }"),
        ] {
            named.insert(n.to_string(), parse(d).unwrap().0);
        }
        Types { named }
    }

    fn named(n: &str) -> Ty {
        Ty::Named(n.to_string())
    }

    #[test]
    fn leaves_at_c_offsets() {
        let t = types();
        let (l, arrays) = leaves(&t, &named("%nest")).unwrap();
        assert!(arrays);
        let at: Vec<(u64, &str)> = l.iter().map(|l| (l.offset, l.name)).collect();
        assert_eq!(at[0], (0, "i32"));
        assert_eq!(at[1], (4, "i8"));
        assert_eq!(at[17], (20, "i32"));
        assert_eq!(at[18..], [(24, "i16"), (26, "i16"), (28, "i16")]);
        assert_eq!(l[17].path, [1, 1]);
        assert_eq!(l[5].path, [1, 0, 4]);
        let (l, _) = leaves(&t, &named("%pad")).unwrap();
        assert_eq!(l[1].offset, 4);
        assert_eq!(l[4].offset, 16);
        assert_eq!(leaves(&t, &named("%vec")), None);
    }

    #[test]
    fn flat_arrays() {
        let t = types();
        let f = |n: &str| {
            let (l, _) = leaves(&t, &named(n)).unwrap();
            flat(&t, &named(n), &l).map(|f| (f.elem, f.count, f.uniform))
        };
        assert_eq!(f("%words"), Some(("i32", 17, true)));
        assert_eq!(f("%blk"), Some(("i8", 20, false)));
        assert_eq!(f("%nest"), Some(("i8", 32, false)));
        assert_eq!(f("%fv"), Some(("i32", 5, false)));
        // A packed record's i32 at byte 1: bytes.
        assert_eq!(f("%packed"), Some(("i8", 5, false)));
    }

    #[test]
    fn gep_offsets_in_elements() {
        let t = types();
        let off = |ty: &str, idx: &[&str], unit| gep_offset(&t, &parse(ty).unwrap().0, idx, unit);
        let c = |constant| {
            Some(Offset {
                constant,
                terms: vec![],
            })
        };
        assert_eq!(off("%nest", &["i32 0", "i32 2", "i32 1"], 1), c(26));
        assert_eq!(off("%nest", &["i32 0", "i32 1", "i32 1"], 1), c(20));
        assert_eq!(off("%nest", &["i32 0", "i32 1", "i32 1"], 4), c(5));
        assert_eq!(off("%nest", &["i32 0", "i32 2", "i32 1"], 4), None);
        assert_eq!(
            off("i32", &["i32 %k"], 1),
            Some(Offset {
                constant: 0,
                terms: vec![("i32 %k".into(), 4)]
            })
        );
        assert_eq!(
            off("i32", &["i64 %k"], 2),
            Some(Offset {
                constant: 0,
                terms: vec![("i64 %k".into(), 2)]
            })
        );
        assert_eq!(off("i8", &["i32 %k"], 4), None);
        assert_eq!(off("%pad", &["i32 0", "i32 2", "i32 3"], 1), c(19));
        assert_eq!(off("%pad", &["i64 0", "i32 2", "i32 3"], 1), c(19));
        assert_eq!(off("%pad", &["i16 0"], 1), None);
    }
}
