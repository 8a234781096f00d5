//! Mutation test of the wait-counter hazard checker.
//!
//! From every corpus kernel, every variant that deletes one wait or loosens
//! one counter of it by one (N → N+1) is generated. Whether a later
//! instruction *needs* that wait is decided by an oracle written here,
//! independently of the checker: a straight-line simulator that keeps the
//! explicit queue of operations issued in the wait's basic block (the
//! hardware's view: a wait for N lets the N newest in-order operations stay
//! outstanding; with a scalar load in the queue only 0 retires anything) and
//! reports the first instruction touching a register that a queued load still
//! has to write. A mutant is "needed" when the oracle finds such an access
//! that the original kernel does not have. The checker must flag the needed
//! mutants, at the oracle's instruction, naming the register and a producing
//! instruction the oracle found: the floors are what is measured (1677 of
//! 1678 on 2026-11-27; the one miss is a VMEM wait in gfx9–11 syntax), so
//! one more miss, or fewer mutants (a shrunken corpus or oracle), fails.

use std::collections::{BTreeSet, VecDeque};

use gcn_embed::{Generation, TargetId};
use gcn_patch::base::parse::parse;
use gcn_patch::stage::check::hazard;

use crate::common;

/// Counter classes of the oracle (its own, coarse view).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Q {
    /// VMEM loads (vmcnt / loadcnt); before GFX10 VMEM stores too.
    Vm,
    /// LDS (lgkmcnt / dscnt); before GFX12 also SMEM and messages.
    Lds,
    /// SMEM on GFX12 (kmcnt).
    Km,
}

#[derive(Debug, Clone)]
struct Op {
    line: usize,
    regs: Vec<(char, u32)>,
    smem: bool,
}

