//! Devices as data: the figures the timing model uses, each with its
//! source. A figure no source gives is marked [`Figure::guess`].

use serde::Serialize;

use super::counters::MfmaType;

/// One figure and where it comes from.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Figure {
    /// The value.
    pub value: f64,
    /// The source (document, section), or why it is a guess.
    pub source: &'static str,
    /// No source gives it: an assumption of this model.
    pub guess: bool,
}

const fn cited(value: f64, source: &'static str) -> Figure {
    Figure {
        value,
        source,
        guess: false,
    }
}

const fn guess(value: f64, source: &'static str) -> Figure {
    Figure {
        value,
        source,
        guess: true,
    }
}

/// A device the timing model can time a launch on.
#[derive(Debug, Clone, Serialize)]
pub struct Device {
    /// Name (`mi300x`, …).
    pub name: &'static str,
    /// The processor its CUs are (`gfx942`, `gfx950`).
    pub processor: &'static str,
    /// Compute units.
    pub cus: Figure,
    /// Peak engine clock, MHz.
    pub clock_mhz: Figure,
    /// The engine clock a kernel runs at under sustained load, MHz: what
    /// the model turns cycles into time with (below the peak: power and
    /// thermal management).
    pub sustained_mhz: Figure,
    /// LDS banks of 4 bytes.
    pub lds_banks: Figure,
    /// LDS bytes per CU.
    pub lds_bytes: Figure,
    /// HBM bandwidth, GB/s.
    pub hbm_gbps: Figure,
    /// L2 bytes (per XCD).
    pub l2_bytes: Figure,
    /// L2 read bandwidth of the whole device, bytes per clock (every XCD's
    /// L2 together).
    pub l2_bytes_per_clock: Figure,
    /// Infinity Cache (MALL) bytes.
    pub mall_bytes: Figure,
    /// Vector L1 hit latency, cycles.
    pub l1_latency: Figure,
    /// L2 hit latency, cycles.
    pub l2_latency: Figure,
    /// HBM (a miss in L2 and MALL) latency, cycles.
    pub hbm_latency: Figure,
    /// LDS latency, cycles.
    pub lds_latency: Figure,
    /// Scalar memory latency, cycles.
    pub smem_latency: Figure,
    /// Peak dense matrix FLOP/s (×10¹²) per input type, in
    /// [`MfmaType`] order: f64, f32, xf32, f16/bf16, f8/i8.
    pub mfma_tflops: [Figure; 5],
    /// Launch overhead, µs.
    pub launch_us: Figure,
}

const MI300X_DS: &str = "AMD Instinct MI300X data sheet and AMD CDNA 3 white paper (peak engine clock 2100 MHz, 304 CUs, 5.3 TB/s HBM3, 256 MB Infinity Cache, peak dense matrix rates)";
const CDNA3_LAT: &str = "guessed: the order of Chips and Cheese, 'Testing AMD's Giant MI300X' (2024) latency plots, not read figure by figure";
/// The sustained clock as a fraction of the peak: one figure for every
/// device, fitted (see [`Device::sustained_mhz`]).
pub const SUSTAINED_FRACTION: f64 = 0.77;
const FITTED: &str = "fitted on the two aiter tables (aiter/configs/bf16_tuned_gemm.csv on MI355X, a8w8_bpreshuffle_tuned_gemm.csv on MI300X and MI308X): 0.77 of the peak clock, one fraction for every device, the one that minimises the mean |log(predicted/measured)| of their 139 asm rows with the launch overhead at 2 µs; not a measured clock";
const MI355X_DS: &str = "AMD Instinct MI355X data sheet and AMD CDNA 4 white paper (256 CUs, 2400 MHz peak engine clock, 8 TB/s HBM3E, 256 MB Infinity Cache, 160 KB LDS, peak dense matrix rates)";

