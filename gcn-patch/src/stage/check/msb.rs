//! gfx1250's VGPR numbers as the wave names them: the one place in
//! gcn-patch that resolves them, used by every analysis that reads a
//! gfx1250 VGPR (the wait-counter and LDS hazards, the SCHED_MODE_2 check,
//! register counts).
//!
//! An operand field holds the low 8 bits of the VGPR number; the two high
//! bits are those the `s_set_vgpr_msb` the wave last *executed* gives the
//! operand's slot. llvm-objdump's `/*v1020*/` annotations assume other
//! MSBs (it resets them to 0 after each branch, `s_endpgm` and `.long`
//! word), so the parser's register (the annotated one) is not trusted:
//! [`Flow`] runs `gcn_raw::msb`'s dataflow (the one gcn-emu's
//! `decode::msb` runs over a listing) over a kernel's basic blocks, and
//! re-maps each VGPR operand to its low 8 bits plus the MSBs of its slot
//! ([`remap`]; the slot table is [`gcn_raw::msb::operand_slots`]).

use std::collections::HashMap;

use gcn_raw::msb::{field, flow_graph, operand_slots, sets, Insn, Slots, State, States};

use crate::base::parse::{AsmFile, Instruction, Operand, RegFile, RegisterRef};

#[cfg(test)]
thread_local! {
    /// Tests: take the registers as annotated (the checks before the MSBs
    /// were resolved), to compare verdicts.
    pub(crate) static LISTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A parsed instruction seen by [`gcn_raw::msb`]: only `s_set_vgpr_msb`'s
/// immediate is read.
struct Parsed<'a>(&'a Instruction);

impl Insn for Parsed<'_> {
    fn mnemonic(&self) -> &str {
        &self.0.mnemonic
    }
    fn addr(&self) -> u64 {
        0
    }
    fn first_word(&self) -> Option<u32> {
        self.0.operands.iter().find_map(|o| match o {
            Operand::Integer(v) => Some(*v as u32),
            _ => None,
        })
    }
}

/// The state `i` sets, if it is `s_set_vgpr_msb`.
fn sets_parsed(i: &Instruction) -> Option<State> {
    sets(&Parsed(i))
}

fn reg_mut(o: &mut Operand) -> Option<&mut RegisterRef> {
    match o {
        Operand::Register(r) => Some(r),
        Operand::Neg(o) | Operand::Abs(o) | Operand::Sext(o) => reg_mut(o),
        _ => None,
    }
}

/// The slots of `i`'s (and its VOPD half's) VGPR operands, as a mask of
/// MSB-state bits; `None` for a format with no slot table.
fn used_bits(i: &Instruction) -> Option<State> {
    let mut bits = 0;
    for half in std::iter::once(i).chain(i.dual.as_deref()) {
        let th = half
            .modifier_value("th")
            .is_some_and(|t| t.contains("RETURN"));
        match operand_slots(&half.mnemonic, half.operands.len(), th) {
            Slots::Fields(f) => {
                for (k, o) in half.operands.iter().enumerate() {
                    if let (Some(r), Some(Some(s))) = (o.register(), f.get(k)) {
                        if r.file == RegFile::Vgpr {
                            bits |= 3 << (2 * s);
                        }
                    }
                }
            }
            Slots::Ignored => {}
            Slots::Unknown => return None,
        }
    }
    Some(bits)
}

/// `i` with its VGPR operands re-mapped to `state`: the low 8 bits as
/// written, the high two from the state's field of each one's slot.
pub(crate) fn remap(i: &Instruction, state: State) -> Instruction {
    let mut out = i.clone();
    remap_half(&mut out, state);
    if let Some(d) = out.dual.as_deref_mut() {
        remap_half(d, state);
    }
    out
}

