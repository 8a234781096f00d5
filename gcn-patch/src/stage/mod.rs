//! The pipeline stages, each a transformation or check of one document or
//! file: patch, retarget, check, assemble, undefined-symbol check, link,
//! verify; lift goes the other way (code object → asm), and toolchain finds
//! and runs the LLVM tools they call.

pub mod assemble;
pub mod check;
#[cfg(feature = "lift")]
pub mod lift;
pub mod link;
pub mod patch;
pub mod retarget;
pub mod toolchain;
pub mod triton;
pub(crate) mod undefined;
pub mod verify;
