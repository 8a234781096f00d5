//! What `kernels.toml` records about a Triton kernel (`triton = { … }` on a
//! `[[kernel.source]]`), checked by [`crate::stage::check::triton_limits`].

use serde::Deserialize;

/// What gcn-patch knows about a Triton kernel: `triton = { … }` on a
/// `[[kernel.source]]` in kernels.toml (written by `gcn-patch import`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TritonKernel {
    /// Triton's kernel name (`<kernel>` in `<hash>/<kernel>.amdgcn`), also its symbol.
    pub kernel: String,
    /// The dump directory's name: Triton's source hash in base32, which names
    /// the override directory. Absent when imported from the cache only.
    pub hash: Option<String>,
    /// The processor the dump was compiled for (its `.amdgcn_target`).
    pub target: String,
    /// LDS bytes Triton allocates at launch (`shared` in its metadata).
    pub shared: Option<u32>,
    /// Warps per workgroup Triton launches (`num_warps`).
    pub num_warps: Option<u32>,
    /// Threads per warp (`warp_size`: 64 on gfx9, 32 on gfx11/gfx12).
    pub warp_size: Option<u32>,
}

impl TritonKernel {
    /// The TOML inline table `import` writes.
    pub fn to_toml(&self) -> String {
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        let mut parts = vec![format!("kernel = {}", q(&self.kernel))];
        if let Some(h) = &self.hash {
            parts.push(format!("hash = {}", q(h)));
        }
        parts.push(format!("target = {}", q(&self.target)));
        for (k, v) in [
            ("shared", self.shared),
            ("num-warps", self.num_warps),
            ("warp-size", self.warp_size),
        ] {
            if let Some(v) = v {
                parts.push(format!("{k} = {v}"));
            }
        }
        format!("{{ {} }}", parts.join(", "))
    }
}
