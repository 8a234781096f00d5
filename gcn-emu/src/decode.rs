//! Decoding: LLVM's disassembler (`llvm-objdump -d --symbolize-operands`)
//! turned into [`Instruction`]s.
//!
//! Every encoding LLVM knows is decoded by LLVM; this module only reads its
//! text (mnemonic, operands, modifiers) and keeps the raw words, from which
//! the executor takes the fields LLVM prints symbolically (branch offsets,
//! DPP controls, DS offsets). Nothing here knows what an instruction does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::load::{CodeObject, Kernel};
use crate::{Error, Result};

pub mod msb;

/// A register operand's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegFile {
    /// Scalar registers, in hardware numbering: s0–s101, flat_scratch 102–103,
    /// xnack_mask 104–105, vcc 106–107, ttmp 108–123, m0 124, exec 126–127.
    S,
    /// Vector registers.
    V,
    /// Accumulation registers (AGPRs).
    A,
}

/// Hardware SGPR index of `vcc_lo`.
pub const VCC: u16 = 106;
/// Hardware SGPR index of `m0`.
pub const M0: u16 = 124;
/// Hardware SGPR index of `exec_lo`.
pub const EXEC: u16 = 126;
/// Hardware SGPR index of `m0` on gfx11 and gfx12 (RDNA3/RDNA4), where `m0`
/// and `null` trade the places they have on gfx10: llvm-mc-22 encodes
/// `s_mov_b32 m0, s0` with SDST 125 and `s_mov_b32 null, s0` with 124 for
/// gfx1100 and gfx1201 (124 is `m0` on gfx9 and gfx10).
pub const M0_GFX11: u16 = 125;
/// Hardware SGPR index of `null` on gfx11 and gfx12: reads 0, writes are
/// dropped (see [`M0_GFX11`]).
pub const NULL_GFX11: u16 = 124;

/// The SGPR numbering of a target's generation: where `m0` and `null` are,
/// and how many SGPRs are written by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Numbering {
    /// Hardware index of `m0`.
    pub m0: u16,
    /// Hardware index of `null` (none on gfx9).
    pub null: Option<u16>,
    /// SGPRs named by number (`s0` up to this, exclusive): 102 on gfx9
    /// (102-105 are flat_scratch and xnack_mask), 106 on gfx10+.
    pub addressable: u32,
    /// VGPRs a wave32 kernel gets per GRANULATED_WORKITEM_VGPR_COUNT step
    /// (half that in wave64): 8 on gfx10-gfx12, 16 on gfx1250 (its 1024
    /// VGPRs; aiter's gfx1250 `fmha_bwd_hd128_dq_convert_bf16` uses
    /// `v23` with the field at 1); unused on gfx9.
    pub vgpr_block: u32,
}

impl Numbering {
    /// gfx9 (gfx90a, gfx942, gfx950): `m0` 124, no `null`, `s0`-`s101`.
    pub const GFX9: Numbering = Numbering {
        m0: M0,
        null: None,
        addressable: ADDRESSABLE_SGPRS,
        vgpr_block: 0,
    };
    /// gfx11 and gfx12: `null` 124, `m0` 125, `s0`-`s105`.
    pub const GFX11: Numbering = Numbering {
        m0: M0_GFX11,
        null: Some(NULL_GFX11),
        addressable: 106,
        vgpr_block: 8,
    };
    /// gfx1250: gfx11's SGPR numbering, VGPRs in blocks of 16 (wave32).
    pub const GFX1250: Numbering = Numbering {
        vgpr_block: 16,
        ..Numbering::GFX11
    };
    /// The numbering of `processor` (`gfx11*`, `gfx12*`: [`Numbering::GFX11`];
    /// anything else gfx9's).
    pub fn of(processor: &str) -> Numbering {
        if processor == "gfx1250" {
            Numbering::GFX1250
        } else if processor.starts_with("gfx11") || processor.starts_with("gfx12") {
            Numbering::GFX11
        } else {
            Numbering::GFX9
        }
    }
}

/// One operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// Registers `index .. index+count` of a file.
    Reg {
        /// The file.
        file: RegFile,
        /// First register.
        index: u16,
        /// Number of registers.
        count: u16,
    },
    /// An integer constant (inline or literal), as printed.
    Int(i64),
    /// A floating-point inline constant, e.g. `1.0`, `-4.0`, `0.15915494`.
    Float(f64),
    /// `scc` as an operand.
    Scc,
    /// `src_shared_base`, `src_private_base`, ... (apertures).
    Aperture(String),
    /// `off` (no address register).
    Off,
    /// A label (branch target) or other text the decoder keeps as is.
    Text(String),
}

/// An operand with its input modifiers.
#[derive(Debug, Clone, PartialEq)]
pub struct Src {
    /// The operand.
    pub op: Operand,
    /// `-x` or `neg(x)`.
    pub neg: bool,
    /// `|x|` or `abs(x)`.
    pub abs: bool,
    /// `sext(x)` (SDWA).
    pub sext: bool,
}

/// One decoded instruction.
#[derive(Debug, Clone)]
pub struct Instruction {
    /// Address in the code object.
    pub addr: u64,
    /// The mnemonic as printed, e.g. `v_add_f32_e32`.
    pub mnemonic: String,
    /// The operands in order.
    pub ops: Vec<Src>,
    /// Modifiers after the operands: `offset:16` as ("offset", "16"), `glc` as ("glc", "").
    /// When an operand is a 16-bit VGPR half (true16: `v9.l`, `v9.h`), the
    /// decoder adds ("t16", one letter per operand: `l`, `h`, or `-` for an
    /// operand that is not a half), and the operand is its register.
    /// The executor's raw view (read [`Instruction::modifier`]); public for tests.
    #[doc(hidden)]
    pub mods: Vec<(String, String)>,
    /// The encoding's dwords: the executor's raw view; public for tests.
    #[doc(hidden)]
    pub words: Vec<u32>,
    /// The instruction's text as LLVM printed it.
    pub text: String,
    /// RDNA's dual issue (VOPD): LLVM prints a pair as one line,
    /// `v_dual_X ... :: v_dual_Y ...`. This instruction is then the X half
    /// (its mnemonic, operands; `text` is the whole line) and `dual` the Y
    /// half (same address and words, its own mnemonic, operands and text).
    /// The pair is one instruction: one address, one issue, one event for
    /// observers. `None` for every other instruction.
    pub dual: Option<Box<Instruction>>,
    /// Its routing, resolved from the mnemonic once, when it is made
    /// ([`Instruction::new`], [`Instruction::set_mnemonic`]): what runs it
    /// and its entry in the instruction-property table, so that running it
    /// looks nothing up by name.
    pub(crate) route: crate::exec::Route,
}

