//! TheRock's product names of processors (`gfx942` → `"MI300A/MI300X CDNA"`),
//! mirrored from `cmake/therock_amdgpu_targets.cmake` like [`crate::family`].
//! Re-exported from [`crate::family`].

/// Product names per TheRock (`therock_add_amdgpu_target`'s second argument).
pub(crate) static PRODUCTS: &[(&str, &str)] = &[
    ("gfx906", "Radeon VII / MI50 CDNA"),
    ("gfx908", "MI100 CDNA"),
    ("gfx90a", "MI210/250 CDNA"),
    ("gfx942", "MI300A/MI300X CDNA"),
    ("gfx950", "MI350X/MI355X CDNA"),
    ("gfx1010", "AMD RX 5700"),
    ("gfx1011", "AMD Radeon Pro V520"),
    ("gfx1012", "AMD RX 5500"),
    ("gfx1030", "AMD RX 6800 / XT"),
    ("gfx1032", "AMD RX 6600"),
    ("gfx1035", "AMD Radeon 680M Laptop iGPU"),
    ("gfx1036", "AMD Raphael iGPU"),
    ("gfx1100", "AMD RX 7900 XTX"),
    ("gfx1101", "AMD RX 7800 XT"),
    ("gfx1102", "AMD RX 7700S/Framework Laptop 16"),
    ("gfx1103", "AMD Radeon 780M Laptop iGPU"),
    ("gfx1150", "AMD Strix Point iGPU"),
    ("gfx1151", "AMD Strix Halo iGPU"),
    ("gfx1152", "AMD Krackan 1 iGPU"),
    ("gfx1153", "AMD Radeon 820M iGPU"),
    ("gfx1200", "AMD RX 9060 / XT"),
    ("gfx1201", "AMD RX 9070 / XT"),
];

/// TheRock's product name for a processor (`gfx942` → `"MI300A/MI300X
/// CDNA"`), if TheRock builds for it.
pub fn product_name(processor: &str) -> Option<&'static str> {
    PRODUCTS
        .iter()
        .find(|(p, _)| *p == processor)
        .map(|(_, n)| *n)
}

/// Processors whose TheRock product name contains `query` (ASCII
/// case-insensitive, ignoring spaces and punctuation; at least 4
/// characters): `mi300x` → `[gfx942]`, `rx7900xtx` → `[gfx1100]`.
pub fn processors_for_product(query: &str) -> Vec<&'static str> {
    let collapse = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let q = collapse(query);
    if q.len() < 4 {
        return Vec::new();
    }
    PRODUCTS
        .iter()
        .filter(|(_, name)| {
            collapse(name).contains(&q) || name.split('/').any(|part| collapse(part).contains(&q))
        })
        .map(|(p, _)| *p)
        .collect()
}
