//! Instructions, operands and register references.
//!
//! The operand model follows LLVM's AMDGPU asm printer: operands are
//! separated by top-level commas; after the last operand, space-separated
//! tokens such as `offen`, `offset:16`, `glc`, `sc0 sc1`, `op_sel:[1,0]` are
//! instruction *modifiers*. Counter-style operand lists without commas
//! (`s_waitcnt vmcnt(0) lgkmcnt(0)`, `s_delay_alu instid0(..) | instskip(..)`)
//! are all operands. VOPD dual instructions (`a :: b`) keep the second half in
//! [`Instruction::dual`].

use std::fmt;

use super::small::Str;

/// One parsed machine instruction (the line text stays the source of truth).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// Mnemonic, e.g. `v_add_f32_e32`.
    pub mnemonic: Str,
    /// Comma-separated operands, in order.
    pub operands: Vec<Operand>,
    /// Trailing space-separated modifiers (`offen`, `offset:16`, `glc`, ...), verbatim.
    pub modifiers: Vec<Str>,
    /// Trailing comment including its marker (`; ...` or `// ...`), if any.
    pub comment: Option<Str>,
    /// Second half of a VOPD dual instruction (`v_dual_x ... :: v_dual_y ...`).
    pub dual: Option<Box<Instruction>>,
}

impl Instruction {
    /// Every register operand (including inside `neg(..)`, `|..|`, `-..`, and
    /// the dual half), in operand order.
    pub fn registers(&self) -> impl Iterator<Item = &RegisterRef> + '_ {
        self.operands
            .iter()
            .chain(self.dual.iter().flat_map(|d| d.operands.iter()))
            .filter_map(Operand::register)
    }

    /// The modifier `key:value` with this key, e.g. `offset` → `"16"`.
    pub fn modifier_value(&self, key: &str) -> Option<&str> {
        self.modifiers
            .iter()
            .find_map(|m| m.split_once(':').filter(|(k, _)| *k == key).map(|(_, v)| v))
    }

    /// Whether a bare modifier flag (e.g. `glc`, `offen`) is present.
    pub fn has_modifier(&self, flag: &str) -> bool {
        self.modifiers.iter().any(|m| m == flag)
    }
}

/// One operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// A register or register range, e.g. `v5`, `s[4:7]`, `vcc`.
    Register(RegisterRef),
    /// An integer literal (`0`, `-1`, `0x3ff`, `0b101`).
    Integer(i64),
    /// A floating-point literal, verbatim (`1.0`, `-0.5`).
    Float(Str),
    /// A label or symbol (`.LBB0_1`, `saxpy`).
    Symbol(Str),
    /// Any other expression, verbatim (`.Lfunc_end0-saxpy`, `foo@rel32@lo+4`).
    Expr(Str),
    /// Negation: `-v1` or `neg(v1)`.
    Neg(Box<Operand>),
    /// Absolute value: `|v1|` or `abs(v1)`.
    Abs(Box<Operand>),
    /// Sign extension: `sext(v1)`.
    Sext(Box<Operand>),
    /// `key:value` (`offset:16`, `op_sel:[0,1]`, `row_shr:1`), verbatim;
    /// [`Operand::key_value`] splits it at the first `:`.
    KeyValue(Str),
    /// `name(args)` (`vmcnt(0)`, `hwreg(HW_REG_MODE, 0, 4)`,
    /// `instid0(VALU_DEP_1)`), verbatim; [`Operand::func`] splits it.
    Func(Str),
    /// A bare keyword (`off`, `glc`, `sc0`, `offen`, ...).
    Flag(Str),
}

// Every line's operands are stored: a string and a tag, no more.
const _: () = assert!(std::mem::size_of::<Operand>() <= 32);

impl Operand {
    /// The register this operand names, looking through `neg`/`abs`/`sext`.
    pub fn register(&self) -> Option<&RegisterRef> {
        match self {
            Operand::Register(r) => Some(r),
            Operand::Neg(o) | Operand::Abs(o) | Operand::Sext(o) => o.register(),
            _ => None,
        }
    }

