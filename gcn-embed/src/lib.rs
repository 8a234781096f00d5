//! gcn-embed: the dependency-free runtime half of gcn-patch.
#![warn(missing_docs)]

pub mod elf;
pub mod target;
pub mod target_id;

pub use elf::{EFlags, FeatureState};
pub use target::{processor, processors, Generation, Processor};
pub use target_id::{Feature, TargetId, TargetIdError, TargetIdErrorKind};