impl Instruction {
    /// An instruction, its routing resolved from `mnemonic` (as LLVM
    /// prints it, e.g. `v_add_f32_e32`).
    pub fn new(
        addr: u64,
        mnemonic: &str,
        ops: Vec<Src>,
        mods: Vec<(String, String)>,
        words: Vec<u32>,
        text: String,
    ) -> Instruction {
        Instruction {
            addr,
            mnemonic: mnemonic.to_string(),
            ops,
            mods,
            words,
            text,
            dual: None,
            route: crate::exec::Route::of(mnemonic),
        }
    }
    /// Change the mnemonic (a mutant, a probe), resolving the routing
    /// again. Assigning [`Instruction::mnemonic`] directly leaves the old
    /// routing: debug builds refuse that when the instruction runs.
    pub fn set_mnemonic(&mut self, mnemonic: &str) {
        self.mnemonic = mnemonic.to_string();
        self.route = crate::exec::Route::of(mnemonic);
    }
    /// Its entry in the instruction-property table ([`crate::isa`]),
    /// resolved when it was decoded; `None` for a mnemonic the table lacks.
    pub fn props(&self) -> Option<&'static crate::isa::Props> {
        self.route.props()
    }
    /// The value of a modifier, when present.
    pub fn modifier(&self, key: &str) -> Option<&str> {
        self.mods
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    /// Whether a modifier is present.
    pub fn has(&self, key: &str) -> bool {
        self.modifier(key).is_some()
    }
}

/// The decoded code of one kernel.
#[derive(Debug, Clone)]
pub struct Program {
    /// The kernel's name.
    pub kernel: String,
    /// Instructions in address order.
    pub instructions: Vec<Instruction>,
    /// Address to index into `instructions`.
    pub index: HashMap<u64, usize>,
    /// Optional map from address to an asm source line (`file:line: text`),
    /// used in error messages.
    pub lines: HashMap<u64, String>,
}