    /// Key and value of a [`Operand::KeyValue`] (`offset:16` → `offset`,
    /// `16`).
    pub fn key_value(&self) -> Option<(&str, &str)> {
        match self {
            Operand::KeyValue(t) => t.split_once(':'),
            _ => None,
        }
    }

    /// Name and argument text of a [`Operand::Func`] (`vmcnt(0)` →
    /// `vmcnt`, `0`).
    pub fn func(&self) -> Option<(&str, &str)> {
        match self {
            Operand::Func(t) => {
                let (name, rest) = t.split_once('(')?;
                Some((name, rest.strip_suffix(')').unwrap_or(rest)))
            }
            _ => None,
        }
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Register(r) => write!(f, "{r}"),
            Operand::Integer(v) => write!(f, "{v}"),
            Operand::Float(s)
            | Operand::Symbol(s)
            | Operand::Expr(s)
            | Operand::Flag(s)
            | Operand::KeyValue(s)
            | Operand::Func(s) => f.write_str(s),
            Operand::Neg(o) => write!(f, "-{o}"),
            Operand::Abs(o) => write!(f, "|{o}|"),
            Operand::Sext(o) => write!(f, "sext({o})"),
        }
    }
}

/// A register file (or special register).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegFile {
    /// Vector registers `v0..`.
    Vgpr,
    /// Scalar registers `s0..`.
    Sgpr,
    /// Accumulation registers `a0..` (gfx908+).
    Agpr,
    /// Trap temporaries `ttmp0..`.
    Ttmp,
    /// `vcc`.
    Vcc,
    /// `vcc_lo`.
    VccLo,
    /// `vcc_hi`.
    VccHi,
    /// `exec`.
    Exec,
    /// `exec_lo`.
    ExecLo,
    /// `exec_hi`.
    ExecHi,
    /// `m0`.
    M0,
    /// `scc`.
    Scc,
    /// `flat_scratch`.
    FlatScratch,
    /// `flat_scratch_lo`.
    FlatScratchLo,
    /// `flat_scratch_hi`.
    FlatScratchHi,
    /// `xnack_mask`.
    XnackMask,
    /// `xnack_mask_lo`.
    XnackMaskLo,
    /// `xnack_mask_hi`.
    XnackMaskHi,
    /// `tba`.
    Tba,
    /// `tba_lo`.
    TbaLo,
    /// `tba_hi`.
    TbaHi,
    /// `tma`.
    Tma,
    /// `tma_lo`.
    TmaLo,
    /// `tma_hi`.
    TmaHi,
    /// `null` (gfx10+).
    Null,
    /// `lds_direct` / `src_lds_direct`.
    SrcLdsDirect,
    /// `src_shared_base`.
    SrcSharedBase,
    /// `src_shared_limit`.
    SrcSharedLimit,
    /// `src_private_base`.
    SrcPrivateBase,
    /// `src_private_limit`.
    SrcPrivateLimit,
    /// `src_pops_exiting_wave_id`.
    SrcPopsExitingWaveId,
    /// `src_execz`.
    SrcExecz,
    /// `src_vccz`.
    SrcVccz,
    /// `src_scc`.
    SrcScc,
}

impl RegFile {
    /// Whether this file is indexed (`v`, `s`, `a`, `ttmp`); others are single specials.
    pub fn is_indexed(self) -> bool {
        matches!(
            self,
            RegFile::Vgpr | RegFile::Sgpr | RegFile::Agpr | RegFile::Ttmp
        )
    }

    /// The prefix (`v`, `s`, `a`, `ttmp`) or the full name of a special register.
    pub fn name(self) -> &'static str {
        SPECIALS
            .iter()
            .find(|(_, f)| *f == self)
            .map(|(n, _)| *n)
            .unwrap_or(match self {
                RegFile::Vgpr => "v",
                RegFile::Sgpr => "s",
                RegFile::Agpr => "a",
                _ => "ttmp",
            })
    }
}

