//! gfx1250's tensor data mover (TDM): `tensor_load_to_lds` and
//! `tensor_store_from_lds`, which copy a tile of a tensor of up to five
//! dimensions between global memory and LDS, described by a tensor
//! descriptor (D#) held in two or four groups of SGPRs, and counted on
//! TENSORcnt (`s_wait_tensorcnt`).
//!
//! **The instruction words** ([`decode_words`]). The VIMAGE encoding
//! (word 0 bits 31:26 `0b110100`, opcode in bits 21:14: `0xc4` load, `0xc5`
//! store; llvm-mc-22 `-mcpu=gfx1250 -show-encoding`). Word 2 names the SGPR
//! groups: bits 7:0 the first register of group 0 (4 SGPRs), 15:8 group 1
//! (8 SGPRs), 23:16 and 31:24 groups 2 and 3 (4 SGPRs each; `0x7c`,
//! `null`, when absent). Word 1 bits 22:20 are the temporal hint (`th:`)
//! and 19:18 the scope (`scope:`), as llvm-mc-22 encodes them. LLVM 22's
//! own form sets word 0 bits 22 and 0 and word 1 bits 31:24 to `0x7c`;
//! aiter's words clear all three. Those are the *legacy* gfx1250 tensor DMA
//! encoding: ROCm's LLVM names it `tensor_load_to_lds_gfx1250_legacy` /
//! `tensor_store_from_lds_gfx1250_legacy`, encodes
//! `tensor_load_to_lds_gfx1250_legacy s[0:3], s[4:11]` as
//! `[0x00,0x00,0x31,0xd0,0x00,0x00,0x00,0x00,0x00,0x04,0x7c,0x7c]` and
//! decodes it to the canonical `tensor_load_to_lds s[0:3], s[4:11]`, the
//! same operands (ROCm/llvm-project issue 3703, "Decode legacy gfx1250
//! tensor DMA aliases as canonical MCInsts": the legacy B0 encodings "used
//! by existing code objects"). So the three fields are the encoding's
//! variant, not operands; what else differs between the steppings is not
//! known here.
//!
//! **The descriptor** ([`Descriptor::parse`]), as Triton 3.9 builds it
//! (`triton/backends/amd/driver.c` `encodeTDMDescriptor`, and
//! `third_party/amd/lib/TritonAMDGPUToLLVM/TDMUtility.cpp`, whose tables
//! number the dimensions from the innermost, dim 0):
//!
//! * group 0: dword 0 bits 1:0 the predicate (0: the copy does nothing and
//!   no other field is read; Triton defaults it to 1 so that a copy
//!   "doesn't silently no-op"; 2 and 3 are refused), bit
//!   30 gather index size, bit 31 gather enable; dword 1 the LDS byte
//!   address; dwords 2–3 the global byte address (bits 120:64 of the
//!   group, 57 bits), bits 127:126 the type (2, "image" in aiter's
//!   opus.hpp; 0 moves nothing, inferred from aiter's flash-attention
//!   forward, see [`Descriptor::parse`]).
//! * group 1: dword 0 bits 15:0 the multicast mask, 17:16 the data size
//!   (log2 of the element's bytes), 18 atomic-barrier enable, 19 iterate
//!   enable, 20 pad enable, 24:22 pad interval (log2 of dwords, minus 1),
//!   31:25 pad amount (dwords, minus 1); dword 1 bits 15:0 the atomic
//!   barrier's address; then `tensor_dim0` (bits 79:48), `tensor_dim1`
//!   (111:80), `tile_dim0` (127:112), `tile_dim1` (143:128), `tile_dim2`
//!   (159:144), the stride of dim 1 (207:160, 48 bits) and of dim 2
//!   (255:208), in elements.
//! * group 2: `tensor_dim2`, `tensor_dim3`, the stride of dim 3 (48 bits),
//!   `tile_dim3`; group 3: the stride of dim 4, `tensor_dim4`,
//!   `tile_dim4`, a reserved dword.
//!
//! **The copy** ([`Descriptor::elements`]). The global address is the
//! tile's first element and each `tensor_dim` the extent left from there
//! (Triton moves the address by the tile's offset and subtracts the offset
//! from the dims). Element `(i0, i1, …)` of the tile (`i0` fastest) is at
//! `global + (i0 + i1·stride1 + i2·stride2 + …)·size`; in LDS the tile is
//! one stream in that order from the LDS address, with `pad amount` dwords
//! inserted after every `pad interval` dwords when padding is on, on a
//! load only (a store ignores the fields: aiter's opus.hpp, "measured on
//! gfx1250"; TDMUtility: "TDM store does not support padding in general")
//! (TDMUtility.cpp: "TDM writes data as a linear element stream with LDS
//! padding applied every padInterval elements"). An element with some
//! `i_d ≥ tensor_dim_d` is out of bounds: a load writes zero to its LDS
//! bytes (Triton's gluon `make_tensor_descriptor`: "AMD CDNA5 TDM tensor
//! descriptors only support zero padding"), a store skips it (TDMUtility
//! relies on "HW OOB checking to skip padding elements"). A dimension past
//! dim 0 whose `tile_dim` is 0 is absent (Triton's 1-D descriptors leave
//! `tile_dim1` and `tensor_dim1` 0); `tile_dim0` 0 moves nothing.
//!
//! **Not modelled** (each refused, naming the field, never guessed):
//! gather/scatter, the atomic barrier, iterate mode, types 1 and 3, set bits in fields no source names
//! (group 3's reserved dword, group 0 dword 0 bits
//! 29:2, group 0 bits 125:121), and an LDS range past the allocation. The
//! cache policy (`th:`, `scope:`) changes no value the emulator computes.
//! **Multicast** (group 1 bits 15:0, a mask over the flat ranks of the
//! workgroups of a gfx1250 cluster; bit 21 its early timeout, per aiter's
//! opus.hpp): every workgroup the mask selects issues its own matching
//! request, and the emulator copies each request into its issuer's LDS
//! only, as rocJITsu's functional model does; a peer's copy landing early
//! is not modelled. The executor refuses a mask without the issuer's own
//! bit, with a bit past the cluster, or (other than 0 or 1) in a dispatch
//! without clusters ([`check_multicast`]).
//!
//! The copy completes at issue; TENSORcnt ordering is the sanitizer's
//! ([`crate::waitcnt::Counter::Tensor`]).

