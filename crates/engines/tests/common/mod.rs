//! The codec's shared test helpers (crates/codec/tests/common/mod.rs):
//! pages, tables, the shipped corpus's pages and QPL's stream form, used
//! by the engines' tests as they are.

#[path = "../../../codec/tests/common/mod.rs"]
mod codec_common;

pub use codec_common::*;