const SPECIALS: &[(&str, RegFile)] = &[
    ("vcc", RegFile::Vcc),
    ("vcc_lo", RegFile::VccLo),
    ("vcc_hi", RegFile::VccHi),
    ("exec", RegFile::Exec),
    ("exec_lo", RegFile::ExecLo),
    ("exec_hi", RegFile::ExecHi),
    ("m0", RegFile::M0),
    ("scc", RegFile::Scc),
    ("flat_scratch", RegFile::FlatScratch),
    ("flat_scratch_lo", RegFile::FlatScratchLo),
    ("flat_scratch_hi", RegFile::FlatScratchHi),
    ("xnack_mask", RegFile::XnackMask),
    ("xnack_mask_lo", RegFile::XnackMaskLo),
    ("xnack_mask_hi", RegFile::XnackMaskHi),
    ("tba", RegFile::Tba),
    ("tba_lo", RegFile::TbaLo),
    ("tba_hi", RegFile::TbaHi),
    ("tma", RegFile::Tma),
    ("tma_lo", RegFile::TmaLo),
    ("tma_hi", RegFile::TmaHi),
    ("null", RegFile::Null),
    ("src_lds_direct", RegFile::SrcLdsDirect),
    ("lds_direct", RegFile::SrcLdsDirect),
    ("src_shared_base", RegFile::SrcSharedBase),
    ("src_shared_limit", RegFile::SrcSharedLimit),
    ("src_private_base", RegFile::SrcPrivateBase),
    ("src_private_limit", RegFile::SrcPrivateLimit),
    ("src_pops_exiting_wave_id", RegFile::SrcPopsExitingWaveId),
    ("src_execz", RegFile::SrcExecz),
    ("src_vccz", RegFile::SrcVccz),
    ("src_scc", RegFile::SrcScc),
];

/// Which 16-bit half of a 32-bit register a true16 operand names (`v1.l`, `v1.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Half {
    /// `.l`
    Lo,
    /// `.h`
    Hi,
}

/// A register or an inclusive range of registers in one file.
///
/// Special registers have `first == last == 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegisterRef {
    /// The register file.
    pub file: RegFile,
    /// First register index.
    pub first: u32,
    /// Last register index (inclusive).
    pub last: u32,
    /// 16-bit half for true16 operands (`v1.l`), if any.
    pub half: Option<Half>,
}

impl RegisterRef {
    /// Number of 32-bit registers covered.
    pub fn count(&self) -> u32 {
        self.last.saturating_sub(self.first) + 1
    }

    /// Parse a register token such as `v5`, `v[4:7]`, `ttmp[4:5]`, `vcc_lo`, `v1.l`.
    pub fn parse(token: &str) -> Option<RegisterRef> {
        let (body, half) = if let Some(b) = token.strip_suffix(".l") {
            (b, Some(Half::Lo))
        } else if let Some(b) = token.strip_suffix(".h") {
            (b, Some(Half::Hi))
        } else {
            (token, None)
        };
        if let Some(&(_, file)) = SPECIALS.iter().find(|(n, _)| *n == body) {
            return half.is_none().then_some(RegisterRef {
                file,
                first: 0,
                last: 0,
                half: None,
            });
        }
        let (file, rest) = if let Some(r) = body.strip_prefix("ttmp") {
            (RegFile::Ttmp, r)
        } else if let Some(r) = body.strip_prefix("acc") {
            (RegFile::Agpr, r)
        } else if let Some(r) = body.strip_prefix('v') {
            (RegFile::Vgpr, r)
        } else if let Some(r) = body.strip_prefix('s') {
            (RegFile::Sgpr, r)
        } else if let Some(r) = body.strip_prefix('a') {
            (RegFile::Agpr, r)
        } else {
            return None;
        };
        let (first, last) =
            if let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                match inner.split_once(':') {
                    Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
                    None => {
                        let n = inner.trim().parse().ok()?;
                        (n, n)
                    }
                }
            } else {
                if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let n = rest.parse().ok()?;
                (n, n)
            };
        (last >= first).then_some(RegisterRef {
            file,
            first,
            last,
            half,
        })
    }
}