fn remap_half(half: &mut Instruction, state: State) {
    let th = half
        .modifier_value("th")
        .is_some_and(|t| t.contains("RETURN"));
    let Slots::Fields(f) = operand_slots(&half.mnemonic, half.operands.len(), th) else {
        return;
    };
    for (k, o) in half.operands.iter_mut().enumerate() {
        if let (Some(r), Some(Some(s))) = (reg_mut(o), f.get(k)) {
            if r.file == RegFile::Vgpr {
                let first = (r.first & 0xff) | u32::from(field(state, *s)) << 8;
                r.last = first + (r.last - r.first);
                r.first = first;
            }
        }
    }
}

/// `i` under the MSB states `states` that reach it: re-mapped where they
/// agree on the slots its VGPR operands use; `None` where none reaches
/// it, they differ in a slot it uses, or its format has no slot table.
pub(crate) fn resolve(i: &Instruction, states: &States) -> Option<Instruction> {
    Some(remap(i, states.agreed(used_bits(i)?)?))
}

/// The MSB states control flow gives each instruction line of one kernel.
#[derive(Debug, Clone, Default)]
pub(crate) struct Flow {
    /// Instruction line → the states reaching it (empty: not reached).
    at: HashMap<usize, States>,
}

impl Flow {
    /// The flow over a kernel's basic blocks: `blocks[b]` the lines of
    /// block `b` in order (block 0 the entry, MSBs 0 there), `succs[b]` its
    /// successors. `None` when no instruction of the blocks sets the MSBs
    /// (every VGPR is as parsed).
    pub(crate) fn over(asm: &AsmFile, blocks: &[Vec<usize>], succs: &[Vec<usize>]) -> Option<Flow> {
        #[cfg(test)]
        if LISTED.with(|c| c.get()) {
            return None;
        }
        let inst = |l: usize| asm.lines.get(l).and_then(|x| x.instruction());
        if !blocks
            .iter()
            .flatten()
            .any(|&l| inst(l).is_some_and(|i| sets_parsed(i).is_some()))
        {
            return None;
        }
        // A block leaves the state of its last `s_set_vgpr_msb`, or those
        // that reach it.
        let last_set = |b: usize| {
            blocks[b]
                .iter()
                .rev()
                .find_map(|&l| inst(l).and_then(sets_parsed))
        };
        let (entry, _) = flow_graph(blocks.len(), Some(0), last_set, |b, to| {
            to.extend(succs.get(b).into_iter().flatten().copied());
            None
        });
        let mut at = HashMap::new();
        for (b, ls) in blocks.iter().enumerate() {
            let mut cur = entry[b];
            for &l in ls {
                let Some(i) = inst(l) else { continue };
                at.insert(l, cur);
                if let Some(set) = sets_parsed(i) {
                    cur = States::default();
                    cur.insert(set);
                }
            }
        }
        Some(Flow { at })
    }

    /// The instruction at `line` as the wave names its VGPRs, where the
    /// states reaching it agree on the slots it uses and that changes a
    /// register; `None` where it stands as parsed: no VGPR re-mapped, not
    /// reached, states that differ in a slot it uses, or a format with no
    /// slot table (the parser's registers, llvm-objdump's annotations).
    pub(crate) fn resolved(&self, asm: &AsmFile, line: usize) -> Option<Instruction> {
        let i = asm.lines.get(line)?.instruction()?;
        let r = resolve(i, self.at.get(&line)?)?;
        (r != *i).then_some(r)
    }