/// Check a tensor load's multicast `mask` for a workgroup of flat rank
/// `rank` in a cluster of `size` workgroups (`cluster`: `(rank, size)`;
/// `None`: a dispatch without clusters, where only 0 and the workgroup's
/// own bit, 1, are run): `Err` says why the emulator does not run it.
pub fn check_multicast(mask: u32, cluster: Option<(u32, u32)>) -> Result<(), String> {
    check_mask(mask, cluster, "tensor descriptor group 1 bits 15:0")
}

/// [`check_multicast`] for a mask held in `field` (gfx1250's
/// `cluster_load_*` take theirs in M0).
pub fn check_mask(mask: u32, cluster: Option<(u32, u32)>, field: &str) -> Result<(), String> {
    match cluster {
        _ if mask == 0 => Ok(()),
        None if mask == 1 => Ok(()),
        None => Err(format!(
            "multicast mask {mask:#06x} ({field}) in a dispatch without workgroup clusters: launch the kernel with its cluster (`Launch::cluster`, `gcn-patch run --cluster X,Y,Z`)"
        )),
        Some((_, size)) if mask >> size != 0 => Err(format!(
            "multicast mask {mask:#06x} selects ranks past the cluster's {size} workgroups"
        )),
        Some((rank, _)) if mask >> rank & 1 == 0 => Err(format!(
            "multicast mask {mask:#06x} leaves out the issuing workgroup (flat rank {rank}): only the issuer's own copy is modelled, and this request would write only peers' LDS"
        )),
        Some(_) => Ok(()),
    }
}

/// Whether `w0` is the first word of a tensor DMA instruction (VIMAGE,
/// opcode `0xc4` or `0xc5`), and if so whether it is the load.
pub fn is_tensor_word(w0: u32) -> Option<bool> {
    if w0 >> 26 != 0b11_0100 {
        return None;
    }
    match (w0 >> 14) & 0xff {
        0xc4 => Some(true),
        0xc5 => Some(false),
        _ => None,
    }
}

