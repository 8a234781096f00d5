//! Configuration: `kernels.toml` (the manifest), `kernels.lock`, and the
//! acknowledged findings under `accepted/`. Read by the stages and the
//! pipeline; knows nothing about how they run.

pub mod accept;
pub mod lock;
pub mod manifest;