impl fmt::Display for RegisterRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.file.is_indexed() {
            return f.write_str(self.file.name());
        }
        let p = self.file.name();
        if self.first == self.last {
            write!(f, "{p}{}", self.first)?;
        } else {
            write!(f, "{p}[{}:{}]", self.first, self.last)?;
        }
        match self.half {
            Some(Half::Lo) => f.write_str(".l"),
            Some(Half::Hi) => f.write_str(".h"),
            None => Ok(()),
        }
    }
}

/// Bare words that are keywords, not symbols.
const FLAGS: &[&str] = &[
    "off",
    "offen",
    "idxen",
    "addr64",
    "glc",
    "slc",
    "dlc",
    "nt",
    "sc0",
    "sc1",
    "lds",
    "tfe",
    "lwe",
    "gds",
    "clamp",
    "high",
    "a16",
    "r128",
    "d16",
    "unorm",
    "da",
    "nv",
    "row_mirror",
    "row_half_mirror",
    "wave_shl",
    "wave_rol",
    "wave_shr",
    "wave_ror",
    "noalias",
    "done",
    "vm",
    "compr",
    "row_en",
    "sys",
];

/// Parse the operand part of an instruction line (after the mnemonic, comment removed).
pub(crate) fn parse_instruction(code: &str, comment: Option<&str>) -> Instruction {
    let code = code.trim();
    // VOPD: `v_dual_a ... :: v_dual_b ...`
    if let Some(pos) = find_top_level(code, "::") {
        let mut first = parse_instruction(&code[..pos], comment);
        let second = parse_instruction(&code[pos + 2..], None);
        first.dual = Some(Box::new(second));
        return first;
    }
    let (mnemonic, rest) = match code.find(char::is_whitespace) {
        Some(i) => (&code[..i], code[i..].trim()),
        None => (code, ""),
    };
    let (operands, modifiers) = parse_operand_list(rest);
    Instruction {
        mnemonic: mnemonic.into(),
        operands,
        modifiers,
        comment: comment.map(Str::from),
        dual: None,
    }
}

fn parse_operand_list(rest: &str) -> (Vec<Operand>, Vec<Str>) {
    if rest.is_empty() {
        return (vec![], vec![]);
    }
    let chunks = split_top_level(rest, |c| c == ',');
    let mut operands = Vec::with_capacity(chunks.len());
    let mut modifiers = vec![];
    let last = chunks.len() - 1;
    for (i, chunk) in chunks.iter().enumerate() {
        let chunk = chunk.trim();
        if i < last {
            operands.push(parse_operand(chunk));
            continue;
        }
        let tokens = split_top_level(chunk, char::is_whitespace);
        let tokens: Vec<&str> = tokens.into_iter().filter(|t| !t.is_empty()).collect();
        // `s_waitcnt vmcnt(0) lgkmcnt(0)`, `s_delay_alu a | b | c`: all operands.
        let counters = chunks.len() == 1
            && tokens.len() > 1
            && tokens
                .iter()
                .all(|t| *t == "|" || *t == "&" || is_func_call(t));
        if counters {
            operands.extend(
                tokens
                    .iter()
                    .filter(|t| **t != "|" && **t != "&")
                    .map(|t| parse_operand(t)),
            );
            continue;
        }
        let mut it = tokens.into_iter();
        if let Some(first) = it.next() {
            operands.push(parse_operand(first));
        }
        // Collected at their exact number (`extend` would reserve room for
        // four): every instruction line keeps them.
        modifiers = it.map(Str::from).collect();
    }
    operands.shrink_to_fit();
    (operands, modifiers)
}

fn is_func_call(t: &str) -> bool {
    match t.find('(') {
        Some(i) => i > 0 && t.ends_with(')') && is_ident(&t[..i]),
        None => false,
    }
}

fn is_ident(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_' || c == b'.' || c == b'$')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$' || c == b'@')
}