/// The fields of a tensor DMA instruction's three words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    /// `tensor_load_to_lds` (else `tensor_store_from_lds`).
    pub load: bool,
    /// The first SGPR of each group: groups 0 and 1, and 2 and 3 unless
    /// both are `null` (one `null`, [`NULL_SGPR`], is a group of zeros).
    pub groups: Vec<u16>,
    /// The temporal hint (word 1 bits 22:20).
    pub th: u32,
    /// The scope (word 1 bits 19:18).
    pub scope: u32,
    /// The legacy (aiter's) form: word 0 bits 22 and 0 and word 1 bits
    /// 31:24 clear.
    pub legacy: bool,
}

/// The SGPR count of each group.
pub const GROUP_SGPRS: [u16; 4] = [4, 8, 4, 4];

/// `null` in an SGPR field (gfx12 numbering).
const NULL: u32 = 0x7c;

/// `null` as a group's first SGPR in [`Words::groups`].
pub const NULL_SGPR: u16 = NULL as u16;

/// Decode a tensor DMA instruction's three words; `Err` says which field
/// holds what the decoder does not know (then the instruction stays
/// refused).
pub fn decode_words(w: &[u32]) -> Result<Words, String> {
    let [w0, w1, w2] = *w else {
        return Err(format!("{} words, not 3", w.len()));
    };
    let load = is_tensor_word(w0).ok_or("not a tensor DMA opcode")?;
    let op_bits = 0xfc00_0000 | 0xff << 14;
    let legacy = w0 & (1 << 22 | 1) == 0 && w1 >> 24 == 0;
    let canonical = w0 & (1 << 22 | 1) == (1 << 22 | 1) && w1 >> 24 == NULL;
    if !legacy && !canonical {
        return Err(format!(
            "word 0 bits 22 and 0 ({}, {}) and word 1 bits 31:24 ({:#x}) are neither LLVM 22's form (1, 1, 0x7c) nor the legacy one (0, 0, 0)",
            w0 >> 22 & 1,
            w0 & 1,
            w1 >> 24
        ));
    }
    let other0 = w0 & !(op_bits | 1 << 22 | 1);
    let other1 = w1 & 0x00ff_ffff & !(0x7 << 20 | 0x3 << 18);
    if other0 != 0 || other1 != 0 {
        return Err(format!(
            "set bits in fields neither form uses: word 0 {other0:#010x}, word 1 {other1:#010x}"
        ));
    }
    let mut groups = Vec::new();
    for (g, &n) in GROUP_SGPRS.iter().enumerate() {
        let r = w2 >> (8 * g) & 0xff;
        if r == NULL && g >= 2 {
            // `null`: a group of zeros (llvm-project PR 200911).
            groups.push(NULL as u16);
            continue;
        }
        if r == NULL || r as u16 + n > 106 {
            return Err(format!("group {g} names SGPR field {r:#x}"));
        }
        groups.push(r as u16);
    }
    if groups[2..] == [NULL as u16; 2] {
        groups.truncate(2);
    }
    Ok(Words {
        load,
        groups,
        th: w1 >> 20 & 7,
        scope: w1 >> 18 & 3,
        legacy,
    })
}

/// A tensor descriptor's fields (dimension 0 innermost).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    /// Predicate (group 0 bits 1:0): 0 moves nothing.
    pub pred: u32,
    /// LDS byte address of the tile's first element.
    pub lds: u32,
    /// Global byte address of the tile's first element.
    pub global: u64,
    /// Element size in bytes.
    pub size: u32,
    /// Multicast mask.
    pub multicast: u32,
    /// Padding: (interval, amount) in dwords, when enabled.
    pub pad: Option<(u32, u32)>,
    /// Tensor extents left from the tile's origin, per dimension.
    pub tensor: [u64; 5],
    /// Tile extents per dimension (0 past dim 0: absent).
    pub tile: [u32; 5],
    /// Strides in elements of dims 1–4 (dim 0's is 1).
    pub stride: [u64; 5],
}

impl Descriptor {
    /// A copy that moves nothing (predicate 0, or type 0).
    fn nothing() -> Descriptor {
        Descriptor {
            pred: 0,
            lds: 0,
            global: 0,
            size: 1,
            multicast: 0,
            pad: None,
            tensor: [0; 5],
            tile: [0; 5],
            stride: [0; 5],
        }
    }

