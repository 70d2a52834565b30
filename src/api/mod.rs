//! The C ABI: `#[no_mangle]` entry points and the ICD dispatch table. Each entry point turns
//! handles into objects, validates in the spec's order, calls `core` and writes results.
//!
//! The helpers here take the application's raw pointers (out-parameters, lists) and use them
//! under the spec's contract for each argument; they are only called from the entry points,
//! which received those pointers from the application.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

#[macro_use]
mod util;
pub mod context;
pub mod device;
#[rustfmt::skip]
pub mod dispatch;
pub mod event;
pub mod icd;
pub mod image;
pub mod info;
pub mod kernel;
pub mod memory;
pub mod pipe;
pub mod platform;
pub mod program;
pub mod queue;
#[rustfmt::skip]
pub mod stubs;

pub use util::*;