    /// The instruction at `line` under each MSB state that reaches it (for
    /// a register count, every path's registers): the parsed one alone
    /// where none reaches it or its format has no slot table.
    pub(crate) fn each(&self, asm: &AsmFile, line: usize) -> Vec<Instruction> {
        let Some(i) = asm.lines.get(line).and_then(|x| x.instruction()) else {
            return vec![];
        };
        match (self.at.get(&line), used_bits(i)) {
            (Some(states), Some(bits)) if !states.is_empty() => {
                let mut seen = Vec::new();
                let mut out = Vec::new();
                for s in states.iter() {
                    if !seen.contains(&(s & bits)) {
                        seen.push(s & bits);
                        out.push(remap(i, s));
                    }
                }
                out
            }
            _ => vec![i.clone()],
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeMap;

    /// The wait-counter hazards of lifted gfx1250 asm, (kernel, line,
    /// register, access) → producer line, and the VGPRs each kernel uses.
    pub(crate) fn verdicts(text: &str) -> (BTreeMap<String, usize>, Vec<(String, u32)>) {
        let asm = crate::base::parse::parse(text);
        let target = gcn_embed::TargetId::parse("gfx1250").expect("gfx1250");
        let hazards = crate::stage::check::hazard::hazards(&asm, &target)
            .into_iter()
            .map(|(k, h)| {
                (
                    format!("{k}|{}|{}|{:?}", h.line, h.register, h.access),
                    h.producer,
                )
            })
            .collect();
        let vgprs = crate::stage::check::budget::analyze(&asm, &target)
            .into_iter()
            .map(|b| (b.kernel, b.used.vgpr))
            .collect();
        (hazards, vgprs)
    }

    /// The LLVM 22 toolchain, or a panic saying how to install it.
    pub(crate) fn toolchain() -> crate::stage::toolchain::Toolchain {
        crate::stage::toolchain::Toolchain::find(
            &crate::stage::toolchain::ToolchainConfig::default(),
            &|k| std::env::var(k).ok(),
        )
        .unwrap_or_else(|d| panic!("{d}\ninstall LLVM 22 (clang-22, ld.lld-22, llvm-mc-22, llvm-objdump-22: apt-get install -y llvm-22 clang-22 lld-22)"))
    }

    fn gfx1250() -> gcn_embed::TargetId {
        gcn_embed::TargetId::parse("gfx1250").expect("gfx1250")
    }

    /// The analyses' checks of `text` as annotated (llvm-objdump's
    /// registers, or the written ones), as before the MSB flow.
    pub(crate) fn as_annotated<T>(f: impl FnOnce() -> T) -> T {
        super::LISTED.with(|c| c.set(true));
        let out = f();
        super::LISTED.with(|c| c.set(false));
        out
    }

    /// A hand-written gfx1250 kernel: `s_set_vgpr_msb 0x40` (vdst slot 1)
    /// before a conditional branch governs the target block, which
    /// llvm-objdump-22 lists under MSBs 0 (it resets them at `s_endpgm`):
    /// its `v_mov_b32_e32 v2, 0` writes v258. Assembled with llvm-mc-22 and
    /// linked with ld.lld-22, lifted (the listing's text), and checked:
    /// the wait-counter check no longer sees an overwrite of the pending
    /// load's `v2`, and the register count is v258's, over the 8 VGPRs
    /// the descriptor declares.
    #[test]
    fn msb_set_before_a_branch_governs_the_target_block() {
        let src = "\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx1250\"
\t.text
\t.globl\tk
\t.p2align\t8
\t.type\tk,@function
k:
\ts_load_b64 s[0:1], s[0:1], 0x0
\ts_wait_kmcnt 0x0
\tglobal_load_b32 v2, v0, s[0:1]
\ts_set_vgpr_msb 0x40
\ts_cmp_eq_u32 s2, 0
\ts_cbranch_scc1 .LBB0_2
\ts_wait_loadcnt 0x0
\ts_endpgm
.LBB0_2:
\tv_mov_b32_e32 v2, 0
\ts_wait_loadcnt 0x0
\ts_endpgm
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
\t.rodata
\t.p2align\t6
\t.amdhsa_kernel k
\t\t.amdhsa_next_free_vgpr 8
\t\t.amdhsa_next_free_sgpr 8
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t.end_amdhsa_kernel
";
        let tc = toolchain();
        let dir = tempfile::tempdir().expect("temp dir");
        let (s, o, co) = (
            dir.path().join("k.s"),
            dir.path().join("k.o"),
            dir.path().join("k.co"),
        );
        std::fs::write(&s, src).expect("write");
        let run = |cmd: &mut std::process::Command| {
            let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
            assert!(
                out.status.success(),
                "{cmd:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(std::process::Command::new(tc.llvm_tool("llvm-mc"))
            .args([
                "-triple=amdgcn-amd-amdhsa",
                "-mcpu=gfx1250",
                "-filetype=obj",
                "-o",
            ])
            .arg(&o)
            .arg(&s));
        run(std::process::Command::new(tc.llvm_tool("ld.lld"))
            .arg("-shared")
            .arg(&o)
            .arg("-o")
            .arg(&co));
        let lifted = crate::stage::lift::lift_file(&co, None, &tc, None).expect("lift");
        let asm = crate::base::parse::parse(&lifted.asm);
        let line = |text: &str| {
            asm.lines
                .iter()
                .position(|l| l.text().trim() == text)
                .unwrap_or_else(|| panic!("no `{text}` in\n{}", lifted.asm))
        };
        let (load, mov) = (
            line("global_load_b32 v2, v0, s[0:1]"),
            line("v_mov_b32_e32 v2 /*v258*/, 0"),
        );
        let target = gfx1250();
        let k = &crate::stage::check::hazard::kernels(&asm, &target)[0];
        assert_eq!(
            k.cfg.instruction(&asm, mov).expect("mov").operands[0].to_string(),
            "v258"
        );
        // Wait-counter hazards: none by control flow; as annotated the
        // `v_mov` overwrites the load's pending v2.
        let hazards = |asm: &crate::base::parse::AsmFile| {
            crate::stage::check::hazard::hazards(asm, &target)
                .into_iter()
                .map(|(_, h)| (h.line, h.register, h.producer))
                .collect::<Vec<_>>()
        };
        assert_eq!(hazards(&asm), vec![]);
        // As llvm-objdump lists it (the lift before the MSB flow).
        let listed =
            as_annotated(|| crate::stage::lift::lift_file(&co, None, &tc, None)).expect("lift");
        assert!(
            listed.asm.contains("\tv_mov_b32_e32 v2, 0\n"),
            "{}",
            listed.asm
        );
        let listed = crate::base::parse::parse(&listed.asm);
        assert_eq!(
            as_annotated(|| hazards(&listed)),
            vec![(mov, "v2".to_string(), load)]
        );
        // Register counts: v258 by control flow, over the 8 declared.
        let budget = |asm: &crate::base::parse::AsmFile| {
            let b = &crate::stage::check::budget::analyze(asm, &target)[0];
            let top = b
                .uses
                .iter()
                .filter(|u| u.class == crate::stage::check::budget::RegClass::Vgpr)
                .max_by_key(|u| u.last)
                .map(|u| (u.line, u.last));
            (b.used.vgpr, top)
        };
        assert_eq!(budget(&asm), (259, Some((mov, 258))));
        assert_eq!(budget(&listed), (259, Some((mov, 258))));
        assert_eq!(as_annotated(|| budget(&listed)), (3, Some((load, 2))));
        let doc = crate::base::document::Document::from_source(&lifted.asm, "k.s");
        let err = crate::stage::check::budget::check_registers(
            None,
            &doc,
            &target,
            crate::config::policy::RegisterPolicy::Error,
            "k",
        )
        .expect_err("259 VGPRs over the 8 declared");
        let text = err.to_string();
        assert!(text.contains("v258"), "{text}");
        // The hand-written source, checked as written: the same verdicts.
        let source = crate::base::parse::parse(src);
        assert_eq!(hazards(&source), vec![]);
        assert_eq!(budget(&source).0, 259);
    }

    /// aiter's `f4gemm_fp8_mxfp4_ABpreShuffle_256x256_4x4_ps` (the
    /// sample in `tests/corpus/aiter/gfx1250/f4gemm/`), lifted: after
    /// `s_set_vgpr_msb 11` at 0x4108 (slot 0 = 3, slot 1 = 2), a `.long`
    /// word makes llvm-objdump-22 reset its MSBs, so it lists
    /// `ds_load_b32 v104, v81 offset:512` at 0x411c (and the WMMAs after
    /// it) without annotations. The wave addresses LDS through v849, and
    /// the first `v_wmma_scale_f32_32x16x128_f4 v[108:123], v[24:39], …`
    /// reads v[792:807] and v[528:535]: the `ds_load_b128 v[36:39]` still
    /// in flight (under `s_wait_dscnt 0x14`) is no hazard for it, though
    /// the listing's registers make it one.
    #[test]
    fn f4gemm_ds_load_at_0x411c_addresses_v849_and_the_wmma_hazard_goes() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../tests/corpus/aiter/gfx1250/f4gemm/f4gemm_fp8_mxfp4_ABpreShuffle_256x256_4x4_ps.co",
        );
        let tc = toolchain();
        let lifted = crate::stage::lift::lift_file(&path, None, &tc, None).expect("lift");
        let asm = crate::base::parse::parse(&lifted.asm);
        let texts: Vec<&str> = asm.lines.iter().map(|l| l.text().trim()).collect();
        let after = |from: usize, text: &str| {
            from + texts[from..]
                .iter()
                .position(|t| *t == text)
                .unwrap_or_else(|| panic!("no `{text}` after line {}", from + 1))
        };
        let block = after(0, ".Llift_40fc:");
        assert_eq!(texts[block + 4], "s_set_vgpr_msb 11");
        let ds = after(block, "ds_load_b32 v104, v81 /*v849*/ offset:512");
        // 0x40fc + s_nop, two s_set_vgpr_msb, s_wait_dscnt (4 bytes each),
        // the 8-byte ld_scale and two words: 0x411c.
        assert_eq!(ds, block + 8);
        let producer = after(ds, "ds_load_b128 v[36:39], v76 /*v844*/ offset:11776");
        let wmma = after(
            producer,
            "v_wmma_scale_f32_32x16x128_f4 v[108:123], v[24:39] /*v[792:807]*/, v[16:23] /*v[528:535]*/, v[108:123], v101, v83 matrix_a_reuse",
        );
        let target = gfx1250();
        let kernels = crate::stage::check::hazard::kernels(&asm, &target);
        let k = kernels
            .iter()
            .find(|k| k.name.contains("f4gemm"))
            .expect("kernel");
        let ins = |l: usize| {
            k.cfg
                .instruction(&asm, l)
                .expect("instruction")
                .into_owned()
        };
        assert_eq!(ins(ds).operands[1].to_string(), "v849");
        assert_eq!(ins(ds).operands[0].to_string(), "v104");
        assert_eq!(ins(producer).operands[0].to_string(), "v[36:39]");
        let w = ins(wmma);
        assert_eq!(
            (w.operands[1].to_string(), w.operands[2].to_string()),
            ("v[792:807]".to_string(), "v[528:535]".to_string())
        );
        let found = |asm: &crate::base::parse::AsmFile, line: usize| {
            crate::stage::check::hazard::hazards(asm, &target)
                .into_iter()
                .filter(|(_, h)| h.line == line)
                .map(|(_, h)| (h.register, h.producer))
                .collect::<Vec<_>>()
        };
        assert_eq!(found(&asm, wmma), vec![]);
        // As llvm-objdump lists it (the lift before the MSB flow), the
        // same WMMA "reads" the loading v[36:39].
        let listed =
            as_annotated(|| crate::stage::lift::lift_file(&path, None, &tc, None)).expect("lift");
        let listed = crate::base::parse::parse(&listed.asm);
        assert_eq!(listed.lines[wmma].text().trim(), "v_wmma_scale_f32_32x16x128_f4 v[108:123], v[24:39], v[16:23], v[108:123], v101, v83 matrix_a_reuse");
        assert_eq!(
            as_annotated(|| found(&listed, wmma)),
            vec![("v[24:39]".to_string(), producer)]
        );
    }

    /// Each `.co` under the directory `GCN_PATCH_MSB_SURVEY` (sorted), lifted
    /// as now (annotations by the MSB flow) and as before the flow
    /// (llvm-objdump's); `None` where it does not lift.
    pub(crate) fn survey_lifts(
    ) -> impl Iterator<Item = (std::path::PathBuf, Option<(String, String)>)> {
        let Some(dir) = std::env::var_os("GCN_PATCH_MSB_SURVEY") else {
            panic!("set GCN_PATCH_MSB_SURVEY to a directory of gfx1250 code objects");
        };
        let tc = toolchain();
        let mut stack = vec![std::path::PathBuf::from(dir)];
        let mut files = vec![];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "co") {
                    files.push(p);
                }
            }
        }
        files.sort();
        files.into_iter().map(move |f| {
            let lift = || crate::stage::lift::lift_file(&f, None, &tc, None).ok();
            let both = lift().zip(as_annotated(lift)).map(|(a, b)| (a.asm, b.asm));
            (f, both)
        })
    }

    /// Opt-in survey: the wait-counter hazards and VGPR counts of every
    /// `.co` under `GCN_PATCH_MSB_SURVEY`, with gfx1250's VGPR MSBs by
    /// control flow and as llvm-objdump annotates them
    /// (`GCN_PATCH_MSB_SURVEY_VERBOSE=1` lists the findings that differ).
    #[test]
    #[ignore = "survey: GCN_PATCH_MSB_SURVEY=DIR cargo test -p gcn-patch --lib msb_analyses_survey -- --ignored --nocapture; figures in measurements.md"]
    fn msb_analyses_survey() {
        let verbose = std::env::var_os("GCN_PATCH_MSB_SURVEY_VERBOSE").is_some();
        for (f, lifts) in survey_lifts() {
            let Some((asm, listed_asm)) = lifts else {
                println!("{}: not lifted", f.display());
                continue;
            };
            if let Some(d) = std::env::var_os("GCN_PATCH_MSB_SURVEY_DUMP") {
                let name = f.with_extension("s");
                let name = name.file_name().expect("name");
                std::fs::write(std::path::Path::new(&d).join(name), &asm).expect("dump");
            }
            let (flow, flow_vgprs) = verdicts(&asm);
            let (listed, listed_vgprs) = as_annotated(|| verdicts(&listed_asm));
            let only = |a: &BTreeMap<String, usize>, b: &BTreeMap<String, usize>| {
                a.iter()
                    .filter(|(k, _)| !b.contains_key(*k))
                    .map(|(k, p)| (k.clone(), *p))
                    .collect::<Vec<_>>()
            };
            let (by_flow, annotated) = (only(&flow, &listed), only(&listed, &flow));
            println!(
                "{}: wait-counter hazards {} by control flow, {} as annotated, {} only by flow, {} only annotated; VGPRs {:?} by flow, {:?} as annotated",
                f.file_name().unwrap_or_default().to_string_lossy(),
                flow.len(),
                listed.len(),
                by_flow.len(),
                annotated.len(),
                flow_vgprs.iter().map(|x| x.1).collect::<Vec<_>>(),
                listed_vgprs.iter().map(|x| x.1).collect::<Vec<_>>(),
            );
            if verbose {
                let lines: Vec<&str> = asm.lines().collect();
                for (what, list) in [("only by flow", by_flow), ("only annotated", annotated)] {
                    for (k, p) in list {
                        let f: Vec<&str> = k.split('|').collect();
                        let l: usize = f[1].parse().unwrap_or(0);
                        println!(
                            "  {what}: {} {} at {}: {} <- {}: {}",
                            f[2],
                            f[3],
                            l + 1,
                            lines.get(l).unwrap_or(&"").trim(),
                            p + 1,
                            lines.get(p).unwrap_or(&"").trim()
                        );
                    }
                }
            }
        }
    }
}
