//! The C ABI: `#[no_mangle]` entry points and the ICD dispatch table. Each entry point turns
//! handles into objects, validates in the spec's order, calls `core` and writes results.
//!
//! The helpers here take the application's raw pointers (out-parameters, lists) and use them
//! under the spec's contract for each argument; they are only called from the entry points,
//! which received those pointers from the application.

mod command_buffer;
mod context;
mod device;
pub(crate) mod util;
#[rustfmt::skip]
#[allow(dead_code)] // NAMES: the slots' names, kept beside the table for debugging
mod dispatch;
mod event;
mod icd;
mod image;
mod info;
mod kernel;
mod memory;
mod pipe;
pub(crate) mod platform;
mod program;
mod queue;
#[rustfmt::skip]
mod stubs;
mod svm;

pub(crate) use util::*;