    /// The descriptor in `groups` (2 or 4 groups of dwords: 4, 8, 4, 4);
    /// `Err` names the field the emulator does not model.
    pub fn parse(groups: &[&[u32]], load: bool) -> Result<Descriptor, String> {
        let g0 = groups[0];
        let g1 = groups[1];
        let refuse = |what: &str| Err(format!("tensor descriptor: {what}: not modelled"));
        // A predicate of 0 moves nothing: no other field is read.
        match g0[0] & 3 {
            0 => return Ok(Descriptor::nothing()),
            1 => {}
            p => {
                return refuse(&format!(
                    "predicate {p} (group 0 bits 1:0; Triton sets 0 or 1)"
                ))
            }
        }
        if g0[0] >> 31 & 1 != 0 {
            return refuse("gather/scatter enable (group 0 bit 31)");
        }
        if g0[0] & 0x7fff_fffc != 0 {
            return refuse(&format!(
                "group 0 dword 0 {:#010x}: set bits past the predicate (bits 30:2; bit 30 is the gather index size, the rest no source names)",
                g0[0]
            ));
        }
        let ty = g0[3] >> 30;
        if ty == 0 {
            // Inferred, not documented here: aiter's gfx1250 flash-attention
            // forward (hsa/gfx1250/fmha_fwd_bf16, `s_cselect_b64 s[82:83],
            // 0, s[82:83]` before `s_add_co_ci_u32 s59, s7, s83`) clears the
            // type with the offset's high dword when its K/V tile offset
            // runs below the tensor, for the loads past the last tile it
            // uses; the emulator moves nothing for type 0, as for predicate
            // 0 (a kernel that read that LDS would show it).
            return Ok(Descriptor::nothing());
        }
        if ty != 2 {
            return refuse(&format!("type {ty} (group 0 bits 127:126; Triton sets 2)"));
        }
        if g0[3] >> 25 & 0x1f != 0 {
            return refuse(&format!(
                "group 0 bits 125:121 ({:#x}), past the 57-bit global address",
                g0[3] >> 25 & 0x1f
            ));
        }
        let d0 = g1[0];
        if d0 >> 18 & 1 != 0 {
            return refuse("the atomic barrier (group 1 bit 18)");
        }
        if d0 >> 19 & 1 != 0 {
            return refuse("iterate mode (group 1 bit 19)");
        }
        // Bit 21 is the multicast early timeout (aiter's opus.hpp names
        // it `mcast_early_timeout`): when a multicast request stops waiting
        // for the peers' matching requests, timing only.
        let multicast = d0 & 0xffff;
        // A store ignores the padding fields (aiter's opus.hpp:2439, "LOAD
        // DIRECTION ONLY -- measured on gfx1250, a store ignores both fields
        // even when programmed"; aiter's gfx1250 `fmha_fwd_mxfp8` stores
        // with bit 20 set).
        let pad = (load && d0 >> 20 & 1 != 0).then(|| (1 << ((d0 >> 22 & 7) + 1), (d0 >> 25) + 1));
        let lo16 = |x: u32| (x & 0xffff) as u64;
        let hi16 = |x: u32| (x >> 16) as u64;
        let mut tensor = [0u64; 5];
        let mut tile = [0u32; 5];
        let mut stride = [0u64; 5];
        tensor[0] = hi16(g1[1]) | lo16(g1[2]) << 16;
        tensor[1] = hi16(g1[2]) | lo16(g1[3]) << 16;
        tile[0] = g1[3] >> 16;
        tile[1] = g1[4] & 0xffff;
        tile[2] = g1[4] >> 16;
        stride[1] = g1[5] as u64 | lo16(g1[6]) << 32;
        stride[2] = hi16(g1[6]) | (g1[7] as u64) << 16;
        if groups.len() == 4 {
            let (g2, g3) = (groups[2], groups[3]);
            tensor[2] = g2[0] as u64;
            tensor[3] = g2[1] as u64;
            stride[3] = g2[2] as u64 | lo16(g2[3]) << 32;
            tile[3] = g2[3] >> 16;
            stride[4] = g3[0] as u64 | lo16(g3[1]) << 32;
            tensor[4] = hi16(g3[1]) | lo16(g3[2]) << 16;
            tile[4] = g3[2] >> 16;
            if g3[3] != 0 {
                return refuse(&format!("group 3 dword 3 {:#x} (reserved)", g3[3]));
            }
        } else if tile[2] != 0 {
            return refuse(&format!(
                "tile_dim2 {} with no group 2 holding tensor_dim2",
                tile[2]
            ));
        }
        Ok(Descriptor {
            pred: g0[0] & 3,
            lds: g0[1],
            global: g0[2] as u64 | ((g0[3] & 0x01ff_ffff) as u64) << 32,
            size: 1 << (d0 >> 16 & 3),
            multicast,
            pad,
            tensor,
            tile,
            stride,
        })
    }