/// Registers in an operand text: `v5`, `v[4:7]`, `s[0:1]`, `a3`.
fn regs_in(text: &str) -> Vec<(char, u32)> {
    let b = text.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        let boundary = i == 0 || !(b[i - 1] as char).is_ascii_alphanumeric() && b[i - 1] != b'_';
        if boundary && matches!(c, 'v' | 's' | 'a') && i + 1 < b.len() {
            if b[i + 1] == b'[' {
                if let Some(end) = text[i..].find(']') {
                    let inner = &text[i + 2..i + end];
                    if let Some((x, y)) = inner.split_once(':') {
                        if let (Ok(x), Ok(y)) = (x.trim().parse::<u32>(), y.trim().parse::<u32>()) {
                            out.extend((x..=y).map(|r| (c, r)));
                        }
                    }
                    i += end + 1;
                    continue;
                }
            } else if (b[i + 1] as char).is_ascii_digit() {
                let mut j = i + 1;
                while j < b.len() && (b[j] as char).is_ascii_digit() {
                    j += 1;
                }
                let after_ok =
                    j >= b.len() || !((b[j] as char).is_ascii_alphanumeric() || b[j] == b'_');
                if after_ok {
                    out.push((c, text[i + 1..j].parse().unwrap()));
                }
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// What the oracle knows of one instruction line.
enum Kind {
    Wait(Vec<(Q, u32)>),
    /// Issues an operation on a queue; writes its first operand if `def`.
    Issue {
        q: Q,
        def: bool,
        smem: bool,
    },
    Other,
}

fn classify(code: &str, g12: bool, g10: bool) -> Kind {
    let m = code.split_whitespace().next().unwrap_or("");
    let ops = code[m.len()..].trim();
    let num = |s: &str| -> Option<u32> {
        let s = s.trim();
        match s.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        }
    };
    if m == "s_waitcnt" {
        let mut w = vec![];
        for part in ops.split_whitespace() {
            if let Some(v) = part
                .strip_prefix("vmcnt(")
                .and_then(|r| r.strip_suffix(')'))
            {
                w.push((Q::Vm, num(v).unwrap()));
            }
            if let Some(v) = part
                .strip_prefix("lgkmcnt(")
                .and_then(|r| r.strip_suffix(')'))
            {
                w.push((Q::Lds, num(v).unwrap()));
            }
        }
        return Kind::Wait(w);
    }
    if g12 {
        match m {
            "s_wait_loadcnt" => return Kind::Wait(vec![(Q::Vm, num(ops).unwrap())]),
            "s_wait_dscnt" => return Kind::Wait(vec![(Q::Lds, num(ops).unwrap())]),
            "s_wait_kmcnt" => return Kind::Wait(vec![(Q::Km, num(ops).unwrap())]),
            "s_wait_loadcnt_dscnt" => {
                let v = num(ops).unwrap();
                return Kind::Wait(vec![(Q::Vm, v >> 8), (Q::Lds, v & 0x3f)]);
            }
            _ => {}
        }
    }
    let vmem = ["buffer_", "global_", "scratch_", "flat_"]
        .iter()
        .any(|p| m.starts_with(p));
    if vmem && m.contains("_load") {
        // LDS DMA (`… lds`) writes LDS, not its first register (an address).
        let lds_dma = code.split_whitespace().any(|t| t == "lds") || m.contains("_load_lds");
        return Kind::Issue {
            q: Q::Vm,
            def: !lds_dma,
            smem: false,
        };
    }
    if vmem && m.contains("_store") {
        // Before GFX10 stores count in vmcnt; later in their own counter.
        return if g10 {
            Kind::Other
        } else {
            Kind::Issue {
                q: Q::Vm,
                def: false,
                smem: false,
            }
        };
    }
    if m.starts_with("ds_") {
        let def = m.starts_with("ds_read") || m.starts_with("ds_load") || m.contains("_rtn");
        return Kind::Issue {
            q: Q::Lds,
            def,
            smem: false,
        };
    }
    if m.starts_with("s_load_") || m.starts_with("s_buffer_load_") {
        return Kind::Issue {
            q: if g12 { Q::Km } else { Q::Lds },
            def: true,
            smem: true,
        };
    }
    if m == "s_sendmsg" {
        return Kind::Issue {
            q: if g12 { Q::Km } else { Q::Lds },
            def: false,
            smem: false,
        };
    }
    Kind::Other
}

/// An access found by the oracle: line, registers, producer lines.
type Access = (usize, Vec<(char, u32)>, BTreeSet<usize>);

/// First access (line, registers, producer lines) in the block from `start`
/// to a register a queued operation still has to write.
fn oracle(lines: &[String], start: usize, end: usize, g12: bool, g10: bool) -> Option<Access> {
    let mut queues: [VecDeque<Op>; 3] = Default::default();
    let qi = |q: Q| q as usize;
    for (idx, text) in lines.iter().enumerate().take(end).skip(start) {
        let code = text.split(';').next().unwrap_or("").trim();
        if code.is_empty() || code.ends_with(':') || code.starts_with('.') {
            continue;
        }
        match classify(code, g12, g10) {
            Kind::Wait(ws) => {
                for (q, n) in ws {
                    let queue = &mut queues[qi(q)];
                    if queue.iter().any(|o| o.smem) {
                        if n == 0 {
                            queue.clear();
                        }
                    } else {
                        while queue.len() > n as usize {
                            queue.pop_front();
                        }
                    }
                }
            }
            kind => {
                let m = code.split_whitespace().next().unwrap_or("");
                let ops = &code[m.len()..];
                let all = regs_in(ops);
                let first_op = ops.split(',').next().unwrap_or("");
                let def_regs = regs_in(first_op);
                // Every register the instruction touches, except the
                // destination of a VMEM load over a pending VMEM load (they
                // write in order).
                let touched: Vec<(char, u32)> = match &kind {
                    Kind::Issue {
                        q: Q::Vm,
                        def: true,
                        ..
                    } => all
                        .iter()
                        .copied()
                        .filter(|r| !def_regs.contains(r))
                        .collect(),
                    _ => all.clone(),
                };
                let mut hit_regs = vec![];
                let mut producers = BTreeSet::new();
                for (q_index, queue) in queues.iter().enumerate() {
                    for op in queue.iter() {
                        for r in &op.regs {
                            let vm_def = matches!(
                                kind,
                                Kind::Issue {
                                    q: Q::Vm,
                                    def: true,
                                    ..
                                }
                            ) && q_index == 0
                                && def_regs.contains(r);
                            if (touched.contains(r) || (def_regs.contains(r) && !vm_def))
                                && !hit_regs.contains(r)
                            {
                                hit_regs.push(*r);
                                producers.insert(op.line);
                            }
                        }
                    }
                }
                if !hit_regs.is_empty() {
                    return Some((idx, hit_regs, producers));
                }
                if let Kind::Issue { q, def, smem } = kind {
                    queues[qi(q)].push_back(Op {
                        line: idx,
                        regs: if def { def_regs } else { vec![] },
                        smem,
                    });
                }
            }
        }
    }
    None
}

/// Block around `line`: from the previous label or branch to the next one.
fn block_of(lines: &[String], line: usize) -> (usize, usize) {
    let is_boundary_after = |t: &str| {
        let c = t.split(';').next().unwrap_or("").trim();
        c.starts_with("s_branch") || c.starts_with("s_cbranch") || c.starts_with("s_endpgm")
    };
    let is_label = |t: &str| {
        let c = t.split(';').next().unwrap_or("").trim();
        c.ends_with(':') && !c.starts_with(';')
    };
    let mut start = line;
    while start > 0 && !is_label(&lines[start]) && !is_boundary_after(&lines[start - 1]) {
        start -= 1;
    }
    let mut end = line + 1;
    while end < lines.len() && !is_label(&lines[end]) && !is_boundary_after(&lines[end - 1]) {
        end += 1;
    }
    (start, end)
}

struct Mutant {
    desc: String,
    lines: Vec<String>,
    /// The mutated line's new text (`None`: deleted).
    new_text: Option<String>,
    /// Line of the mutation in the mutant.
    at: usize,
    category: &'static str,
}

fn mutants(lines: &[String], g12: bool) -> Vec<Mutant> {
    let mut out = vec![];
    for (i, text) in lines.iter().enumerate() {
        let code = text.split(';').next().unwrap_or("").trim();
        let m = code.split_whitespace().next().unwrap_or("");
        let counters: Vec<(&str, String, String)> = if m == "s_waitcnt" && !g12 {
            code.split_whitespace()
                .skip(1)
                .filter_map(|p| {
                    let (name, rest) = p.split_once('(')?;
                    let v: u32 = rest.strip_suffix(')')?.parse().ok()?;
                    let max = if name == "vmcnt" { 63 } else { 15 };
                    (matches!(name, "vmcnt" | "lgkmcnt") && v + 1 < max).then(|| {
                        (
                            if name == "vmcnt" { "VMEM" } else { "LDS/SMEM" },
                            p.to_string(),
                            format!("{name}({})", v + 1),
                        )
                    })
                })
                .collect()
        } else if g12 && matches!(m, "s_wait_loadcnt" | "s_wait_dscnt" | "s_wait_kmcnt") {
            let ops = code[m.len()..].trim();
            let v = u32::from_str_radix(ops.trim_start_matches("0x"), 16).unwrap();
            let max = if m == "s_wait_kmcnt" { 31 } else { 63 };
            if v + 1 < max {
                vec![(
                    if m == "s_wait_loadcnt" {
                        "VMEM"
                    } else {
                        "LDS/SMEM"
                    },
                    ops.to_string(),
                    format!("{:#x}", v + 1),
                )]
            } else {
                vec![]
            }
        } else {
            vec![]
        };
        if counters.is_empty() {
            continue;
        }
        let mut del = lines.to_vec();
        del.remove(i);
        out.push(Mutant {
            desc: format!("delete line {}: {}", i + 1, code),
            lines: del,
            new_text: None,
            at: i,
            category: counters[0].0,
        });
        for (cat, from, to) in counters {
            let mut l = lines.to_vec();
            l[i] = l[i].replacen(&from, &to, 1);
            out.push(Mutant {
                desc: format!("line {}: {} -> {}", i + 1, code, l[i].trim()),
                new_text: Some(l[i].clone()),
                lines: l,
                at: i,
                category: cat,
            });
        }
    }
    out
}

/// Outcome of one needed mutant: its category, whether the checker flagged
/// it correctly, and if not, what happened.
type Outcome = (String, Result<(), String>);

fn mutate_file(file: &std::path::Path, target: TargetId) -> Vec<Outcome> {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let parsed = parse(&text);
    let g = target.processor.generation;
    let g12 = g >= Generation::Gfx12;
    let g10 = g >= Generation::Gfx10_1;
    let mut out = vec![];
    for m in mutants(&lines, g12) {
        let (start, end) = block_of(&m.lines, m.at.min(m.lines.len() - 1));
        let (ostart, oend) = block_of(&lines, m.at);
        let before = oracle(&lines, ostart, oend, g12, g10);
        let Some((read, regs, producers)) = oracle(&m.lines, start, end, g12, g10) else {
            continue;
        };
        // Needed only if the original block has no such access.
        if before.is_some() {
            continue;
        }
        let syntax = if g12 {
            "gfx12 syntax"
        } else {
            "gfx9-11 syntax"
        };
        let key = format!("{} waits, {syntax}", m.category);
        // The parsed original with the one line changed (a code line's kind
        // does not depend on its neighbours).
        let mut asm = parsed.clone();
        match &m.new_text {
            Some(t) => asm.lines[m.at] = parse(t).lines[0].clone(),
            None => {
                asm.lines.remove(m.at);
            }
        }
        let hz = hazard::hazards(&asm, &target);
        let ok = hz.iter().any(|(_, h)| {
            h.line == read
                && producers.contains(&h.producer)
                && h.pending.iter().any(|u| {
                    regs.iter().any(|(c, r)| {
                        let unit = match c {
                            'v' => *r,
                            'a' => 1024 + r,
                            _ => 2048 + r,
                        };
                        unit == *u
                    })
                })
        });
        let result = if ok {
            Ok(())
        } else {
            Err(format!(
                "{} ({}): {}: oracle: line {} reads {:?} from {:?}; checker: {:?}",
                common::rel(file).display(),
                target.name(),
                m.desc,
                read + 1,
                regs,
                producers.iter().map(|p| p + 1).collect::<Vec<_>>(),
                hz.iter()
                    .map(|(_, h)| (h.line + 1, h.register.clone(), h.producer + 1))
                    .collect::<Vec<_>>()
            ))
        };
        out.push((key, result));
    }
    out
}

#[test]
fn checker_flags_the_needed_mutants_as_measured() {
    let files = common::corpus_files();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let outcomes: Vec<Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let files = &files;
                s.spawn(move || {
                    files
                        .iter()
                        .skip(i)
                        .step_by(threads)
                        .flat_map(|(f, t)| mutate_file(f, *t))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut per: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
    for (k, r) in &outcomes {
        let e = per.entry(k).or_default();
        e.0 += 1;
        e.1 += usize::from(r.is_ok());
    }
    let needed = outcomes.len();
    let flagged = outcomes.iter().filter(|(_, r)| r.is_ok()).count();
    let misses: Vec<&String> = outcomes
        .iter()
        .filter_map(|(_, r)| r.as_ref().err())
        .collect();
    for (k, (n, f)) in &per {
        println!("hazard mutation: {k}: {f}/{n} flagged");
    }
    let pct = 100.0 * flagged as f64 / needed.max(1) as f64;
    println!("hazard mutation: {flagged} of {needed} needed-wait mutants flagged with the right register and producer ({pct:.1} %)");
    for m in misses.iter().take(20) {
        println!("missed: {m}");
    }
    assert!(per.len() >= 4, "every category must have mutants: {per:?}");
    // Floors at the measured figures (1677 of 1678).
    assert!(
        needed >= 1678,
        "fewer needed mutants than measured: {needed}"
    );
    assert!(
        needed - flagged <= 1,
        "{} missed, 1 measured ({pct:.1} % flagged); misses:\n{}",
        needed - flagged,
        misses
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn oracle_sees_nothing_in_the_unmutated_corpus() {
    // The oracle itself must agree that the compiler's waits are sufficient.
    for (file, target) in common::corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let g = target.processor.generation;
        let mut i = 0;
        while i < lines.len() {
            let (s, e) = block_of(&lines, i);
            assert!(
                oracle(
                    &lines,
                    s,
                    e,
                    g >= Generation::Gfx12,
                    g >= Generation::Gfx10_1
                )
                .is_none(),
                "{}:{}",
                file.display(),
                s + 1
            );
            i = e.max(i + 1);
        }
    }
    let _ = TargetId::parse("gfx942").unwrap();
}