/// Parse one operand token.
pub fn parse_operand(tok: &str) -> Operand {
    let tok = tok.trim();
    if let Some(v) = parse_int(tok) {
        return Operand::Integer(v);
    }
    if is_float(tok) {
        return Operand::Float(tok.into());
    }
    if let Some(r) = RegisterRef::parse(tok) {
        return Operand::Register(r);
    }
    if tok.len() >= 2 && tok.starts_with('|') && tok.ends_with('|') {
        return Operand::Abs(Box::new(parse_operand(&tok[1..tok.len() - 1])));
    }
    if let Some(inner) = tok.strip_prefix('-') {
        let inner_op = parse_operand(inner);
        if matches!(
            inner_op,
            Operand::Register(_) | Operand::Abs(_) | Operand::Sext(_)
        ) {
            return Operand::Neg(Box::new(inner_op));
        }
        return Operand::Expr(tok.into());
    }
    if is_func_call(tok) {
        let i = tok.find('(').unwrap_or(0);
        let name = &tok[..i];
        let args = &tok[i + 1..tok.len() - 1];
        match name {
            "neg" => return Operand::Neg(Box::new(parse_operand(args))),
            "abs" => return Operand::Abs(Box::new(parse_operand(args))),
            "sext" => return Operand::Sext(Box::new(parse_operand(args))),
            _ => return Operand::Func(tok.into()),
        }
    }
    if FLAGS.contains(&tok) {
        return Operand::Flag(tok.into());
    }
    if let Some((k, v)) = tok.split_once(':') {
        if is_ident(k) && !k.starts_with('.') && !v.is_empty() {
            return Operand::KeyValue(tok.into());
        }
    }
    if is_ident(tok) {
        return Operand::Symbol(tok.into());
    }
    Operand::Expr(tok.into())
}