    /// Elements the copy moves (0 when the predicate is 0).
    pub fn count(&self) -> u64 {
        if self.pred == 0 {
            return 0;
        }
        let mut n = self.tile[0] as u64;
        for d in 1..5 {
            if self.tile[d] != 0 {
                n *= self.tile[d] as u64;
            }
        }
        n
    }

    /// Each element of the tile in copy order: its global byte address
    /// (`None`: out of bounds) and its LDS byte address.
    pub fn elements(&self) -> impl Iterator<Item = (Option<u64>, u32)> + '_ {
        let ext: Vec<u64> = (0..5)
            .map(|d| {
                if d > 0 && self.tile[d] == 0 {
                    1
                } else {
                    self.tile[d] as u64
                }
            })
            .collect();
        let n = self.count();
        let size = self.size as u64;
        (0..n).map(move |k| {
            let mut rest = k;
            let mut off = 0u64;
            let mut inside = true;
            for (d, &e) in ext.iter().enumerate() {
                let i = rest % e;
                rest /= e;
                let bounded = d == 0 || self.tile[d] != 0;
                if bounded && i >= self.tensor[d] {
                    inside = false;
                }
                off = off.wrapping_add(if d == 0 {
                    i
                } else {
                    i.wrapping_mul(self.stride[d])
                });
            }
            let stream = k * size;
            let pad = self.pad.map_or(0, |(every, amount)| {
                stream / (every as u64 * 4) * amount as u64 * 4
            });
            let lds = self.lds.wrapping_add((stream + pad) as u32);
            let global = inside.then(|| self.global.wrapping_add(off.wrapping_mul(size)));
            (global, lds)
        })
    }

    /// LDS bytes the copy spans from its LDS address (padding included).
    pub fn lds_span(&self) -> u64 {
        let bytes = self.count() * self.size as u64;
        bytes
            + self.pad.map_or(0, |(every, amount)| {
                bytes.saturating_sub(1) / (every as u64 * 4) * amount as u64 * 4
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// llvm-mc-22 `-mcpu=gfx1250 -show-encoding`:
    /// `tensor_load_to_lds s[0:3], s[4:11]` is
    /// `[0x01,0x00,0x71,0xd0,0x00,0x00,0x00,0x7c,0x00,0x04,0x7c,0x7c]`,
    /// and with `s[12:15], s[16:19]` the last word is `0x100c0400`;
    /// `th:TH_LOAD_HT scope:SCOPE_DEV` sets word 1 to `0x7c280000`.
    #[test]
    fn decodes_llvm_22_and_legacy_words() {
        let w = decode_words(&[0xd071_0001, 0x7c00_0000, 0x7c7c_0400]).unwrap();
        assert_eq!(
            (w.load, w.groups.clone(), w.legacy),
            (true, vec![0, 4], false)
        );
        let w = decode_words(&[0xd071_0001, 0x7c28_0000, 0x100c_0400]).unwrap();
        assert_eq!(
            (w.groups.clone(), w.th, w.scope),
            (vec![0, 4, 12, 16], 2, 2)
        );
        let w = decode_words(&[0xd071_4001, 0x7c00_0000, 0x7c7c_0400]).unwrap();
        assert!(!w.load);
        // aiter's: th 2 on s[32:35], s[36:43].
        let w = decode_words(&[0xd031_0000, 0x0020_0000, 0x7c7c_2420]).unwrap();
        assert_eq!(
            (w.load, w.groups.clone(), w.th, w.legacy),
            (true, vec![32, 36], 2, true)
        );
        assert!(decode_words(&[0xd071_0000, 0x0000_0000, 0x7c7c_2420]).is_err());
        assert!(decode_words(&[0xd031_0000, 0x0000_0001, 0x7c7c_2420]).is_err());
        let w = decode_words(&[0xd031_0000, 0, 0x7c10_2420]).unwrap();
        assert_eq!(w.groups, vec![32, 36, 16, NULL_SGPR]);
        assert!(decode_words(&[0xd031_0000, 0, 0x7c7c_7c20]).is_err());
    }

    fn desc(g1: [u32; 8]) -> Result<Descriptor, String> {
        let g0 = [1, 0x100, 0x1000, 0x8000_0000];
        Descriptor::parse(&[&g0, &g1], true)
    }

    #[test]
    fn two_d_tile_with_padding_and_bounds() {
        // 4-byte elements, tensor 3 x 5 (dim0 x dim1), tile 4 x 2, row
        // stride 7, padding 1 dword after every 2.
        // Interval field 0: 2 dwords; amount field 0: 1 dword.
        let d0 = 2 << 16 | 1 << 20;
        let d = desc([d0, 3 << 16, 5 << 16, 4 << 16, 2, 7, 0, 0]).unwrap();
        assert_eq!(
            (d.size, d.pad, d.tensor[0], d.tensor[1]),
            (4, Some((2, 1)), 3, 5)
        );
        let e: Vec<_> = d.elements().collect();
        assert_eq!(e.len(), 8);
        assert_eq!(e[0], (Some(0x1000), 0x100));
        assert_eq!(e[1], (Some(0x1004), 0x104));
        assert_eq!(e[2], (Some(0x1008), 0x10c));
        assert_eq!(e[3], (None, 0x110));
        assert_eq!(e[4], (Some(0x1000 + 28), 0x118));
        assert_eq!(d.lds_span(), 8 * 4 + 3 * 4);
    }

    /// aiter's f8gemm masks on a 4 x 1 cluster: A's the row (0xf), B's
    /// the workgroup's own bit; each issuer's bit must be in its mask.
    #[test]
    fn multicast_masks_need_the_issuers_bit() {
        for rank in 0..4 {
            assert_eq!(check_multicast(0xf, Some((rank, 4))), Ok(()));
            assert_eq!(check_multicast(1 << rank, Some((rank, 4))), Ok(()));
            let e = check_multicast(0xf ^ 1 << rank, Some((rank, 4))).unwrap_err();
            assert!(e.contains("leaves out the issuing workgroup"), "{e}");
        }
        assert!(check_multicast(0x1f, Some((0, 4)))
            .unwrap_err()
            .contains("past the cluster's 4"));
        assert_eq!(check_multicast(0, None), Ok(()));
        assert_eq!(check_multicast(1, None), Ok(()));
        assert!(check_multicast(3, None)
            .unwrap_err()
            .contains("without workgroup clusters"));
    }

    #[test]
    fn refuses_what_is_not_modelled() {
        for (d0, what) in [(1 << 18, "atomic barrier"), (1 << 19, "iterate")] {
            let e = desc([d0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
            assert!(e.contains(what), "{e}");
        }
        let e = desc([0, 0, 0, 0, 1 << 16, 0, 0, 0]).unwrap_err();
        assert!(e.contains("tile_dim2"), "{e}");
        let g0 = [1, 0, 0, 0x4000_0000];
        let e = Descriptor::parse(&[&g0, &[0; 8]], true).unwrap_err();
        assert!(e.contains("type 1"), "{e}");
        // Type 0 (aiter's cleared descriptor): nothing moves, whatever the
        // other fields hold.
        let g0 = [1, 0x100, 0x1000, 0x0000_0001];
        let d = Descriptor::parse(&[&g0, &[1 << 19; 8]], true).unwrap();
        assert_eq!(d.elements().count(), 0);
        // Predicate 0: nothing moves, nothing else is read; 2 is refused.
        let g0 = [0, 0, 0, 0x4000_0000];
        let d = Descriptor::parse(&[&g0, &[1 << 19; 8]], true).unwrap();
        assert_eq!(d.elements().count(), 0);
        let g0 = [2, 0, 0, 0x8000_0000];
        let e = Descriptor::parse(&[&g0, &[0; 8]], true).unwrap_err();
        assert!(e.contains("predicate 2"), "{e}");
        let g0 = [1, 0, 0, 0x8000_0000];
        // A store ignores padding: the tile is one stream in LDS.
        let g1 = [1 << 20 | 3 << 25, 4 << 16, 0, 8 << 16, 0, 0, 0, 0];
        let d = Descriptor::parse(&[&g0, &g1], false).unwrap();
        assert_eq!((d.pad, d.lds_span()), (None, 8));
        assert!(Descriptor::parse(&[&g0, &g1], true).unwrap().pad.is_some());
    }
}
