//! The foundation every layer shares: the lossless line model and its
//! parser, per-generation ISA facts, diagnostics, provenance, atomic file
//! output and the job runner. Nothing here knows about manifests, stages or
//! commands.

pub(crate) mod align;
pub mod diag;
pub mod document;
pub mod hash;
pub mod isa;
pub mod jobs;
pub mod output;
pub mod parse;
pub mod progress;
pub mod provenance;
