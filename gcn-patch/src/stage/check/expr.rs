//! A small evaluator for the assembler expressions that appear in register
//! counts: integers, `.set` symbols, `+ - * / % << >> & | ^ ~`, parentheses,
//! and the AMDGPU MC functions `max`, `or`, `alignto`, `totalnumvgprs`
//! (`AMDGPUMCExpr.cpp`: `VariantKind` `AGVK_Max`, `AGVK_Or`, `AGVK_AlignTo`,
//! `AGVK_TotalNumVGPRs`).
//!
//! LLVM 22 clang output and IREE's LLVM 24 print literal numbers in the
//! descriptor of the corpus kernels, but LLVM may print
//! `max(totalnumvgprs(.Lk.num_agpr, .Lk.num_vgpr), 1, 0)`-style expressions
//! when a count is not known at the time the descriptor is printed; those
//! evaluate here once the `.set` symbols are known.

use std::collections::HashMap;

/// Every `.set name, value` of the file.
pub(crate) fn set_symbols(asm: &crate::base::parse::AsmFile) -> HashMap<String, String> {
    asm.lines
        .iter()
        .filter_map(|l| match l.kind() {
            crate::base::parse::LineKind::Set { name, value } => {
                Some((name.clone(), value.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Evaluate `text` with `symbols` (`.set` name → value text). `None` if the
/// expression uses something unknown, divides by zero or recurses too deep.
/// `gfx90a` selects the unified-register rule of `totalnumvgprs`.
pub fn eval(text: &str, symbols: &HashMap<String, String>, gfx90a: bool) -> Option<i64> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        symbols,
        gfx90a,
        depth: 0,
    };
    let v = p.expr(0)?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    symbols: &'a HashMap<String, String>,
    gfx90a: bool,
    depth: u32,
}

/// Binary operators by precedence (higher binds tighter), as LLVM's
/// `getGNUBinOpPrecedence` (`MC/MCParser/AsmParser.cpp`): `||` 1, `&&` 2,
/// comparisons 3, `+ -` 4, `| ^ &` 5, `* / % << >>` 6.
fn binop(s: &[u8]) -> Option<(&'static str, u8)> {
    const OPS: [(&str, u8); 18] = [
        ("||", 1),
        ("&&", 2),
        ("==", 3),
        ("!=", 3),
        ("<<", 6),
        (">>", 6),
        ("<=", 3),
        (">=", 3),
        ("<", 3),
        (">", 3),
        ("+", 4),
        ("-", 4),
        ("|", 5),
        ("^", 5),
        ("&", 5),
        ("*", 6),
        ("/", 6),
        ("%", 6),
    ];
    OPS.iter()
        .find(|(op, _)| s.starts_with(op.as_bytes()))
        .map(|&(op, p)| (op, p))
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn expr(&mut self, min_prec: u8) -> Option<i64> {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let mut lhs = self.unary()?;
        loop {
            self.ws();
            let Some((op, prec)) = binop(&self.s[self.i..]) else {
                break;
            };
            if prec < min_prec {
                break;
            }
            self.i += op.len();
            let rhs = self.expr(prec + 1)?;
            lhs = match op {
                "+" => lhs.checked_add(rhs)?,
                "-" => lhs.checked_sub(rhs)?,
                "*" => lhs.checked_mul(rhs)?,
                "/" => lhs.checked_div(rhs)?,
                "%" => lhs.checked_rem(rhs)?,
                "<<" => lhs.checked_shl(u32::try_from(rhs).ok()?)?,
                ">>" => lhs.checked_shr(u32::try_from(rhs).ok()?)?,
                "&" => lhs & rhs,
                "|" => lhs | rhs,
                "^" => lhs ^ rhs,
                "&&" => i64::from(lhs != 0 && rhs != 0),
                "||" => i64::from(lhs != 0 || rhs != 0),
                "==" => i64::from(lhs == rhs),
                "!=" => i64::from(lhs != rhs),
                "<" => i64::from(lhs < rhs),
                ">" => i64::from(lhs > rhs),
                "<=" => i64::from(lhs <= rhs),
                ">=" => i64::from(lhs >= rhs),
                _ => return None,
            };
        }
        self.depth -= 1;
        Some(lhs)
    }

    fn unary(&mut self) -> Option<i64> {
        self.ws();
        match self.s.get(self.i)? {
            b'-' => {
                self.i += 1;
                self.unary()?.checked_neg()
            }
            b'~' => {
                self.i += 1;
                Some(!self.unary()?)
            }
            b'!' => {
                self.i += 1;
                Some(i64::from(self.unary()? == 0))
            }
            b'+' => {
                self.i += 1;
                self.unary()
            }
            b'(' => {
                self.i += 1;
                let v = self.expr(0)?;
                self.ws();
                (self.s.get(self.i) == Some(&b')')).then(|| self.i += 1)?;
                Some(v)
            }
            c if c.is_ascii_digit() => self.number(),
            _ => self.name(),
        }
    }

    fn number(&mut self) -> Option<i64> {
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_alphanumeric() {
            self.i += 1;
        }
        let t = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        crate::base::parse::parse_int(t)
    }

    fn name(&mut self) -> Option<i64> {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"._$@".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        if start == self.i {
            return None;
        }
        let name = std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .to_string();
        self.ws();
        if self.s.get(self.i) == Some(&b'(') {
            self.i += 1;
            let mut args = vec![];
            loop {
                args.push(self.expr(0)?);
                self.ws();
                match self.s.get(self.i)? {
                    b',' => self.i += 1,
                    b')' => {
                        self.i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
            return match (name.as_str(), args.as_slice()) {
                ("max", a) if !a.is_empty() => a.iter().copied().max(),
                ("or", a) if !a.is_empty() => Some(a.iter().fold(0, |x, y| x | y)),
                ("alignto", [x, a]) if *a > 0 => Some((x + a - 1) / a * a),
                ("totalnumvgprs", [agpr, vgpr]) => Some(if self.gfx90a && *agpr > 0 {
                    (vgpr + 3) / 4 * 4 + agpr
                } else {
                    *agpr.max(vgpr)
                }),
                _ => None,
            };
        }
        let value = self.symbols.get(&name)?.clone();
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let v = eval_nested(&value, self.symbols, self.gfx90a, self.depth)?;
        self.depth -= 1;
        Some(v)
    }
}

fn eval_nested(
    text: &str,
    symbols: &HashMap<String, String>,
    gfx90a: bool,
    depth: u32,
) -> Option<i64> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        symbols,
        gfx90a,
        depth,
    };
    let v = p.expr(0)?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_llvm_resource_expressions() {
        let mut sym = HashMap::new();
        sym.insert(".Lk.num_vgpr".to_string(), "9".to_string());
        sym.insert(".Lk.num_agpr".to_string(), "32".to_string());
        sym.insert("loop".to_string(), "loop+1".to_string());
        let e = |t: &str| eval(t, &sym, true);
        assert_eq!(e("112"), Some(112));
        assert_eq!(e("0x70"), Some(112));
        assert_eq!(
            e("max(totalnumvgprs(.Lk.num_agpr, .Lk.num_vgpr), 1, 0)"),
            Some(44)
        );
        assert_eq!(
            eval("totalnumvgprs(.Lk.num_agpr, .Lk.num_vgpr)", &sym, false),
            Some(32)
        );
        assert_eq!(e("alignto(.Lk.num_vgpr, 4)"), Some(12));
        assert_eq!(e("((1+2)*4)>>1"), Some(6));
        // GNU precedence: `|` binds tighter than `+`, shifts tighter than `+`.
        assert_eq!(e("1 + 1 | 2"), Some(4));
        assert_eq!(e("1 + 1 << 2"), Some(5));
        assert_eq!(e("or(1, 0, 4)"), Some(5));
        assert_eq!(e("unknown + 1"), None);
        assert_eq!(e("loop"), None);
        assert_eq!(e("1/0"), None);
        assert_eq!(e("instprefsize(1)"), None);
    }
}
