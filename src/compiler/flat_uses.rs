//! What one function's lines do with the pointers into the records [`super::flat_records`]
//! may flatten: which records escape (are reached through pointers, so clspv would lose the
//! indices) and which are used in a way the flat array cannot take (and are left alone).

use super::flat_copies::copy_leaves;
use super::flat_layout::{gep_offset, Flat};
use super::wrapped_copy::{gep_type, parse, split_args, Ty, Types};
use std::collections::{HashMap, HashSet};

/// One parsed GEP line: result, source type, base operand (type and value), and the indices.
pub(super) struct Gep<'a> {
    pub result: &'a str,
    pub ty: Ty,
    pub base_ty: &'a str,
    pub base: &'a str,
    pub indices: Vec<&'a str>,
}

pub(super) fn gep(line: &str) -> Option<Gep<'_>> {
    let (result, def) = line.trim_start().split_once(" = getelementptr ")?;
    let mut rest = def.trim_start();
    for flag in ["inbounds", "nuw", "nusw"] {
        rest = rest.strip_prefix(flag).unwrap_or(rest).trim_start();
    }
    let (ty, rest) = parse(rest)?;
    let args = split_args(rest.trim_start().strip_prefix(',')?);
    let (base_ty, base) = args.first()?.rsplit_once(' ')?;
    Some(Gep {
        result,
        ty,
        base_ty,
        base,
        indices: args[1..].to_vec(),
    })
}

/// The uses of pointers into records in one function.
pub(super) struct Uses<'a> {
    /// The records (allocas, and parameters known to point at one), by value name.
    pub records: &'a HashMap<String, Flat>,
    /// Pointers into each record (the record, GEPs from such pointers, loads from a
    /// variable holding one), by value name.
    pub into: HashMap<String, String>,
    /// The type each alloca and GEP points to.
    pub defs: HashMap<&'a str, Ty>,
    pub escapes: HashSet<String>,
    pub refused: HashSet<String>,
    /// The pointer variables (`alloca ptr`) stored exactly once, and then with a pointer into
    /// a record: clang's spill of a parameter or a local `uchar *p = m.d + off`.
    stores: HashMap<String, usize>,
    slots: HashMap<String, String>,
}

impl<'a> Uses<'a> {
    /// The uses in `lines` of pointers into `records`.
    pub fn of(types: &Types, records: &'a HashMap<String, Flat>, lines: &[&'a str]) -> Self {
        let mut uses = Uses {
            records,
            into: records.keys().map(|r| (r.clone(), r.clone())).collect(),
            defs: HashMap::new(),
            escapes: HashSet::new(),
            refused: HashSet::new(),
            stores: HashMap::new(),
            slots: HashMap::new(),
        };
        for line in lines {
            if let Some((name, _)) = line.trim_start().split_once(" = alloca ptr") {
                uses.stores.insert(name.to_string(), 0);
            }
        }
        for line in lines {
            if let Some((_, slot)) = stored_pointer(line) {
                if let Some(n) = uses.stores.get_mut(slot) {
                    *n += 1;
                }
            }
        }
        for line in lines {
            uses.line(types, line);
        }
        uses
    }

    /// The flat array of the record `v` points into.
    pub fn flat(&self, v: &str) -> &Flat {
        &self.records[&self.into[v]]
    }

    /// Reads one line: its definition, and its uses of pointers into records.
    fn line(&mut self, types: &Types, line: &'a str) {
        if let Some((name, def)) = line.trim_start().split_once(" = ") {
            let t = match def.split_once(' ') {
                Some(("alloca", rest)) => parse(rest).map(|(t, _)| t),
                Some(("getelementptr", rest)) => gep_type(types, rest),
                _ => None,
            };
            if let Some(t) = t {
                self.defs.insert(name, t);
            }
            let slot = def
                .strip_prefix("load ptr, ptr ")
                .map(|s| s.split(',').next());
            if let Some(r) = slot.flatten().and_then(|s| self.slots.get(s.trim())) {
                self.into.insert(name.to_string(), r.clone());
                return;
            }
        }
        if let Some(g) = gep(line) {
            if let Some(r) = self.into.get(g.base).cloned() {
                let unit = self.records[&r].unit;
                if gep_offset(types, &g.ty, &g.indices, unit).is_none() {
                    self.refused.insert(r.clone());
                }
                if !matches!(types.resolve(&g.ty), Some(Ty::Record { .. })) {
                    self.escapes.insert(r.clone());
                }
                self.into.insert(g.result.to_string(), r);
            }
            return;
        }
        let uses: Vec<String> = self
            .into
            .keys()
            .filter(|v| {
                line.split(|c: char| c == ',' || c == '(' || c == ')' || c.is_whitespace())
                    .any(|w| w == v.as_str())
            })
            .map(|v| self.into[v].clone())
            .collect();
        if uses.is_empty() {
            return;
        }
        let t = line.trim_start();
        let refuse = if t.contains("@llvm.memcpy.") {
            copy_leaves(types, self, line, 0).is_none()
        } else if ["byval(", "sret(", "byref("].iter().any(|a| t.contains(a)) {
            // A record passed or returned by value keeps its type (clspv never finished
            // building a word array passed `byval`: piglit's calls-large-struct).
            true
        } else if t.starts_with("store ptr ") || t.contains("call ") {
            if let Some((value, slot)) = stored_pointer(line) {
                if let Some(r) = self
                    .into
                    .get(value)
                    .filter(|_| self.stores.get(slot) == Some(&1))
                {
                    self.slots.insert(slot.to_string(), r.clone());
                }
            }
            self.escapes.extend(uses.iter().cloned());
            false
        } else {
            !self.scalar_access(t, &uses)
        };
        if refuse {
            self.refused.extend(uses);
        }
    }

    /// Whether `t`, where it is a load or a store through pointers into `uses`, reads or
    /// writes a scalar the flat array holds whole: its element type (all a record of one
    /// type allows), or for a record mixing types, a scalar a whole number of elements long.
    fn scalar_access(&self, t: &str, uses: &[String]) -> bool {
        let ty = match (t.strip_prefix("store "), t.split_once(" = load ")) {
            (Some(rest), _) => rest,
            (None, Some((_, rest))) => rest.trim_start(),
            _ => return true,
        };
        let ty = ty.strip_prefix("volatile ").unwrap_or(ty);
        uses.iter().all(|r| {
            let flat = &self.records[r];
            match flat.uniform {
                true => t.contains(flat.elem),
                false => {
                    matches!(parse(ty), Some((Ty::Scalar(size, _), _)) if size % flat.unit == 0)
                }
            }
        })
    }
}

/// The value and the variable of `store ptr VALUE, ptr VARIABLE`.
fn stored_pointer(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("store ptr ")?;
    let (value, rest) = rest.split_once(", ptr ")?;
    Some((value.trim(), rest.split(',').next()?.trim()))
}
