//! Configuration: `kernels.toml` (the manifest), `kernels.lock`, and the
//! acknowledged findings under `accepted/`. Read by the stages and the
//! pipeline; knows nothing about how they run.

pub mod accept;
#[cfg(feature = "edit")]
pub mod edit;
pub mod lock;
pub mod manifest;
pub mod policy;
pub mod rules;
pub mod triton;
