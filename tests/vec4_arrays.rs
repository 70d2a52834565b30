//! Buffers of long vectors with compiler::vec4_arrays on (`VKCL_VEC4_ARRAYS=1`): float16,
//! float8, int16, uint16 and int8 buffers typed as arrays of 4-vectors (issue 21). The same
//! cases run with the pass off in tests/vec4_arrays_off.rs; every result is compared with a
//! host model.
#[macro_use]
mod common;
#[path = "vec4_arrays/cases.rs"]
mod cases;

/// Whether the pass is on in this test binary.
const ON: bool = true;