/// Find `llvm-objdump`: `$GCN_PATCH_LLVM_BIN/llvm-objdump`, then
/// `llvm-objdump-NN` on `PATH` (NN = 30 down to 19), then `llvm-objdump`.
/// `explicit` wins when given.
pub fn find_objdump(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(dir) = std::env::var_os("GCN_PATCH_LLVM_BIN") {
        let p = Path::new(&dir).join("llvm-objdump");
        if p.is_file() {
            return Ok(p);
        }
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    let mut names: Vec<String> = (19..=30)
        .rev()
        .map(|n| format!("llvm-objdump-{n}"))
        .collect();
    names.push("llvm-objdump".into());
    for n in &names {
        for d in &dirs {
            let p = d.join(n);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(Error::Decode {
        what: "llvm-objdump not found ($GCN_PATCH_LLVM_BIN, llvm-objdump-NN or llvm-objdump on PATH); \
               install it with `apt-get install -y llvm-22`"
            .into(),
    })
}

impl Program {
    /// Map the program's addresses to the lines of the asm source it was
    /// assembled from (`file` names it in reports): the instruction lines of
    /// the kernel's body (from its `NAME:` label), in order, are paired with
    /// the decoded instructions while their mnemonics agree (an `s_nop` the
    /// source does not have is alignment padding and is passed over).
    /// Returns how many were mapped.
    pub fn attach_source(&mut self, file: &str, text: &str) -> usize {
        let label = format!("{}:", self.kernel);
        let mut body = false;
        let mut src = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let t = line.split(';').next().unwrap_or("").trim();
            if !body {
                body = t == label;
                continue;
            }
            // The function ends at its `.Lfunc_end` label or `.size`; a
            // kernel may have several `s_endpgm` before it.
            if t.starts_with(".Lfunc_end") || t.starts_with(".size") {
                break;
            }
            if t.is_empty() || t.starts_with('.') || t.ends_with(':') || t.starts_with("//") {
                continue;
            }
            src.push((i + 1, t.to_string()));
        }
        let mut n = 0;
        let mut decoded = self.instructions.iter().peekable();
        for (no, t) in &src {
            let m = t.split_whitespace().next().unwrap_or("");
            let agrees = |mnemonic: &str| {
                mnemonic == m || mnemonic.starts_with(m) || m.starts_with(mnemonic)
            };
            // An `s_nop` the source does not have is the assembler's
            // padding of an alignment (`.p2align` before a loop or block,
            // as Triton and hipcc emit): it has no line.
            while decoded
                .peek()
                .is_some_and(|i| i.mnemonic == "s_nop" && !agrees(&i.mnemonic))
            {
                decoded.next();
            }
            let Some(ins) = decoded.next() else { break };
            if !agrees(&ins.mnemonic) {
                break;
            }
            self.lines.insert(ins.addr, format!("{file}:{no}: {t}"));
            n += 1;
        }
        n
    }

    /// [`Program::parse_listing`] for `processor`: registers in its
    /// generation's numbering ([`Numbering::of`]: on gfx11 and gfx12 `m0` is
    /// SGPR 125 and `null` SGPR 124, which reads 0 and drops writes).
    pub fn parse_listing_for(listing: &str, kernel: &Kernel, processor: &str) -> Result<Self> {
        let mut p = Self::parse_listing(listing, kernel)?;
        p.renumber(Numbering::of(processor));
        if processor == "gfx1250" {
            p.join_undecoded_gfx1250();
            msb::resolve(&mut p, kernel.entry);
        }
        Ok(p)
    }

    /// gfx1250 words llvm-objdump-22 prints as `.long`, joined with the
    /// words of the same instruction it then decodes as others. A word
    /// whose encoding class is VOP3P (bits 31:24 `0xcc`, two dwords here)
    /// or VIMAGE (bits 31:26 `0b110100`, three dwords) starts an
    /// instruction LLVM 22 does not decode; its next words are that
    /// instruction's, not the `v_cmp_ge_u16_e32`, `v_illegal` or
    /// `v_min_num_f64_e32` the listing shows for them. The joined `.long`
    /// keeps every dword, and its text names the opcode field and what
    /// llvm-mc-22 encodes with that opcode ([`GFX1250_UNDECODED`]), so a
    /// dispatch reaching it is refused with the words and the address. A
    /// decoded line that runs past the instruction's end (it would have
    /// swallowed the next instruction's first word) is left as it is. The
    /// WMMA words among them are then decoded from their fields and the
    /// scale pairs joined ([`crate::gfx1250_wmma`]).
    fn join_undecoded_gfx1250(&mut self) {
        // Each line's address → its length in dwords.
        let words: HashMap<u64, u64> = self
            .instructions
            .iter()
            .map(|i| (i.addr, i.words.len().max(1) as u64))
            .collect();
        let mut out: Vec<Instruction> = Vec::with_capacity(self.instructions.len());
        let mut join_until = 0u64;
        for ins in std::mem::take(&mut self.instructions) {
            if ins.addr < join_until {
                let last = out.last_mut().expect("a joined .long precedes");
                last.words.extend(&ins.words);
                last.text = format!("{}; its next dword printed as `{}`", last.text, ins.text);
                continue;
            }
            let w0 = ins.words.first().copied().unwrap_or(0);
            let len = match () {
                _ if ins.mnemonic != ".long" => 1,
                _ if w0 >> 24 == 0xcc => 2,
                _ if w0 >> 26 == 0b11_0100 => 3,
                _ => 1,
            };
            if len == 1 {
                out.push(ins);
                continue;
            }
            // Join only if the lines after it end where it ends.
            let end = ins.addr + 4 * len;
            let mut a = ins.addr + 4;
            while a < end {
                match words.get(&a) {
                    Some(n) => a += 4 * n,
                    None => break,
                }
            }
            if a == end {
                join_until = end;
            }
            let mut j = ins;
            j.text = format!("{} ({})", j.text, gfx1250_undecoded_name(w0));
            out.push(j);
        }
        // The tensor DMA words: decoded by gcn-emu ([`crate::tensor`]).
        for ins in &mut out {
            if let Some(t) = tensor_instruction(ins) {
                *ins = t;
            }
        }
        // The WMMA words among them decoded from their fields, and the
        // scale pairs joined (crate::gfx1250_wmma).
        for i in out.iter_mut().filter(|i| i.mnemonic == ".long") {
            match crate::gfx1250_wmma::decode(i.addr, &i.words) {
                Some(Ok(d)) => *i = d,
                Some(Err(e)) => i.text = format!("{}; {e}", i.text),
                None => {}
            }
        }
        self.instructions = crate::gfx1250_wmma::pair(out);
        self.index = self
            .instructions
            .iter()
            .enumerate()
            .map(|(i, ins)| (ins.addr, i))
            .collect();
    }

    /// gfx1250's VGPR MSBs: whether each instruction's VGPR operands are
    /// the registers the wave names under the `s_set_vgpr_msb` state
    /// control flow gives it, which [`Program::parse_listing_for`] resolved
    /// (see [`msb`]). An error names the instruction and why not: an
    /// indirect jump in a kernel that sets the MSBs, a branch out of the
    /// kernel, two MSB states that differ in a slot an instruction uses
    /// meeting before it (with both predecessors), a format with no slot
    /// table whose listing disagrees with control flow. Each dispatch of a
    /// gfx1250 kernel checks it before anything runs; `s_set_vgpr_msb`
    /// then runs as a no-op.
    pub fn check_vgpr_msb(&self, kernel: &Kernel) -> Result<()> {
        msb::check(self, kernel)
    }

    /// Move `m0` (and `null`, which gfx9 has not: a `Text` operand) to
    /// `numbering`'s places; the listing was parsed in gfx9's.
    fn renumber(&mut self, numbering: Numbering) {
        if numbering == Numbering::GFX9 {
            return;
        }
        for ins in &mut self.instructions {
            for src in &mut ins.ops {
                match &mut src.op {
                    Operand::Reg {
                        file: RegFile::S,
                        index,
                        count: 1,
                    } if *index == M0 => *index = numbering.m0,
                    Operand::Text(t) if t == "null" => {
                        if let Some(null) = numbering.null {
                            src.op = Operand::Reg {
                                file: RegFile::S,
                                index: null,
                                count: 1,
                            };
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Disassemble `kernel` of `co` with `objdump` and decode it, within
    /// [`DISASSEMBLE_TIMEOUT`].
    pub fn disassemble(co: &CodeObject, kernel: &Kernel, objdump: &Path) -> Result<Self> {
        Self::disassemble_within(co, kernel, objdump, DISASSEMBLE_TIMEOUT)
    }

    /// [`Program::disassemble`] with a time limit: `objdump` still running
    /// after `limit` is killed and the error says so.
    pub fn disassemble_within(
        co: &CodeObject,
        kernel: &Kernel,
        objdump: &Path,
        limit: std::time::Duration,
    ) -> Result<Self> {
        let dir = std::env::temp_dir().join(format!(
            "gcn-emu-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            action: "write",
            path: dir.clone(),
            source,
        })?;
        let file = dir.join("code.o");
        let written = std::fs::write(&file, &co.bytes);
        let out = written
            .map_err(|source| Error::Io {
                action: "write",
                path: file.clone(),
                source,
            })
            .and_then(|()| {
                run_bounded(
                    objdump,
                    &file,
                    &objdump_mattr(&co.processor, kernel),
                    limit,
                    &co.path,
                )
            });
        let _ = std::fs::remove_dir_all(&dir);
        let (status, stdout, stderr) = out?;
        if !status.success() {
            return Err(Error::Decode {
                what: format!(
                    "{} failed on {}: {}",
                    objdump.display(),
                    co.path,
                    String::from_utf8_lossy(&stderr).trim()
                ),
            });
        }
        let text = String::from_utf8_lossy(&stdout);
        Self::parse_listing_for(&text, kernel, &co.processor)
    }

    /// Decode the part of an `llvm-objdump -d` listing that is `kernel`'s code.
    pub fn parse_listing(listing: &str, kernel: &Kernel) -> Result<Self> {
        let mut instructions = Vec::new();
        for (n, line) in listing.lines().enumerate() {
            if !line.starts_with('\t') {
                continue;
            }
            let Some(ins) = parse_line(line).map_err(|what| Error::Decode {
                what: format!(
                    "llvm-objdump output line {}: {what}: `{}`",
                    n + 1,
                    line.trim()
                ),
            })?
            else {
                continue;
            };
            if ins.addr >= kernel.entry && ins.addr < kernel.code_end {
                instructions.push(ins);
            }
        }
        if instructions.is_empty() {
            return Err(Error::Decode {
                what: format!(
                    "kernel `{}`: llvm-objdump printed no instruction at its entry {:#x}",
                    kernel.name, kernel.entry
                ),
            });
        }
        let index = instructions
            .iter()
            .enumerate()
            .map(|(i, ins)| (ins.addr, i))
            .collect();
        Ok(Program {
            kernel: kernel.name.clone(),
            instructions,
            index,
            lines: HashMap::new(),
        })
    }
}

/// gfx1250 opcodes whose words llvm-objdump-22 prints as `.long` in
/// aiter's kernels, with the instruction llvm-mc-22 encodes with that
/// opcode (`llvm-mc-22 -mcpu=gfx1250 -show-encoding`; checked by a test):
/// the encoding class (`"vop3p"`: bits 23:16 of word 0; `"vimage"`: bits
/// 21:14), the opcode, the name. LLVM 22 rejects aiter's words for other
/// fields: `op_sel_hi` bit 14 clear (`v_wmma_f32_32x16x128_f4`), an
/// unused `src2` of 0 (`v_wmma_ld_scale*`, the first half of a
/// `v_wmma_scale_*` pair), word 0 bits 22 and 0 clear and word 1
/// `0x00200000`/`0x00500000` (`tensor_load_to_lds`). The VOP3P ones are
/// decoded by [`crate::gfx1250_wmma`] (the ld_scale's `src2` is a dummy;
/// what the f4 WMMA's bit 14 does is not known here); the tensor ones are
/// the legacy gfx1250 form of the same instruction, which [`crate::tensor`]
/// decodes.
pub const GFX1250_UNDECODED: &[(&str, u32, &str)] = &[
    ("vop3p", 0x35, "v_wmma_ld_scale_paired_b32"),
    ("vop3p", 0x3a, "v_wmma_ld_scale16_paired_b64"),
    ("vop3p", 0x88, "v_wmma_f32_32x16x128_f4"),
    ("vimage", 0xc4, "tensor_load_to_lds"),
    ("vimage", 0xc5, "tensor_store_from_lds"),
];

/// A joined gfx1250 `.long` of three words that is a tensor DMA
/// instruction ([`crate::tensor::decode_words`]), as the instruction LLVM
/// would print for its canonical form: `tensor_load_to_lds` or
/// `tensor_store_from_lds` with its SGPR groups (`s[32:35], s[36:43]`, and
/// groups 2 and 3 when present), `th`/`scope` as modifiers when not 0. The
/// text keeps the words and says the decoding is gcn-emu's. `None` for any
/// other `.long` (which stays refused).
fn tensor_instruction(ins: &Instruction) -> Option<Instruction> {
    if ins.mnemonic != ".long" {
        return None;
    }
    let w = crate::tensor::decode_words(&ins.words).ok()?;
    let name = if w.load {
        "tensor_load_to_lds"
    } else {
        "tensor_store_from_lds"
    };
    let ops: Vec<Src> = w
        .groups
        .iter()
        .zip(crate::tensor::GROUP_SGPRS)
        .map(|(&index, count)| Src {
            op: Operand::Reg {
                file: RegFile::S,
                index,
                count,
            },
            neg: false,
            abs: false,
            sext: false,
        })
        .collect();
    let regs: Vec<String> = w
        .groups
        .iter()
        .zip(crate::tensor::GROUP_SGPRS)
        .map(|(&i, n)| match i {
            crate::tensor::NULL_SGPR => "null".to_string(),
            _ => format!("s[{i}:{}]", i + n - 1),
        })
        .collect();
    let mut mods = Vec::new();
    if w.th != 0 {
        mods.push(("th".to_string(), w.th.to_string()));
    }
    if w.scope != 0 {
        mods.push(("scope".to_string(), w.scope.to_string()));
    }
    let words: Vec<String> = ins.words.iter().map(|x| format!("{x:#010x}")).collect();
    let text = format!(
        "{name} {}{}{} ; words {}, {} form, decoded by gcn-emu (llvm-objdump-22 prints them as .long)",
        regs.join(", "),
        if w.th != 0 { format!(" th:{}", w.th) } else { String::new() },
        if w.scope != 0 { format!(" scope:{}", w.scope) } else { String::new() },
        words.join(" "),
        if w.legacy { "legacy gfx1250" } else { "LLVM 22's" },
    );
    Some(Instruction::new(
        ins.addr,
        name,
        ops,
        mods,
        ins.words.clone(),
        text,
    ))
}

/// What a gfx1250 word LLVM 22 does not decode is, as far as its encoding
/// class and opcode field tell ([`GFX1250_UNDECODED`]).
pub fn gfx1250_undecoded_name(w0: u32) -> String {
    let (class, op) = if w0 >> 24 == 0xcc {
        ("vop3p", (w0 >> 16) & 0xff)
    } else if w0 >> 26 == 0b11_0100 {
        ("vimage", (w0 >> 14) & 0xff)
    } else {
        return "a word llvm-objdump-22 does not decode".into();
    };
    let known = GFX1250_UNDECODED
        .iter()
        .find(|e| e.0 == class && e.1 == op)
        .map_or(String::new(), |e| {
            format!(", the opcode llvm-mc-22 encodes `{}` with", e.2)
        });
    format!(
        "gfx1250 {} opcode {op:#x}{known}; llvm-objdump-22 does not decode this instruction's fields",
        class.to_uppercase()
    )
}

/// SGPRs gfx9 names by number, `s0`–`s101`; hardware numbers 102–127 are
/// `flat_scratch`, `xnack_mask`, `vcc`, `ttmp0`–`ttmp15`, `m0` and `exec`,
/// which LLVM prints (and the assembler takes) only by name.
pub const ADDRESSABLE_SGPRS: u32 = 102;

impl Program {
    /// Check every register operand of the instructions a dispatch of
    /// `kernel` can reach against what its descriptor allocates, before
    /// anything runs (gfx90a, gfx942, gfx950; AMDGPUUsage, "Kernel
    /// Descriptor"):
    ///
    /// * `s0`–`s101` (and ranges) within the descriptor's SGPR allocation
    ///   ([`Descriptor::sgpr_count`](crate::load::Descriptor::sgpr_count),
    ///   which counts VCC, FLAT_SCRATCH and XNACK_MASK too: the check does
    ///   not subtract them, so it refuses only what is past the whole
    ///   allocation); an SGPR written by number past `s101` is refused
    ///   ([`ADDRESSABLE_SGPRS`]); named registers (`vcc`, `exec`, `m0`,
    ///   `flat_scratch`, `xnack_mask`, `ttmp`) are always allowed;
    /// * VGPRs within the unified file's count (`GRANULATED_WORKITEM_VGPR_COUNT`);
    ///   the VGPRs and AGPRs are one file, the AGPRs from `ACCUM_OFFSET` on
    ///   (AMDGPUUsage, `.amdhsa_accum_offset`), so `v[ACCUM_OFFSET + i]` is
    ///   the register `a[i]` is, and the executor keeps them as one
    ///   ([`crate::exec::Wave::v`]): a kernel may name both;
    /// * AGPRs within the count past `ACCUM_OFFSET`.
    ///
    /// Inline constants, literals and other operands are not registers.
    /// The instructions checked are those reachable from the entry by
    /// falling through and by direct branches; a reachable indirect jump
    /// (`s_setpc_b64`, `s_swappc_b64`, ...) makes every instruction from the
    /// entry on count. What a register operand's width is beyond what LLVM
    /// printed (a 64-bit read of a register printed alone), and registers
    /// reached through `s_set_gpr_idx_on` or `v_movrel*`, are left to the
    /// executor, which faults on a register past the allocation.
    ///
    /// The error is an [`Error::Limit`] naming the kernel, the instruction
    /// (address, text, asm line when [`Program::attach_source`] gave one),
    /// the register and the limit.
    pub fn check_registers(&self, kernel: &Kernel) -> Result<()> {
        self.check_registers_for(kernel, Numbering::GFX9)
    }

    /// [`Program::check_registers`] in `numbering`'s generation. On gfx10+
    /// (RDNA) a wave always has every SGPR (GRANULATED_WAVEFRONT_SGPR_COUNT
    /// is 0: LLVM's AMDGPUAsmPrinter, "GFX10+ will always allocate 128
    /// SGPRs"), `s0`-`s105` by number, no AGPRs, and VGPRs in blocks of 8
    /// (wave32) or 4 (wave64): (GRANULATED_WORKITEM_VGPR_COUNT + 1) × block.
    pub fn check_registers_for(&self, kernel: &Kernel, numbering: Numbering) -> Result<()> {
        let d = &kernel.descriptor;
        let addressable = numbering.addressable;
        let rdna = numbering != Numbering::GFX9;
        let (sgprs, vgprs, agprs) = if rdna {
            (addressable, rdna_vgprs_in(kernel, numbering), 0)
        } else {
            (
                d.sgpr_count().min(ADDRESSABLE_SGPRS),
                d.vgpr_count().min(512),
                d.agpr_count().min(256),
            )
        };
        let reachable = self.reachable(kernel);
        let rsrc1 = d.rsrc1;
        for i in reachable {
            let ins = &self.instructions[i];
            let refuse =
                |reg: String, value: u32, limit: u32, field: &str, hint: String| Error::Limit {
                    context: format!(
                        "kernel `{}` at {:#x} `{}`{}",
                        self.kernel,
                        ins.addr,
                        ins.text,
                        self.lines
                            .get(&ins.addr)
                            .map(|l| format!(" ({l})"))
                            .unwrap_or_default()
                    ),
                    field: format!("`{reg}`: {field}"),
                    value: value as u128,
                    limit: limit as u128,
                    hint,
                };
            if let Some((reg, end)) = numbered_sgpr_past(&ins.text, addressable) {
                return Err(refuse(
                    reg,
                    end,
                    addressable,
                    "the SGPRs it spans by number",
                    if rdna {
                        "gfx10+ names s0-s105 by number; hardware numbers 106-127 are vcc, ttmp0-ttmp15, null, m0 and exec, written by name (the assembler refuses s106 and above)".into()
                    } else {
                        "gfx9 names s0-s101 by number; hardware numbers 102-127 are flat_scratch, xnack_mask, vcc, ttmp0-ttmp15, m0 and exec, written by name (the assembler refuses s102 and above)".into()
                    },
                ));
            }
            let halves = std::iter::once(ins).chain(ins.dual.as_deref());
            for src in halves.flat_map(|h| &h.ops) {
                let Operand::Reg { file, index, count } = src.op else {
                    continue;
                };
                let (first, end) = (index as u32, index as u32 + count as u32);
                let name = |p: &str| {
                    if count == 1 {
                        format!("{p}{first}")
                    } else {
                        format!("{p}[{first}:{}]", end - 1)
                    }
                };
                match file {
                    // Named registers (vcc, exec, m0, ttmp, ...) are past
                    // s101 and outside the allocation's numbering.
                    RegFile::S if first >= addressable => {}
                    RegFile::S if end > sgprs => {
                        return Err(refuse(
                            name("s"),
                            end,
                            sgprs,
                            "the SGPRs it needs (from s0)",
                            format!(
                                "the descriptor allocates {sgprs} SGPRs (COMPUTE_PGM_RSRC1.GRANULATED_WAVEFRONT_SGPR_COUNT = {}, from .amdhsa_next_free_sgpr; the count includes vcc, flat_scratch and xnack_mask); raise .amdhsa_next_free_sgpr or use registers below s{sgprs}",
                                (rsrc1 >> 6) & 0xf
                            ),
                        ));
                    }
                    RegFile::V if end > vgprs => {
                        return Err(refuse(
                            name("v"),
                            end,
                            vgprs,
                            "the VGPRs it needs (from v0)",
                            format!(
                                "the descriptor allocates {vgprs} VGPRs, architected and accumulation together (COMPUTE_PGM_RSRC1.GRANULATED_WORKITEM_VGPR_COUNT = {}, from .amdhsa_next_free_vgpr); raise .amdhsa_next_free_vgpr or use registers below v{vgprs}",
                                rsrc1 & 0x3f
                            ),
                        ));
                    }
                    RegFile::A if end > agprs => {
                        return Err(refuse(
                            name("a"),
                            end,
                            agprs,
                            "the AGPRs it needs (from a0)",
                            format!(
                                "the descriptor allocates {agprs} AGPRs: the {} registers of the unified file past .amdhsa_accum_offset {}; raise .amdhsa_next_free_vgpr (or lower .amdhsa_accum_offset) or use registers below a{agprs}",
                                d.vgpr_count(),
                                d.accum_offset()
                            ),
                        ));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Indices of the instructions a dispatch of `kernel` can reach: from
    /// its entry (and the entry past the 256-byte prologue that firmware
    /// preloading kernel arguments skips), by falling through and by
    /// direct branches. A reachable indirect jump makes every instruction
    /// from the entry on reachable.
    fn reachable(&self, kernel: &Kernel) -> Vec<usize> {
        let n = self.instructions.len();
        let mut seen = vec![false; n];
        let mut work: Vec<usize> = [kernel.entry, kernel.entry.wrapping_add(256)]
            .iter()
            .filter_map(|a| self.index.get(a).copied())
            .collect();
        if kernel.descriptor.kernarg_preload_length() == 0 {
            work.truncate(1);
        }
        while let Some(i) = work.pop() {
            if i >= n || std::mem::replace(&mut seen[i], true) {
                continue;
            }
            let ins = &self.instructions[i];
            let m = ins.mnemonic.as_str();
            let target = || {
                let simm = ins.words.first().map_or(0, |&w| w as u16 as i16 as i64);
                let to = (ins.addr as i64).wrapping_add(4).wrapping_add(simm * 4) as u64;
                self.index.get(&to).copied()
            };
            match m {
                "s_setpc_b64" | "s_swappc_b64" | "s_cbranch_join" | "s_rfe_b64" => {
                    let first = self.index.get(&kernel.entry).copied().unwrap_or(0);
                    return (first..n).collect();
                }
                "s_branch" => work.extend(target()),
                _ if m.starts_with("s_endpgm") => {}
                _ if m.starts_with("s_cbranch_") || m == "s_call_b64" => {
                    work.extend(target());
                    work.push(i + 1);
                }
                _ => work.push(i + 1),
            }
        }
        (0..n).filter(|&i| seen[i]).collect()
    }
}

/// VGPRs a gfx10+ kernel may use: (GRANULATED_WORKITEM_VGPR_COUNT + 1) ×
/// 8 in wave32, × 4 in wave64 (AMDGPUUsage, "compute_pgm_rsrc1 GFX6-GFX12":
/// the encoding granule of GFX10-GFX11), at most 256.
pub fn rdna_vgprs(kernel: &Kernel) -> u32 {
    rdna_vgprs_in(kernel, Numbering::GFX11)
}

/// [`rdna_vgprs`] in `numbering`'s generation: blocks of
/// [`Numbering::vgpr_block`] (wave32; half in wave64), at most 256, or
/// 1024 on gfx1250.
pub fn rdna_vgprs_in(kernel: &Kernel, numbering: Numbering) -> u32 {
    let d = &kernel.descriptor;
    let block = if d.wave32() {
        numbering.vgpr_block
    } else {
        numbering.vgpr_block / 2
    };
    let max = if numbering.vgpr_block == 16 {
        1024
    } else {
        256
    };
    (((d.rsrc1 & 0x3f) + 1) * block).min(max)
}

/// The first SGPR of `text`'s operands written by number past `s101`
/// (`s126`, `s[126:127]`), as written, with its end (last number + 1).
/// llvm-objdump never prints one for gfx9; a hand-edited listing may.
fn numbered_sgpr_past(text: &str, addressable: u32) -> Option<(String, u32)> {
    let ops = text.split_once(char::is_whitespace)?.1;
    let b = ops.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c != b's' || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) {
            continue;
        }
        let rest = &ops[i + 1..];
        let digits = |t: &str| -> Option<(u32, usize)> {
            let n = t.bytes().take_while(u8::is_ascii_digit).count();
            Some((t[..n].parse().ok()?, n))
        };
        let (first, last, len) = if let Some(r) = rest.strip_prefix('[') {
            let Some((a, n)) = digits(r) else { continue };
            let Some(r2) = r[n..].strip_prefix(':') else {
                continue;
            };
            let Some((z, m)) = digits(r2) else { continue };
            if !r2[m..].starts_with(']') {
                continue;
            }
            (a, z, 1 + n + 1 + m + 1)
        } else {
            let Some((a, n)) = digits(rest) else { continue };
            // `s12abc` is no register.
            if rest[n..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            (a, a, n)
        };
        if first.max(last) >= addressable {
            return Some((
                ops[i..i + 1 + len].to_string(),
                first.max(last).saturating_add(1),
            ));
        }
    }
    None
}

/// Parse one instruction line: `\tMNEMONIC OPERANDS   // ADDR: W0 W1`.
/// `Ok(None)` for a line that is not an instruction (read by
/// [`gcn_raw::listing::instruction`]: its comment must be all hex words).
pub fn parse_line(line: &str) -> std::result::Result<Option<Instruction>, String> {
    // The line's text, address and words: gcn-raw's listing reader, which
    // gcn-patch's lift reads listings with too.
    let Some(raw) = gcn_raw::listing::instruction(line) else {
        return Ok(None);
    };
    let (body, addr, words) = (raw.text, raw.address, raw.words());
    if body.is_empty() || words.is_empty() {
        return Ok(None);
    }
    // VOPD: `X :: Y`, two operations issued as one instruction.
    if let Some((x, y)) = body.split_once(" :: ") {
        let mut first = parse_body(x.trim(), addr, words.clone())?;
        let second = parse_body(y.trim(), addr, words)?;
        if !first.mnemonic.starts_with("v_dual_") || !second.mnemonic.starts_with("v_dual_") {
            return Err(format!(
                "`::` joins only the two halves of a VOPD pair (v_dual_*), not `{}` and `{}`",
                first.mnemonic, second.mnemonic
            ));
        }
        first.text = body.to_string();
        first.dual = Some(Box::new(second));
        return Ok(Some(first));
    }
    parse_body(body, addr, words).map(Some)
}

/// One instruction's text (mnemonic, operands, modifiers) at `addr`.
fn parse_body(body: &str, addr: u64, words: Vec<u32>) -> std::result::Result<Instruction, String> {
    let (mnemonic, rest) = match body.split_once(char::is_whitespace) {
        Some((m, r)) => (m, r.trim()),
        None => (body, ""),
    };
    let msb;
    let rest = if rest.contains("/*") {
        msb = vgpr_msb_operands(rest)?;
        msb.as_str()
    } else {
        rest
    };
    let mut parts = split_top(rest, ',');
    let mut mods = Vec::new();
    if let Some(last) = parts.pop() {
        let toks = split_top(&last, ' ');
        let mut toks = toks.into_iter().filter(|t| !t.is_empty());
        // s_waitcnt vmcnt(0) lgkmcnt(0): all of it is one operand.
        if mnemonic == "s_waitcnt" {
            parts.push(last.clone());
        } else {
            if let Some(first) = toks.next() {
                if is_modifier(&first) {
                    push_mod(&mut mods, &first);
                } else {
                    parts.push(first);
                }
            }
            for t in toks {
                push_mod(&mut mods, &t);
            }
        }
    }
    // true16: a 16-bit VGPR half (`v9.l`, `v9.h`) is its register, with
    // the halves of all operands recorded in the `t16` modifier.
    let mut halves = String::new();
    let ops = if mnemonic == "s_waitcnt" {
        Vec::new()
    } else {
        parts
            .iter()
            .map(|p| {
                let p = p.trim();
                let (p, half) = match split_half(p) {
                    Some((r, h)) => (r, h),
                    None => (p.to_string(), '-'),
                };
                halves.push(half);
                parse_src(&p)
            })
            .collect::<std::result::Result<Vec<_>, _>>()?
    };
    if halves.contains(['l', 'h']) {
        mods.push(("t16".into(), halves));
    }
    Ok(Instruction::new(
        addr,
        mnemonic,
        ops,
        mods,
        words,
        body.to_string(),
    ))
}

/// gfx1250's operands printed with their VGPR MSBs (`v252 /*v1020*/`,
/// `-|v[20:21]| /*v[276:277]*/`): each register replaced by the one in its
/// comment (the register the operand names under the listing's
/// `s_set_vgpr_msb`; [`msb::resolve`] re-maps it where control flow gives
/// other MSBs). Any other comment is an error.
fn vgpr_msb_operands(rest: &str) -> std::result::Result<String, String> {
    let mut out = String::new();
    let mut s = rest;
    while let Some(start) = s.find("/*") {
        let Some(len) = s[start..].find("*/") else {
            return Err(format!("an unclosed comment in `{rest}`"));
        };
        let real = s[start + 2..start + len].trim();
        let pre = s[..start].trim_end();
        // The register before the comment, past any `|` or `)` closing it.
        let end = pre.trim_end_matches(['|', ')']).len();
        let begin = pre[..end]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "[:].".contains(c)))
            .map_or(0, |i| i + 1);
        let reg = &pre[begin..end];
        let vgpr = |r: &str| {
            r.starts_with('v') && r[1..].starts_with(|c: char| c.is_ascii_digit() || c == '[')
        };
        if !vgpr(reg) || !vgpr(real) {
            // Another comment (LLVM's `/*Invalid register, ...*/`): the
            // line is left as printed, so the operand is text the executor
            // refuses.
            return Ok(rest.to_string());
        }
        out.push_str(&pre[..begin]);
        out.push_str(real);
        out.push_str(&pre[end..]);
        s = &s[start + len + 2..];
    }
    out.push_str(s);
    Ok(out)
}

/// `v9.l` → (`v9`, 'l'), `-|v9.h|` → (`-|v9|`, 'h'): a VGPR half as LLVM
/// prints it with `+real-true16` (modifiers around it kept).
fn split_half(p: &str) -> Option<(String, char)> {
    for (suffix, half) in [(".l", 'l'), (".h", 'h')] {
        let Some(at) = p.find(suffix) else { continue };
        let (before, after) = (&p[..at], &p[at + 2..]);
        // The register's digits end just before, and nothing alphanumeric follows.
        let reg = before
            .trim_start_matches(['-', '|', '('])
            .trim_start_matches("neg(")
            .trim_start_matches("abs(");
        let is_vgpr = reg
            .strip_prefix('v')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if is_vgpr && !after.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return Some((format!("{before}{after}"), half));
        }
    }
    None
}

fn is_modifier(t: &str) -> bool {
    // A register range with input modifiers (`-v[20:21]`, `|v[2:3]|`,
    // `-|s[4:5]|`, `neg(v[0:1])`) is an operand, not a `key:value` modifier.
    let mut r = t;
    loop {
        let next = r
            .strip_prefix('-')
            .or_else(|| r.strip_prefix('|'))
            .or_else(|| r.strip_prefix("neg("))
            .or_else(|| r.strip_prefix("abs("))
            .or_else(|| r.strip_prefix("sext("));
        match next {
            Some(n) => r = n,
            None => break,
        }
    }
    let register = ["s[", "v[", "a[", "ttmp["].iter().any(|p| r.starts_with(p));
    t.contains(':') && !register
        || matches!(
            t,
            "glc"
                | "slc"
                | "dlc"
                | "nt"
                | "sc0"
                | "sc1"
                | "offen"
                | "idxen"
                | "lds"
                | "clamp"
                | "gds"
                | "tfe"
                | "lwe"
        )
}

fn push_mod(mods: &mut Vec<(String, String)>, t: &str) {
    match t.split_once(':') {
        Some((k, v)) => mods.push((k.to_string(), v.to_string())),
        None => mods.push((t.to_string(), String::new())),
    }
}

/// Split at `sep` outside brackets and parentheses.
fn split_top(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            _ => {}
        }
        if c == sep && depth == 0 {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur);
    }
    out.into_iter().map(|p| p.trim().to_string()).collect()
}

fn parse_src(p: &str) -> std::result::Result<Src, String> {
    let mut s = p;
    let (mut neg, mut abs, mut sext) = (false, false, false);
    loop {
        if let Some(r) = s.strip_prefix("neg(").and_then(|r| r.strip_suffix(')')) {
            neg = true;
            s = r;
        } else if let Some(r) = s.strip_prefix("abs(").and_then(|r| r.strip_suffix(')')) {
            abs = true;
            s = r;
        } else if let Some(r) = s.strip_prefix("sext(").and_then(|r| r.strip_suffix(')')) {
            sext = true;
            s = r;
        } else if let Some(r) = s.strip_prefix('|').and_then(|r| r.strip_suffix('|')) {
            abs = true;
            s = r;
        } else if s.len() > 1
            && s.starts_with('-')
            && !s[1..].starts_with(|c: char| c.is_ascii_digit())
        {
            neg = true;
            s = &s[1..];
        } else {
            break;
        }
    }
    Ok(Src {
        op: parse_operand(s)?,
        neg,
        abs,
        sext,
    })
}

fn parse_operand(s: &str) -> std::result::Result<Operand, String> {
    let reg = |file, index: u16, count: u16| Operand::Reg { file, index, count };
    let special = match s {
        "vcc" => Some(reg(RegFile::S, VCC, 2)),
        "vcc_lo" => Some(reg(RegFile::S, VCC, 1)),
        "vcc_hi" => Some(reg(RegFile::S, VCC + 1, 1)),
        "exec" => Some(reg(RegFile::S, EXEC, 2)),
        "exec_lo" => Some(reg(RegFile::S, EXEC, 1)),
        "exec_hi" => Some(reg(RegFile::S, EXEC + 1, 1)),
        "m0" => Some(reg(RegFile::S, M0, 1)),
        "flat_scratch" => Some(reg(RegFile::S, 102, 2)),
        "flat_scratch_lo" => Some(reg(RegFile::S, 102, 1)),
        "flat_scratch_hi" => Some(reg(RegFile::S, 103, 1)),
        "xnack_mask" => Some(reg(RegFile::S, 104, 2)),
        "scc" | "src_scc" => Some(Operand::Scc),
        "off" => Some(Operand::Off),
        "src_shared_base"
        | "src_shared_limit"
        | "src_private_base"
        | "src_private_limit"
        | "src_pops_exiting_wave_id"
        | "src_execz"
        | "src_vccz"
        | "src_lds_direct" => Some(Operand::Aperture(s.to_string())),
        _ => None,
    };
    if let Some(op) = special {
        return Ok(op);
    }
    for (prefix, file) in [
        ("s", RegFile::S),
        ("v", RegFile::V),
        ("a", RegFile::A),
        ("ttmp", RegFile::S),
    ] {
        if let Some(r) = s.strip_prefix(prefix) {
            let base = if prefix == "ttmp" { 108 } else { 0 };
            // Registers past the file are refused here, so that the
            // executor never indexes past it: s0-s127 in hardware numbering
            // (ttmp0-15 are 108-123), v0-v1023 (gfx1250's file; the load-time
            // check holds each kernel to its allocation), a0-a255.
            let size: u32 = match (file, prefix) {
                (RegFile::S, "ttmp") => 124,
                (RegFile::S, _) => 128,
                (RegFile::V, _) => 1024,
                (RegFile::A, _) => 256,
            };
            let checked = |a: u32, b: u32| -> std::result::Result<Operand, String> {
                if b < a {
                    return Err(format!("bad register range {s}"));
                }
                if base + b >= size {
                    return Err(format!(
                        "register {s} is beyond the register file ({} registers{})",
                        size - base,
                        if prefix == "ttmp" {
                            ""
                        } else {
                            " in hardware numbering"
                        }
                    ));
                }
                Ok(reg(file, (base + a) as u16, (b - a + 1) as u16))
            };
            if let Ok(i) = r.parse::<u32>() {
                return checked(i, i);
            }
            if let Some(range) = r.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                if let Some((a, b)) = range.split_once(':') {
                    let (a, b) = (
                        a.trim().parse::<u32>().map_err(|e| e.to_string())?,
                        b.trim().parse::<u32>().map_err(|e| e.to_string())?,
                    );
                    return checked(a, b);
                }
            }
        }
    }
    if let Some(h) = s.strip_prefix("0x") {
        return u64::from_str_radix(h, 16)
            .map(|v| Operand::Int(v as i64))
            .map_err(|e| format!("bad literal {s}: {e}"));
    }
    if let Some(h) = s.strip_prefix("-0x") {
        return u64::from_str_radix(h, 16)
            .map(|v| Operand::Int(-(v as i64)))
            .map_err(|e| format!("bad literal {s}: {e}"));
    }
    if let Ok(v) = s.parse::<i64>() {
        return Ok(Operand::Int(v));
    }
    if s.contains('.') {
        if let Ok(v) = s.parse::<f64>() {
            return Ok(Operand::Float(v));
        }
    }
    Ok(Operand::Text(s.to_string()))
}

/// The `--mattr` features `llvm-objdump` needs to print `kernel` of a
/// `processor` object as the hardware runs it (empty: none).
///
/// * gfx11 and gfx12 (RDNA3, RDNA4, gfx1250, their generic targets):
///   `+real-true16`. Their 16-bit VALU encodings address VGPR halves;
///   with this feature LLVM prints them as `v9.l`/`v9.h` (without it,
///   llvm-objdump-22 prints gfx12's as `.long`).
/// * A wave64 kernel on gfx10+: `+wavefrontsize64` (the disassembler
///   assumes wave32 there and would print a 64-bit lane mask as one SGPR:
///   `vcc_lo` for `vcc`, `s0` for `s[0:1]`).
pub fn objdump_mattr(processor: &str, kernel: &Kernel) -> Vec<&'static str> {
    let mut out = Vec::new();
    if ["gfx11", "gfx12"].iter().any(|p| processor.starts_with(p)) {
        out.push("+real-true16");
    }
    if processor.starts_with("gfx1") && !kernel.descriptor.wave32() && kernel.wavefront_size == 64 {
        out.push("+wavefrontsize64");
    }
    out
}

/// [`objdump_mattr`] as one `llvm-objdump` argument (`--mattr=+a,+b`), or
/// `None` when there is none.
pub fn objdump_mattr_flag(processor: &str, kernel: &Kernel) -> Option<String> {
    let m = objdump_mattr(processor, kernel);
    (!m.is_empty()).then(|| format!("--mattr={}", m.join(",")))
}

/// How long [`Program::disassemble`] lets `llvm-objdump` run.
pub const DISASSEMBLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Run `objdump -d --symbolize-operands [--mattr=...] FILE` through gcn-raw's bounded
/// runner (the one gcn-patch runs every tool with): killed, with every
/// process it started, after `limit`; its status, stdout and stderr.
fn run_bounded(
    objdump: &Path,
    file: &Path,
    mattr: &[&str],
    limit: std::time::Duration,
    shown: &str,
) -> Result<(std::process::ExitStatus, Vec<u8>, Vec<u8>)> {
    use gcn_raw::process::{run_tool, tool_command, ToolFailure, ToolRun};
    let mut cmd = tool_command(objdump);
    cmd.arg("-d").arg("--symbolize-operands");
    if !mattr.is_empty() {
        cmd.arg(format!("--mattr={}", mattr.join(",")));
    }
    cmd.arg(file);
    let job = format!("on {shown}");
    let run = ToolRun {
        tool: "llvm-objdump",
        job: &job,
        timeout: limit,
    };
    let out = run_tool(&mut cmd, &run).map_err(|e| Error::Decode {
        what: match e.failure {
            ToolFailure::Spawn(e) => format!(
                "cannot run {}: {e}; install llvm-objdump (`apt-get install -y llvm-22`) or set GCN_PATCH_LLVM_BIN",
                objdump.display()
            ),
            ToolFailure::TimedOut(_) => format!(
                "{} did not finish within {} s on {shown}; it was killed with every process it started (a malformed object, or a machine too busy: retry)",
                objdump.display(),
                limit.as_secs_f64()
            ),
            ToolFailure::Io(e) => format!("waiting for {}: {e}", objdump.display()),
        },
    })?;
    Ok((out.status, out.stdout, out.stderr))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gfx11's `m0` is SGPR 125 and `null` 124 (llvm-mc-22's encodings of
    /// `s_mov_b32 m0, s0` and `s_mov_b32 null, s0` for gfx1100); gfx9's
    /// numbering is left as parsed.
    /// gfx1250's VGPR MSB comments: the operand is the commented register
    /// (single, range, true16 half, under a modifier); another comment
    /// leaves the line as printed.
    #[test]
    fn gfx1250_vgpr_msb_comments_name_the_register() {
        let v = |index, count| Operand::Reg {
            file: RegFile::V,
            index,
            count,
        };
        let i = parse_line("\tv_mov_b32_e32 v72 /*v328*/, v72 // 000000001E2C: 7F6002FF")
            .unwrap()
            .unwrap();
        assert_eq!(
            (i.ops[0].op.clone(), i.ops[1].op.clone()),
            (v(328, 1), v(72, 1))
        );
        let i = parse_line("\tv_pk_fma_f32 v[20:21] /*v[276:277]*/, v[20:21] /*v[276:277]*/, s[102:103], -|v[250:251]| /*v[506:507]*/ neg_lo:[0,0,1] // 000000001600: CC1F0014 1C01CD14").unwrap().unwrap();
        assert_eq!(i.ops.len(), 4);
        assert_eq!(i.ops[0].op, v(276, 2));
        assert_eq!(i.ops[3].op, v(506, 2));
        assert!(i.ops[3].neg && i.ops[3].abs);
        assert_eq!(i.modifier("neg_lo"), Some("[0,0,1]"));
        let i = parse_line("\tv_cvt_pk_fp8_f32 v0.l /*v256.l*/, v0 /*v256*/, v1 /*v257*/ // 000000003A2C: D7690000 00020300").unwrap().unwrap();
        assert_eq!(i.ops[0].op, v(256, 1));
        assert_eq!(i.modifier("t16"), Some("l--"));
        let i = parse_line("\tv_min_num_f64_e32 v[1:2]/*Invalid register, operand has 'VReg_64_Align2' register class*/, v[8:9], v[8:9] // 000000004398: 1A021108").unwrap().unwrap();
        assert!(matches!(i.ops[0].op, Operand::Text(_)), "{:?}", i.ops);
    }

    #[test]
    fn gfx11_listings_are_renumbered() {
        let lines = [
            "\ts_mov_b32 m0, s0 // 000000001600: BEFD0000",
            "\ts_load_b128 s[0:3], s[0:1], null // 000000001604: F4080000 F8000000",
        ];
        let program = || Program {
            kernel: "k".into(),
            instructions: lines
                .iter()
                .map(|l| parse_line(l).unwrap().unwrap())
                .collect(),
            index: HashMap::new(),
            lines: HashMap::new(),
        };
        let reg = |i: u16| Operand::Reg {
            file: RegFile::S,
            index: i,
            count: 1,
        };
        let mut p = program();
        p.renumber(Numbering::of("gfx1100"));
        assert_eq!(p.instructions[0].ops[0].op, reg(M0_GFX11));
        assert_eq!(p.instructions[1].ops[2].op, reg(NULL_GFX11));
        let mut p = program();
        p.renumber(Numbering::of("gfx942"));
        assert_eq!(p.instructions[0].ops[0].op, reg(M0));
        assert_eq!(p.instructions[1].ops[2].op, Operand::Text("null".into()));
    }

    #[test]
    fn parses_operands_modifiers_and_words() {
        let i = parse_line("\tds_read2st64_b32 v[2:3], v1 offset1:2                      // 00000000166C: D8700200 02000001").unwrap().unwrap();
        assert_eq!(i.addr, 0x166c);
        assert_eq!(i.mnemonic, "ds_read2st64_b32");
        assert_eq!(i.ops.len(), 2);
        assert_eq!(
            i.ops[0].op,
            Operand::Reg {
                file: RegFile::V,
                index: 2,
                count: 2
            }
        );
        assert_eq!(i.modifier("offset1"), Some("2"));
        assert_eq!(i.words, vec![0xD8700200, 0x02000001]);
        let i = parse_line("\tv_mov_b32_dpp v12, v10 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1// 0000000016A0: 7E1802FA FF01110A").unwrap().unwrap();
        assert_eq!(i.ops.len(), 2);
        assert_eq!(i.modifier("row_shr"), Some("1"));
        let i = parse_line("\tv_fma_f32 v9, -|v26|, v32, 1.0 // 000000001970: D1CB0009 23CA4000")
            .unwrap()
            .unwrap();
        assert!(i.ops[1].neg && i.ops[1].abs);
        assert_eq!(i.ops[3].op, Operand::Float(1.0));
        let i = parse_line(
            "\tglobal_atomic_umax v0, v1, s[6:7] sc1 // 0000000016D4: DF1C8000 00060100",
        )
        .unwrap()
        .unwrap();
        assert_eq!(i.ops.len(), 3);
        assert!(i.has("sc1"));
        let i = parse_line("\ts_cbranch_execz L0 // 00000000161C: BF880014")
            .unwrap()
            .unwrap();
        assert_eq!(i.ops[0].op, Operand::Text("L0".into()));
        let i = parse_line("\tv_pk_fma_f16 v0, v1, v2, v3 op_sel:[0,1,0] op_sel_hi:[1,0,1] // 000000001600: D38E0000 1C0A0501").unwrap().unwrap();
        assert_eq!(i.ops.len(), 4);
        assert_eq!(i.modifier("op_sel_hi"), Some("[1,0,1]"));
        // The comment must be all encoding words (gcn-raw's reader, lift's
        // rule): a stray token refuses the line instead of decoding the
        // words before it, as this decoder's own reader did.
        assert!(
            parse_line("\tv_mov_b32_e32 v0, v1 // 000000001600: 7E000301 zz")
                .unwrap()
                .is_none()
        );
        // A trailing partial word (printed as bytes) is not a dword.
        let i = parse_line("\ts_nop 0 // 000000001600: BF800000 00 00")
            .unwrap()
            .unwrap();
        assert_eq!(i.words, vec![0xBF800000]);
        // A modified register range last is an operand, not a modifier.
        for (t, neg, abs) in [
            ("-v[20:21]", true, false),
            ("|v[20:21]|", false, true),
            ("-|v[20:21]|", true, true),
            ("neg(v[20:21])", true, false),
        ] {
            let i = parse_line(&format!(
                "\tv_add_f64 v[6:7], v[2:3], {t} // 000000001600: D2800006 20022902"
            ))
            .unwrap()
            .unwrap();
            assert_eq!(i.ops.len(), 3, "{t}");
            assert!(i.mods.is_empty(), "{t}");
            assert_eq!((i.ops[2].neg, i.ops[2].abs), (neg, abs), "{t}");
            assert_eq!(
                i.ops[2].op,
                Operand::Reg {
                    file: RegFile::V,
                    index: 20,
                    count: 2
                }
            );
        }
    }
}