/// An integer literal as the AMDGPU assembler writes it: decimal, `0x`/`0X`
/// hex or `0b` binary, optionally negative. The one integer parser of the
/// crate (operands, `.set` expressions, wait counts).
pub fn parse_int(tok: &str) -> Option<i64> {
    let (neg, body) = match tok.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, tok),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()? as i64
    } else if let Some(b) = body.strip_prefix("0b") {
        u64::from_str_radix(b, 2).ok()? as i64
    } else if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
        body.parse::<u64>().ok()? as i64
    } else {
        return None;
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

fn is_float(tok: &str) -> bool {
    let body = tok.strip_prefix('-').unwrap_or(tok);
    body.contains(['.', 'e', 'E'])
        && body.starts_with(|c: char| c.is_ascii_digit())
        && body.parse::<f64>().is_ok()
}

/// Split at top-level separators (outside `()`, `[]`, quotes).
pub(crate) fn split_top_level(s: &str, is_sep: impl Fn(char) -> bool) -> Vec<&str> {
    let mut out = vec![];
    let mut depth = 0i32;
    let mut quote = false;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quote = !quote,
            '(' | '[' if !quote => depth += 1,
            ')' | ']' if !quote => depth -= 1,
            _ if !quote && depth <= 0 && is_sep(c) => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn find_top_level(s: &str, pat: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut quote = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quote = !quote,
            '(' | '[' if !quote => depth += 1,
            ')' | ']' if !quote => depth -= 1,
            _ if !quote && depth <= 0 && s[i..].starts_with(pat) => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(file: RegFile, first: u32, last: u32) -> RegisterRef {
        RegisterRef {
            file,
            first,
            last,
            half: None,
        }
    }

    #[test]
    fn parses_registers() {
        assert_eq!(RegisterRef::parse("v5"), Some(reg(RegFile::Vgpr, 5, 5)));
        assert_eq!(RegisterRef::parse("v[4:7]"), Some(reg(RegFile::Vgpr, 4, 7)));
        assert_eq!(RegisterRef::parse("s[4:7]"), Some(reg(RegFile::Sgpr, 4, 7)));
        assert_eq!(RegisterRef::parse("a[0:3]"), Some(reg(RegFile::Agpr, 0, 3)));
        assert_eq!(
            RegisterRef::parse("ttmp[4:5]"),
            Some(reg(RegFile::Ttmp, 4, 5))
        );
        assert_eq!(RegisterRef::parse("vcc"), Some(reg(RegFile::Vcc, 0, 0)));
        assert_eq!(
            RegisterRef::parse("exec_lo"),
            Some(reg(RegFile::ExecLo, 0, 0))
        );
        assert_eq!(RegisterRef::parse("m0"), Some(reg(RegFile::M0, 0, 0)));
        assert_eq!(
            RegisterRef::parse("v1.h").map(|r| r.half),
            Some(Some(Half::Hi))
        );
        for bad in ["v", "v[7:4]", "vx", "saxpy", "s_nop", "v1.x", "off"] {
            assert_eq!(RegisterRef::parse(bad), None, "{bad}");
        }
        assert_eq!(reg(RegFile::Vgpr, 4, 7).to_string(), "v[4:7]");
        assert_eq!(reg(RegFile::VccLo, 0, 0).to_string(), "vcc_lo");
    }

    #[test]
    fn parses_buffer_load_with_modifiers() {
        let i = parse_instruction(
            "buffer_load_dwordx4 v[2:5], v71, s[12:15], 0 offen offset:16",
            None,
        );
        assert_eq!(i.mnemonic, "buffer_load_dwordx4");
        assert_eq!(i.operands.len(), 4);
        assert_eq!(i.operands[3], Operand::Integer(0));
        assert_eq!(i.modifiers, ["offen", "offset:16"]);
        assert_eq!(i.modifier_value("offset"), Some("16"));
        assert!(i.has_modifier("offen"));
        let regs: Vec<String> = i.registers().map(|r| r.to_string()).collect();
        assert_eq!(regs, ["v[2:5]", "v71", "s[12:15]"]);
    }

    #[test]
    fn parses_counters_and_source_modifiers() {
        let i = parse_instruction("s_waitcnt vmcnt(0) lgkmcnt(0)", None);
        assert_eq!(i.operands.len(), 2);
        assert!(i.modifiers.is_empty());
        let i = parse_instruction(
            "s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)",
            None,
        );
        assert_eq!(i.operands.len(), 3);
        let i = parse_instruction("v_add_f32_e64 v0, -v1, |v2| clamp", None);
        assert!(matches!(i.operands[1], Operand::Neg(_)));
        assert!(matches!(i.operands[2], Operand::Abs(_)));
        assert_eq!(i.modifiers, ["clamp"]);
        assert_eq!(i.registers().count(), 3);
        let i = parse_instruction("v_fma_f32 v0, neg(v1), -|v2|, 1.0", None);
        assert!(matches!(i.operands[1], Operand::Neg(_)));
        assert!(matches!(&i.operands[2], Operand::Neg(b) if matches!(**b, Operand::Abs(_))));
        assert_eq!(i.operands[3], Operand::Float("1.0".into()));
        let i = parse_instruction("global_load_dword v4, v[2:3], off sc0 sc1", None);
        assert_eq!(i.operands[2], Operand::Flag("off".into()));
        assert_eq!(i.modifiers, ["sc0", "sc1"]);
        let i = parse_instruction("s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s0", None);
        assert_eq!(i.operands.len(), 2);
        let i = parse_instruction("s_cbranch_execz .LBB0_2", None);
        assert_eq!(i.operands, [Operand::Symbol(".LBB0_2".into())]);
        let i = parse_instruction("s_mov_b32 s0, -1", None);
        assert_eq!(i.operands[1], Operand::Integer(-1));
        let i = parse_instruction("s_add_u32 s0, s0, foo@rel32@lo+4", None);
        assert_eq!(i.operands[2], Operand::Expr("foo@rel32@lo+4".into()));
    }

    #[test]
    fn parses_vopd() {
        let i = parse_instruction("v_dual_mov_b32 v4, 0 :: v_dual_and_b32 v1, 0x3ff, v0", None);
        assert_eq!(i.mnemonic, "v_dual_mov_b32");
        let d = i.dual.as_ref().unwrap();
        assert_eq!(d.mnemonic, "v_dual_and_b32");
        assert_eq!(d.operands[1], Operand::Integer(0x3ff));
        assert_eq!(i.registers().count(), 3);
    }
}