const ROCM_SPECS: &str = "ROCm documentation, 'AMD GPU specifications', Radeon table (ROCm/rocm-docs docs/reference/gpu-specs.rst): RX 7900 XTX (gfx1100): 96 CUs, LDS 128 KiB, Infinity Cache 96 MiB, L2 6 MiB, VGPR file 768 KiB; RX 9070 XT (gfx1201): 64 CUs, LDS 128 KiB, Infinity Cache 64 MiB, L2 8 MiB, VGPR file 768 KiB; LDS per WGP as LLVM AMDGPUUsage's Processors table gives it for gfx10-gfx12 (WGP mode)";
const RDNA3_WGP: &str = "derived: 96 CUs (ROCm 'AMD GPU specifications') in WGPs of 2 CUs (4 SIMD32s; AMD 'RDNA Architecture' white paper): 48 WGPs, each the model's 4-SIMD unit";
const RDNA4_WGP: &str = "derived: 64 CUs (ROCm 'AMD GPU specifications') in WGPs of 2 CUs: 32 WGPs, each the model's 4-SIMD unit";
const RX7900XTX_DS: &str = "AMD's RX 7900 XTX launch specification as AnandTech tabulated it ('AMD Reveals Radeon RX 7900 XTX and 7900 XT', Nov 2022): boost clock 2.5 GHz, 20 Gbps GDDR6 on a 384-bit bus (960 GB/s)";
const RX9070XT_DS: &str = "AMD's RX 9070 XT specification as reported at launch (J. Walton, 'Inside the DNA of AMD', Linux Format, June 2025): boost clock 2.97 GHz, 20 Gb/s GDDR6 on a 256-bit bus (640 GB/s)";
const RDNA_LDS_BANKS: &str =
    "LLVM AMDGPU.td: FeatureLDSBankCount32 in FeatureISAVersion11_Common and FeatureISAVersion12";
const RDNA_SUSTAINED: &str = "guessed: the CDNA devices' fitted fraction (0.77 of the peak clock) applied to an RDNA device; no RDNA measurement was fitted";
const RDNA_LAT: &str = "guessed: MI300X's figures; no RDNA latency was read";
const NO_F64_WMMA: &str = "none: RDNA has no f64, f32 or xf32 WMMA (the RDNA3/RDNA4 tables' WMMA entries are f16, bf16, i8, i4 and, on RDNA4, fp8/bf8); unused";
const WMMA_UNTIMED_RDNA3: &str = "guessed, unused: 96 CUs × 512 f16 FLOP per clock × 2.5 GHz; the model does not time WMMA from it (a WMMA instruction holds the SIMD's matrix pipe 4 cycles)";
const WMMA_UNTIMED_RDNA4: &str = "guessed, unused: 64 CUs × 512 f16 FLOP per clock (twice that for fp8) × 2.97 GHz; the model does not time WMMA from it (a WMMA instruction holds the SIMD's matrix pipe 4 cycles)";

impl Device {
    /// Every device, in name order.
    pub fn all() -> Vec<Device> {
        vec![
            Device::mi300x(),
            Device::mi308x(),
            Device::mi355x(),
            Device::rx7900xtx(),
            Device::rx9070xt(),
        ]
    }

    /// The device named `name` (case-insensitive).
    pub fn by_name(name: &str) -> Option<Device> {
        Device::all()
            .into_iter()
            .find(|d| d.name.eq_ignore_ascii_case(name))
    }

