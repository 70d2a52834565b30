//! The cases of tests/vec4_arrays.rs with compiler::vec4_arrays off (`VKCL_VEC4_ARRAYS=0`,
//! clspv's arrays of 8 or 16 scalars as they are).
#[macro_use]
mod common;
#[path = "vec4_arrays/cases.rs"]
mod cases;

/// Whether the pass is on in this test binary.
const ON: bool = false;
