//! The 64-byte kernel descriptor (LLVM AMDGPUUsage, "Kernel Descriptor"):
//! the one reader of its layout, which gcn-emu's loader, gcn-patch's lift
//! (the comment decoding a raw descriptor) and verify share.

/// The fields of a kernel descriptor, as stored (the reserved bytes aside).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Descriptor {
    /// Fixed LDS size in bytes.
    pub group_segment_fixed_size: u32,
    /// Fixed scratch size per work-item in bytes.
    pub private_segment_fixed_size: u32,
    /// Kernarg size in bytes.
    pub kernarg_size: u32,
    /// Byte offset of the entry from the descriptor.
    pub kernel_code_entry_byte_offset: i64,
    /// COMPUTE_PGM_RSRC1.
    pub rsrc1: u32,
    /// COMPUTE_PGM_RSRC2.
    pub rsrc2: u32,
    /// COMPUTE_PGM_RSRC3.
    pub rsrc3: u32,
    /// kernel_code_properties (user SGPR enables, wave32).
    pub properties: u16,
    /// Kernarg preload: length in dwords (bits 0–6) and offset (bits 7–15).
    pub kernarg_preload: u16,
}

impl Descriptor {
    /// Parse the 64 bytes.
    pub fn parse(b: &[u8; 64]) -> Self {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let mut entry = [0u8; 8];
        entry.copy_from_slice(&b[16..24]);
        Descriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            kernel_code_entry_byte_offset: i64::from_le_bytes(entry),
            rsrc3: u32_at(44),
            rsrc1: u32_at(48),
            rsrc2: u32_at(52),
            properties: u16::from_le_bytes([b[56], b[57]]),
            kernarg_preload: u16::from_le_bytes([b[58], b[59]]),
        }
    }
    /// ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER (4 user SGPRs).
    pub fn private_segment_buffer(&self) -> bool {
        self.properties & 1 != 0
    }
    /// ENABLE_SGPR_DISPATCH_PTR (2).
    pub fn dispatch_ptr(&self) -> bool {
        self.properties & 2 != 0
    }
    /// ENABLE_SGPR_QUEUE_PTR (2).
    pub fn queue_ptr(&self) -> bool {
        self.properties & 4 != 0
    }
    /// ENABLE_SGPR_KERNARG_SEGMENT_PTR (2).
    pub fn kernarg_segment_ptr(&self) -> bool {
        self.properties & 8 != 0
    }
    /// ENABLE_SGPR_DISPATCH_ID (2).
    pub fn dispatch_id(&self) -> bool {
        self.properties & 16 != 0
    }
    /// ENABLE_SGPR_FLAT_SCRATCH_INIT (2).
    pub fn flat_scratch_init(&self) -> bool {
        self.properties & 32 != 0
    }
    /// ENABLE_SGPR_PRIVATE_SEGMENT_SIZE (1).
    pub fn private_segment_size(&self) -> bool {
        self.properties & 64 != 0
    }
    /// ENABLE_WAVEFRONT_SIZE32.
    pub fn wave32(&self) -> bool {
        self.properties & (1 << 10) != 0
    }
    /// USER_SGPR_COUNT: where the system SGPRs start (GFX6–GFX12.0's 5-bit
    /// field; see [`Descriptor::user_sgpr_count_on`] for gfx1250's).
    pub fn user_sgpr_count(&self) -> u32 {
        (self.rsrc2 >> 1) & 0x1f
    }
    /// USER_SGPR_COUNT on `processor`: gfx1250 (GFX12.5) widens the field
    /// to 6 bits (COMPUTE_PGM_RSRC2 bits 1–6, LLVM's
    /// `COMPUTE_PGM_RSRC2_GFX125_USER_SGPR_COUNT`; bit 6 is
    /// ENABLE_TRAP_HANDLER before), since it has up to 32 user SGPRs: a
    /// kernel pointer and 30 preloaded kernarg dwords count 32 (aiter's
    /// gfx1250 flash-attention forward).
    pub fn user_sgpr_count_on(&self, processor: &str) -> u32 {
        if processor.starts_with("gfx125") {
            (self.rsrc2 >> 1) & 0x3f
        } else {
            self.user_sgpr_count()
        }
    }
    /// ENABLE_PRIVATE_SEGMENT: the private segment wave offset SGPR.
    pub fn private_segment_wave_offset(&self) -> bool {
        self.rsrc2 & 1 != 0
    }
    /// ENABLE_SGPR_WORKGROUP_ID_X, _Y, _Z.
    pub fn workgroup_id(&self) -> [bool; 3] {
        [
            self.rsrc2 & (1 << 7) != 0,
            self.rsrc2 & (1 << 8) != 0,
            self.rsrc2 & (1 << 9) != 0,
        ]
    }
    /// ENABLE_SGPR_WORKGROUP_INFO.
    pub fn workgroup_info(&self) -> bool {
        self.rsrc2 & (1 << 10) != 0
    }
    /// ENABLE_VGPR_WORKITEM_ID: 0 = X, 1 = X and Y, 2 = X, Y and Z.
    pub fn workitem_id_vgprs(&self) -> u32 {
        (self.rsrc2 >> 11) & 3
    }
    /// VGPRs (architected plus accumulation) the kernel may use:
    /// (GRANULATED_WORKITEM_VGPR_COUNT + 1) × 8 on gfx90a and later.
    pub fn vgpr_count(&self) -> u32 {
        ((self.rsrc1 & 0x3f) + 1) * 8
    }
    /// First AGPR in the unified register file (gfx90a+: ACCUM_OFFSET).
    pub fn accum_offset(&self) -> u32 {
        ((self.rsrc3 & 0x3f) + 1) * 4
    }
    /// AGPRs the kernel may use (gfx90a+): the unified file's
    /// [`vgpr_count`](Self::vgpr_count) past [`accum_offset`](Self::accum_offset).
    pub fn agpr_count(&self) -> u32 {
        self.vgpr_count().saturating_sub(self.accum_offset())
    }
    /// SGPRs allocated to a wave on GFX9 (gfx90a, gfx942, gfx950):
    /// GRANULATED_WAVEFRONT_SGPR_COUNT (COMPUTE_PGM_RSRC1 bits 6–9) in the
    /// hardware's blocks of 16. AMDGPUUsage writes the field as
    /// `2 * max(0, ceil(sgprs_used / 16) - 1)`; LLVM encodes it in blocks
    /// of 8 (`ceil(sgprs_used / 8) - 1`); `(field / 2 + 1) * 16` is what
    /// either covers. The count includes VCC, FLAT_SCRATCH and XNACK_MASK
    /// when the kernel uses them (AMDGPUUsage, `wavefront_sgpr_count`).
    pub fn sgpr_count(&self) -> u32 {
        (((self.rsrc1 >> 6) & 0xf) / 2 + 1) * 16
    }
    /// Kernarg preload length in dwords.
    pub fn kernarg_preload_length(&self) -> u32 {
        (self.kernarg_preload & 0x7f) as u32
    }
    /// Kernarg preload offset in dwords.
    pub fn kernarg_preload_offset(&self) -> u32 {
        (self.kernarg_preload >> 7) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_sit_at_amdgpuusage_offsets() {
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&1024u32.to_le_bytes());
        b[4..8].copy_from_slice(&16u32.to_le_bytes());
        b[8..12].copy_from_slice(&24u32.to_le_bytes());
        b[16..24].copy_from_slice(&(-256i64).to_le_bytes());
        b[44..48].copy_from_slice(&3u32.to_le_bytes());
        b[48..52].copy_from_slice(&0x00af_0042u32.to_le_bytes());
        b[52..56].copy_from_slice(&0x0000_138cu32.to_le_bytes());
        b[56..58].copy_from_slice(&0x0408u16.to_le_bytes());
        b[58..60].copy_from_slice(&0x0102u16.to_le_bytes());
        let d = Descriptor::parse(&b);
        assert_eq!(
            (
                d.group_segment_fixed_size,
                d.private_segment_fixed_size,
                d.kernarg_size
            ),
            (1024, 16, 24)
        );
        assert_eq!(d.kernel_code_entry_byte_offset, -256);
        assert_eq!((d.rsrc3, d.rsrc1, d.rsrc2), (3, 0x00af_0042, 0x138c));
        assert!(d.kernarg_segment_ptr() && d.wave32());
        assert_eq!(d.user_sgpr_count(), 6);
        // gfx1250's 6-bit field: 32 user SGPRs (rsrc2 bit 6) read as 0 by
        // the 5-bit field of the other targets.
        let d32 = Descriptor {
            rsrc2: 32 << 1 | 0x380,
            ..Descriptor::default()
        };
        assert_eq!(
            (
                d32.user_sgpr_count_on("gfx1250"),
                d32.user_sgpr_count_on("gfx1201"),
                d.user_sgpr_count_on("gfx1250")
            ),
            (32, 0, 6)
        );
        assert_eq!(d.vgpr_count(), 24);
        assert_eq!(d.accum_offset(), 16);
        assert_eq!(d.agpr_count(), 8);
        // rsrc1 0x42: GRANULATED_WAVEFRONT_SGPR_COUNT 1, 8-blocks: 16.
        assert_eq!(d.sgpr_count(), 16);
        for (field, sgprs) in [(0u32, 16), (2, 32), (5, 48), (12, 112), (15, 128)] {
            let d = Descriptor {
                rsrc1: field << 6,
                ..Descriptor::default()
            };
            assert_eq!(d.sgpr_count(), sgprs, "field {field}");
        }
        assert_eq!(
            (d.kernarg_preload_length(), d.kernarg_preload_offset()),
            (2, 2)
        );
    }
}
