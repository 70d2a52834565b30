//! Programs.