    /// The names of every device.
    pub fn names() -> Vec<&'static str> {
        Device::all().iter().map(|d| d.name).collect()
    }

    fn mi300x() -> Device {
        Device {
            name: "mi300x",
            processor: "gfx942",
            cus: cited(304.0, MI300X_DS),
            clock_mhz: cited(2100.0, MI300X_DS),
            sustained_mhz: guess(2100.0 * SUSTAINED_FRACTION, FITTED),
            lds_banks: cited(32.0, "ROCm blog 'Avoiding LDS Bank Conflicts on AMD GPUs Using CK-Tile Framework': 32 banks of 4 bytes on MI-series"),
            lds_bytes: cited(65536.0, "LLVM AMDGPUUsage, Processors table (gfx942: 64 KiB LDS)"),
            hbm_gbps: cited(5300.0, MI300X_DS),
            l2_bytes: cited(4.0 * 1048576.0, "Chips and Cheese, 'Testing AMD's Giant MI300X': 4 MB of L2 per compute die"),
            l2_bytes_per_clock: guess(8.0 * 2048.0, "guessed: 8 XCDs × 2 KB/clock, each XCD's L2 as 16 channels of 128 bytes per clock as recalled from the AMD CDNA 3 white paper, not re-read here"),
            mall_bytes: cited(256.0 * 1048576.0, MI300X_DS),
            l1_latency: guess(120.0, CDNA3_LAT),
            l2_latency: guess(250.0, CDNA3_LAT),
            hbm_latency: guess(800.0, CDNA3_LAT),
            lds_latency: guess(64.0, "guessed: LLVM SISchedule.td gives WriteLDS 5 passes, 'can be between 2 and 64', marked 'may not be accurate'"),
            smem_latency: guess(64.0, "guessed: LLVM SISchedule.td gives WriteSMEM 5 passes, marked 'may not be accurate'"),
            mfma_tflops: [
                cited(163.4, MI300X_DS),
                cited(163.4, MI300X_DS),
                cited(653.7, MI300X_DS),
                cited(1307.4, MI300X_DS),
                cited(2614.9, MI300X_DS),
            ],
            launch_us: guess(2.0, "guessed: kernel launch overhead, not measured here"),
        }
    }

    fn mi308x() -> Device {
        let per_cu = "derived: MI300X's per-CU rate (same CDNA 3 CU) × 80 CUs × 2100 MHz; no MI308X data sheet figure was read";
        let scale = 80.0 / 304.0;
        let m = Device::mi300x();
        Device {
            name: "mi308x",
            processor: "gfx942",
            cus: cited(
                80.0,
                "aiter/configs/*.csv: rows of gfx942 with cu_num 80 (MI308X)",
            ),
            clock_mhz: guess(2100.0, "guessed: MI300X's peak engine clock"),
            sustained_mhz: guess(2100.0 * SUSTAINED_FRACTION, FITTED),
            hbm_gbps: guess(5300.0, "guessed: MI300X's HBM3 bandwidth"),
            l2_bytes_per_clock: guess(
                m.l2_bytes_per_clock.value * scale,
                "guessed: MI300X's L2 bandwidth × 80/304 CUs",
            ),
            mfma_tflops: m.mfma_tflops.map(|f| guess(f.value * scale, per_cu)),
            ..m
        }
    }

    fn mi355x() -> Device {
        Device {
            name: "mi355x",
            processor: "gfx950",
            cus: cited(256.0, MI355X_DS),
            clock_mhz: cited(2400.0, MI355X_DS),
            sustained_mhz: guess(2400.0 * SUSTAINED_FRACTION, FITTED),
            lds_banks: cited(64.0, "AMD CK documentation 'Understanding AMD GPU LDS and Bank Conflicts': 32 or 64 banks depending on the architecture (64 on gfx950)"),
            lds_bytes: cited(163840.0, "LLVM AMDGPUUsage, Processors table (gfx950: 160 KiB LDS)"),
            hbm_gbps: cited(8000.0, MI355X_DS),
            l2_bytes: guess(4.0 * 1048576.0, "guessed: MI300X's 4 MB L2 per compute die"),
            l2_bytes_per_clock: guess(8.0 * 2048.0, "guessed: MI300X's 2 KB/clock per XCD, 8 XCDs"),
            mall_bytes: cited(256.0 * 1048576.0, MI355X_DS),
            l1_latency: guess(120.0, CDNA3_LAT),
            l2_latency: guess(250.0, CDNA3_LAT),
            hbm_latency: guess(800.0, CDNA3_LAT),
            lds_latency: guess(64.0, "guessed: as MI300X"),
            smem_latency: guess(64.0, "guessed: as MI300X"),
            mfma_tflops: [
                cited(78.6, MI355X_DS),
                cited(157.3, MI355X_DS),
                guess(157.3, "guessed: gfx950 has no xf32 MFMA; f32's rate"),
                cited(2516.6, MI355X_DS),
                cited(5033.2, MI355X_DS),
            ],
            launch_us: guess(2.0, "guessed: kernel launch overhead, not measured here"),
        }
    }

    /// The Radeon RX 7900 XTX (gfx1100, RDNA3). The model's "CU" is a WGP
    /// here: 4 SIMD32s sharing one LDS, which a workgroup spans in the
    /// default WGP mode.
    fn rx7900xtx() -> Device {
        Device {
            name: "rx7900xtx",
            processor: "gfx1100",
            cus: cited(48.0, RDNA3_WGP),
            clock_mhz: cited(2500.0, RX7900XTX_DS),
            sustained_mhz: guess(2500.0 * SUSTAINED_FRACTION, RDNA_SUSTAINED),
            lds_banks: cited(32.0, RDNA_LDS_BANKS),
            lds_bytes: cited(131072.0, ROCM_SPECS),
            hbm_gbps: cited(960.0, RX7900XTX_DS),
            l2_bytes: cited(6.0 * 1048576.0, ROCM_SPECS),
            l2_bytes_per_clock: guess(
                6.0 * 1024.0,
                "guessed: 6 KB/clock (48 WGPs × 128 bytes); no RDNA3 L2 bandwidth figure was read",
            ),
            mall_bytes: cited(96.0 * 1048576.0, ROCM_SPECS),
            l1_latency: guess(120.0, RDNA_LAT),
            l2_latency: guess(250.0, RDNA_LAT),
            hbm_latency: guess(800.0, RDNA_LAT),
            lds_latency: guess(64.0, "guessed: as MI300X"),
            smem_latency: guess(64.0, "guessed: as MI300X"),
            mfma_tflops: [
                guess(0.0, NO_F64_WMMA),
                guess(0.0, NO_F64_WMMA),
                guess(0.0, NO_F64_WMMA),
                guess(122.9, WMMA_UNTIMED_RDNA3),
                guess(122.9, WMMA_UNTIMED_RDNA3),
            ],
            launch_us: guess(2.0, "guessed: kernel launch overhead, not measured here"),
        }
    }

    /// The Radeon RX 9070 XT (gfx1201, RDNA4); as [`Device::rx7900xtx`],
    /// a WGP is the model's CU.
    fn rx9070xt() -> Device {
        Device {
            name: "rx9070xt",
            processor: "gfx1201",
            cus: cited(32.0, RDNA4_WGP),
            clock_mhz: cited(2970.0, RX9070XT_DS),
            sustained_mhz: guess(2970.0 * SUSTAINED_FRACTION, RDNA_SUSTAINED),
            lds_banks: cited(32.0, RDNA_LDS_BANKS),
            lds_bytes: cited(131072.0, ROCM_SPECS),
            hbm_gbps: cited(640.0, RX9070XT_DS),
            l2_bytes: cited(8.0 * 1048576.0, ROCM_SPECS),
            l2_bytes_per_clock: guess(
                4.0 * 1024.0,
                "guessed: 4 KB/clock (32 WGPs × 128 bytes); no RDNA4 L2 bandwidth figure was read",
            ),
            mall_bytes: cited(64.0 * 1048576.0, ROCM_SPECS),
            l1_latency: guess(120.0, RDNA_LAT),
            l2_latency: guess(250.0, RDNA_LAT),
            hbm_latency: guess(800.0, RDNA_LAT),
            lds_latency: guess(64.0, "guessed: as MI300X"),
            smem_latency: guess(64.0, "guessed: as MI300X"),
            mfma_tflops: [
                guess(0.0, NO_F64_WMMA),
                guess(0.0, NO_F64_WMMA),
                guess(0.0, NO_F64_WMMA),
                guess(97.3, WMMA_UNTIMED_RDNA4),
                guess(194.6, WMMA_UNTIMED_RDNA4),
            ],
            launch_us: guess(2.0, "guessed: kernel launch overhead, not measured here"),
        }
    }

    /// Cycles of one MFMA of `flops` operations of type `ty` on one SIMD:
    /// the peak rate divided over CUs, 4 SIMDs and the clock.
    pub fn mfma_cycles(&self, ty: MfmaType, flops: u64) -> f64 {
        let rate = self.mfma_tflops[ty as usize].value * 1e12
            / (self.cus.value * 4.0 * self.clock_mhz.value * 1e6);
        flops as f64 / rate
    }

    /// Every figure with its name, for the reference table.
    pub fn figures(&self) -> Vec<(&'static str, Figure)> {
        let mut v = vec![
            ("CUs", self.cus),
            ("clock (MHz)", self.clock_mhz),
            ("sustained clock (MHz)", self.sustained_mhz),
            ("LDS banks", self.lds_banks),
            ("LDS bytes per CU", self.lds_bytes),
            ("HBM GB/s", self.hbm_gbps),
            ("L2 bytes", self.l2_bytes),
            ("L2 bytes per clock", self.l2_bytes_per_clock),
            ("MALL bytes", self.mall_bytes),
            ("L1 latency (cycles)", self.l1_latency),
            ("L2 latency (cycles)", self.l2_latency),
            ("HBM latency (cycles)", self.hbm_latency),
            ("LDS latency (cycles)", self.lds_latency),
            ("scalar memory latency (cycles)", self.smem_latency),
            ("launch overhead (µs)", self.launch_us),
        ];
        for (n, f) in ["f64", "f32", "xf32", "f16/bf16", "f8/i8"]
            .iter()
            .zip(self.mfma_tflops)
        {
            let name: &'static str = match *n {
                "f64" => "MFMA f64 TFLOP/s",
                "f32" => "MFMA f32 TFLOP/s",
                "xf32" => "MFMA xf32 TFLOP/s",
                "f16/bf16" => "MFMA f16/bf16 TFLOP/s",
                _ => "MFMA f8/i8 TFLOP/s",
            };
            v.push((name, f));
        }
        v
    }
}
