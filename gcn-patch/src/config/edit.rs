//! Editing `kernels.toml` in place, as `cargo add` edits `Cargo.toml`: one
//! [`toml_edit`] document, changed key by key, so that every comment, blank
//! line, key order, quoting style and line ending the user wrote stays as it
//! was. `gcn-patch import` adds kernels and sources, `pin` rewrites pins,
//! `save` and `drop` edit a source's `patches`, `accept` sets `accepted`.
//!
//! Kernels and sources are named by their position: the `n`-th `[[kernel]]`
//! of the file is [`Manifest::kernels`]`[n]`, and its `m`-th
//! `[[kernel.source]]` is that kernel's `sources[m]` (a manifest that loads
//! has them in file order). An edit never writes the file: the caller checks
//! the new text (with [`Manifest::parse`]) and writes it once, atomically.

use std::path::{Path, PathBuf};

use toml_edit::{
    Array, ArrayOfTables, DocumentMut, InlineTable, Item, Key, Table, TableLike, Value,
};

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::config::manifest::{Manifest, Src};
use crate::config::triton::TritonKernel;

/// A `kernels.toml` being edited.
#[derive(Debug, Clone)]
pub struct ManifestEdit {
    /// Where the manifest is (shown in diagnostics).
    path: PathBuf,
    doc: DocumentMut,
    /// The comment the first table of a new manifest gets (none once the
    /// file has a table).
    header: Option<String>,
    /// The file's lines end in CRLF: so do the lines the edits add.
    crlf: bool,
}

/// A `[[kernel]]` to add, with its first `[[kernel.source]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewKernel {
    /// `name`.
    pub name: String,
    /// `iree-executables` (left out when empty).
    pub iree_executables: Vec<String>,
    /// Comment lines written above `[[kernel]]` (each starting with `#`,
    /// ending with a newline).
    pub comment: Option<String>,
    /// Its first source.
    pub source: NewSource,
}

/// A `[[kernel.source]]` to add, as `gcn-patch import` writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSource {
    /// `asm`, relative to the manifest, `/`-separated.
    pub asm: String,
    /// `sha256`.
    pub sha256: String,
    /// `targets`.
    pub targets: Vec<String>,
    /// `symbols`.
    pub symbols: Vec<String>,
    /// `imported-from`.
    pub imported_from: String,
    /// `imported-sha256` (lifted binaries).
    pub imported_sha256: Option<String>,
    /// `triton = { … }` (Triton dumps).
    pub triton: Option<TritonKernel>,
}

fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().map(String::as_str).collect::<Array>())
}

impl NewSource {
    /// The table, keys in the order import writes them.
    fn table(&self) -> Table {
        let mut t = Table::new();
        t.insert("asm", Item::Value(self.asm.as_str().into()));
        t.insert("sha256", Item::Value(self.sha256.as_str().into()));
        t.insert("targets", Item::Value(strings(&self.targets)));
        t.insert("symbols", Item::Value(strings(&self.symbols)));
        t.insert(
            "imported-from",
            Item::Value(self.imported_from.as_str().into()),
        );
        if let Some(s) = &self.imported_sha256 {
            t.insert("imported-sha256", Item::Value(s.as_str().into()));
        }
        if let Some(tk) = &self.triton {
            t.insert("triton", Item::Value(Value::InlineTable(triton_table(tk))));
        }
        t.decor_mut().set_prefix("\n");
        t
    }
}

/// `triton = { kernel = …, hash = …, target = …, shared = …, num-warps = …, warp-size = … }`.
fn triton_table(t: &TritonKernel) -> InlineTable {
    let mut out = InlineTable::new();
    out.insert("kernel", t.kernel.as_str().into());
    if let Some(h) = &t.hash {
        out.insert("hash", h.as_str().into());
    }
    out.insert("target", t.target.as_str().into());
    for (k, v) in [
        ("shared", t.shared),
        ("num-warps", t.num_warps),
        ("warp-size", t.warp_size),
    ] {
        if let Some(v) = v {
            out.insert(k, i64::from(v).into());
        }
    }
    out
}

/// A value with the decor (spaces, trailing comment) of the one it replaces.
fn keep_decor(old: &Value, new: impl Into<Value>) -> Value {
    let mut new = new.into();
    *new.decor_mut() = old.decor().clone();
    new
}

impl ManifestEdit {
    /// Start editing the manifest text `text` of the file at `path`.
    pub fn parse(text: &str, path: &Path) -> Result<ManifestEdit, Diagnostics> {
        let doc = text.parse::<DocumentMut>().map_err(|e| {
            let shown = PathBuf::from(path.file_name().unwrap_or(path.as_os_str()));
            let mut d = Diagnostic::error(
                Code::ManifestInvalid,
                format!("invalid manifest: {}", e.message().trim()),
            )
            .with_help(
                "fix the TOML at this position (schema: docs/src/reference/kernels-toml.md)",
            );
            if let Some(span) = e.span() {
                d = d.at(Src::new(text, shown).loc(span));
            }
            Diagnostics::from(d)
        })?;
        Ok(ManifestEdit {
            path: path.to_path_buf(),
            doc,
            header: None,
            crlf: text.contains("\r\n"),
        })
    }

    /// Start editing a loaded manifest.
    pub fn of(manifest: &Manifest) -> Result<ManifestEdit, Diagnostics> {
        ManifestEdit::parse(&manifest.text, &manifest.path)
    }

    /// A new, empty manifest at `path`; `header` (comment lines) goes above
    /// its first table.
    pub fn new(path: &Path, header: &str) -> ManifestEdit {
        ManifestEdit {
            path: path.to_path_buf(),
            doc: DocumentMut::new(),
            header: Some(header.to_string()),
            crlf: false,
        }
    }

    /// The manifest text as edited.
    pub fn text(&self) -> String {
        let text = self.doc.to_string();
        if !self.crlf {
            return text;
        }
        // toml_edit ends the lines it writes with LF.
        let mut out = String::with_capacity(text.len() + text.len() / 32);
        let mut last = '\0';
        for c in text.chars() {
            if c == '\n' && last != '\r' {
                out.push('\r');
            }
            out.push(c);
            last = c;
        }
        out
    }

    /// The manifest's file (as given).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn refuse(&self, what: &str) -> Diagnostic {
        Diagnostic::error(
            Code::ManifestChanged,
            format!("cannot edit {}: {what}", self.path.display()),
        )
        .with_help("write kernels and sources as `[[kernel]]` and `[[kernel.source]]` tables (schema: docs/src/reference/kernels-toml.md), then run the command again")
    }

    fn refuse_patches(&self) -> Diagnostic {
        Diagnostic::error(
            Code::PatchListNotEditable,
            format!(
                "cannot edit {}: a source's `patches` is not an array of strings",
                self.path.display()
            ),
        )
        .with_help(
            "write the list as `patches = [\"a.diff\", \"b.diff\"]` and run the command again",
        )
    }

    /// The `[[kernel]]` array, created if absent.
    fn kernel_array(&mut self) -> Result<&mut ArrayOfTables, Diagnostic> {
        let refuse = self.refuse("`kernel` is not an array of `[[kernel]]` tables");
        self.doc
            .entry("kernel")
            .or_insert(Item::ArrayOfTables(ArrayOfTables::new()))
            .as_array_of_tables_mut()
            .ok_or(refuse)
    }

    /// The `kernel`-th kernel (a `[[kernel]]` table or an inline one).
    fn kernel_mut(&mut self, kernel: usize) -> Result<&mut dyn TableLike, Diagnostic> {
        let refuse = self.refuse(&format!("it has no kernel number {}", kernel + 1));
        nth_table(self.doc.get_mut("kernel"), kernel).ok_or(refuse)
    }

    /// The `source`-th source of the `kernel`-th kernel.
    fn source_mut(
        &mut self,
        kernel: usize,
        source: usize,
    ) -> Result<&mut dyn TableLike, Diagnostic> {
        let refuse = self.refuse(&format!(
            "kernel number {} has no source number {}",
            kernel + 1,
            source + 1
        ));
        nth_table(self.kernel_mut(kernel)?.get_mut("source"), source).ok_or(refuse)
    }

    /// Append a `[[kernel]]` with its first source; returns its position.
    pub fn add_kernel(&mut self, new: &NewKernel) -> Result<usize, Diagnostic> {
        let mut k = Table::new();
        let mut prefix = String::from("\n");
        if let Some(header) = self.header.take() {
            if self.doc.as_table().is_empty() {
                prefix = header;
                if !prefix.ends_with('\n') {
                    prefix.push('\n');
                }
                prefix.push('\n');
            }
        }
        if let Some(c) = &new.comment {
            prefix.push_str(c);
        }
        k.decor_mut().set_prefix(prefix);
        k.insert("name", Item::Value(new.name.as_str().into()));
        if !new.iree_executables.is_empty() {
            k.insert(
                "iree-executables",
                Item::Value(strings(&new.iree_executables)),
            );
        }
        let mut sources = ArrayOfTables::new();
        sources.push(new.source.table());
        k.insert("source", Item::ArrayOfTables(sources));
        let kernels = self.kernel_array()?;
        kernels.push(k);
        Ok(kernels.len() - 1)
    }

    /// Append a `[[kernel.source]]` to the `kernel`-th kernel (after its
    /// other sources, before the next `[[kernel]]`).
    pub fn add_source(&mut self, kernel: usize, new: &NewSource) -> Result<(), Diagnostic> {
        let refuse =
            self.refuse("a kernel's `source` is not an array of `[[kernel.source]]` tables");
        let k = self.kernel_mut(kernel)?;
        match k
            .entry("source")
            .or_insert(Item::ArrayOfTables(ArrayOfTables::new()))
        {
            Item::ArrayOfTables(a) => {
                a.push(new.table());
                Ok(())
            }
            _ => Err(refuse),
        }
    }

    /// The comment lines above the `kernel`-th `[[kernel]]` header.
    pub fn kernel_comment(&self, kernel: usize) -> Option<&str> {
        let a = self.doc.get("kernel")?.as_array_of_tables()?;
        a.get(kernel)?.decor().prefix()?.as_str()
    }

    /// The `source`-th source of the `kernel`-th kernel, to read.
    fn source(&self, kernel: usize, source: usize) -> Option<&dyn TableLike> {
        let k: &dyn TableLike = match self.doc.get("kernel")? {
            Item::ArrayOfTables(a) => a.get(kernel)?,
            Item::Value(Value::Array(a)) => a.get(kernel)?.as_inline_table()?,
            _ => return None,
        };
        match k.get("source")? {
            Item::ArrayOfTables(a) => Some(a.get(source)?),
            Item::Value(Value::Array(a)) => Some(a.get(source)?.as_inline_table()?),
            _ => None,
        }
    }

    /// A source's `sha256` as written (malformed or not); none when absent
    /// or not a string.
    pub fn pin(&self, kernel: usize, source: usize) -> Option<String> {
        self.source(kernel, source)?
            .get("sha256")?
            .as_str()
            .map(str::to_string)
    }

    /// Set the `sha256` pin of a source: its value replaced in place (the
    /// line's comment kept), or, when it has none, the key added after `asm`.
    pub fn set_pin(
        &mut self,
        kernel: usize,
        source: usize,
        sha256: &str,
    ) -> Result<(), Diagnostic> {
        let s = self.source_mut(kernel, source)?;
        if let Some(Item::Value(old)) = s.get_mut("sha256") {
            *old = keep_decor(old, sha256);
            return Ok(());
        }
        s.remove("sha256");
        insert_after(s, "asm", "sha256", Value::from(sha256));
        Ok(())
    }

    /// Append `rel` to a source's `patches` (the key added after `sha256`
    /// when there is none).
    pub fn push_patch(
        &mut self,
        kernel: usize,
        source: usize,
        rel: &str,
    ) -> Result<(), Diagnostic> {
        let refuse = self.refuse_patches();
        let s = self.source_mut(kernel, source)?;
        match s.get_mut("patches") {
            Some(Item::Value(Value::Array(a))) => {
                let multiline = a.iter().any(|v| {
                    v.decor()
                        .prefix()
                        .and_then(|p| p.as_str())
                        .is_some_and(|p| p.contains('\n'))
                });
                if multiline {
                    push_on_own_line(a, rel);
                } else {
                    a.push(rel);
                }
                Ok(())
            }
            Some(_) => Err(refuse),
            None => {
                let after = if s.contains_key("sha256") {
                    "sha256"
                } else {
                    "asm"
                };
                insert_after(
                    s,
                    after,
                    "patches",
                    Value::Array([rel].into_iter().collect()),
                );
                Ok(())
            }
        }
    }

    /// Take `rel` out of a source's `patches` (the key removed when that
    /// leaves it empty). Paths compare with `\` read as `/`.
    pub fn remove_patch(
        &mut self,
        kernel: usize,
        source: usize,
        rel: &str,
    ) -> Result<(), Diagnostic> {
        let refuse = self.refuse_patches();
        let want = rel.replace('\\', "/");
        let s = self.source_mut(kernel, source)?;
        let Some(Item::Value(Value::Array(a))) = s.get_mut("patches") else {
            return Err(refuse);
        };
        let first_prefix = a.get(0).map(|v| v.decor().clone());
        a.retain(|v| v.as_str().map(|p| p.replace('\\', "/")) != Some(want.clone()));
        if a.is_empty() {
            s.remove("patches");
        } else if let (Some(decor), Some(first)) = (first_prefix, a.get_mut(0)) {
            // The new first item takes the old first item's leading space.
            let suffix = first.decor().suffix().cloned();
            *first.decor_mut() = decor;
            if let Some(suffix) = suffix {
                first.decor_mut().set_suffix(suffix);
            }
        }
        Ok(())
    }

    /// Set a string key of the `kernel`-th kernel (replaced in place, or
    /// added after `name`).
    pub fn set_kernel_string(
        &mut self,
        kernel: usize,
        key: &str,
        value: &str,
    ) -> Result<(), Diagnostic> {
        let k = self.kernel_mut(kernel)?;
        if let Some(Item::Value(old)) = k.get_mut(key) {
            *old = keep_decor(old, value);
            return Ok(());
        }
        k.remove(key);
        insert_after(k, "name", key, Value::from(value));
        Ok(())
    }
}

/// Append `rel` to the array `a` written one item a line: the new item on
/// a line of its own, indented like the last one, and a comment after the
/// last item (which toml_edit keeps after the comma, or in the item's
/// suffix without one) left on that item's line.
fn push_on_own_line(a: &mut Array, rel: &str) {
    let raw =
        |r: Option<&toml_edit::RawString>| r.and_then(|r| r.as_str()).unwrap_or("").to_string();
    let had_comma = a.trailing_comma();
    let mut indent = String::from("  ");
    if let Some(last) = a.iter_mut().last() {
        let prefix = raw(last.decor().prefix());
        indent = prefix[prefix.rfind('\n').map_or(0, |i| i + 1)..].to_string();
        if !had_comma {
            // What follows the last item goes after its (new) comma.
            let suffix = raw(last.decor().suffix());
            last.decor_mut().set_suffix("");
            let trailing = raw(Some(a.trailing()));
            a.set_trailing(format!("{suffix}{trailing}"));
            a.set_trailing_comma(true);
        }
    }
    let trailing = raw(Some(a.trailing()));
    let (head, tail) = match trailing.rfind('\n') {
        Some(i) => (&trailing[..=i], &trailing[i + 1..]),
        None => ("", trailing.as_str()),
    };
    let head = if head.is_empty() { "\n" } else { head };
    let mut v = Value::from(rel);
    v.decor_mut().set_prefix(format!("{head}{indent}"));
    v.decor_mut().set_suffix("");
    a.set_trailing(format!("\n{tail}"));
    a.push_formatted(v);
    a.set_trailing_comma(had_comma);
}

/// Insert `key = value` right after the key `after` of `t` (at the end if
/// `t` has no such key), keeping every other key where it was.
fn insert_after(t: &mut dyn TableLike, after: &str, key: &str, value: Value) {
    let keys: Vec<String> = t.iter().map(|(k, _)| k.to_string()).collect();
    let Some(at) = keys.iter().position(|k| k == after) else {
        t.insert(key, Item::Value(value));
        return;
    };
    // Take the keys after `after` out (with their formatting), add the new
    // one, put them back.
    let mut moved: Vec<(Key, Item)> = Vec::new();
    for k in &keys[at + 1..] {
        let formatted = t.key(k).cloned();
        if let (Some(formatted), Some(item)) = (formatted, t.remove(k)) {
            moved.push((formatted, item));
        }
    }
    t.insert(key, Item::Value(value));
    for (k, item) in moved {
        match t.entry_format(&k) {
            toml_edit::Entry::Vacant(v) => {
                v.insert(item);
            }
            toml_edit::Entry::Occupied(mut o) => {
                o.insert(item);
            }
        }
    }
}

/// The `n`-th table of an array of tables (`[[x]]`) or of an array of
/// inline tables (`x = [{…}]`).
fn nth_table(item: Option<&mut Item>, n: usize) -> Option<&mut dyn TableLike> {
    match item? {
        Item::ArrayOfTables(a) => a.get_mut(n).map(|t| t as &mut dyn TableLike),
        Item::Value(Value::Array(a)) => a
            .get_mut(n)
            .and_then(Value::as_inline_table_mut)
            .map(|t| t as &mut dyn TableLike),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(text: &str) -> ManifestEdit {
        ManifestEdit::parse(text, Path::new("kernels.toml")).unwrap()
    }

    #[test]
    fn a_pin_keeps_its_comment_and_a_new_one_goes_after_asm() {
        let mut e = edit(
            "# top\n[[kernel]]\nname = \"k\"  # the kernel\n\n[[kernel.source]]\nasm = \"a.s\"   # dump\nsha256 = \"00\"  # old pin\ntargets = [\"gfx942\"]\n\n[[kernel.source]]\nasm = \"b.s\"\ntargets = [\"gfx950\"]\n",
        );
        e.set_pin(0, 0, "ab").unwrap();
        e.set_pin(0, 1, "cd").unwrap();
        assert_eq!(
            e.text(),
            "# top\n[[kernel]]\nname = \"k\"  # the kernel\n\n[[kernel.source]]\nasm = \"a.s\"   # dump\nsha256 = \"ab\"  # old pin\ntargets = [\"gfx942\"]\n\n[[kernel.source]]\nasm = \"b.s\"\nsha256 = \"cd\"\ntargets = [\"gfx950\"]\n"
        );
    }

    #[test]
    fn patches_are_appended_and_removed_in_place() {
        let text = "[[kernel]]\nname = \"k\"\n\n[[kernel.source]]\nasm = \"a.s\"\nsha256 = \"ab\"\npatches = [\n  \"p/1.diff\",  # first\n]\n";
        let mut e = edit(text);
        e.push_patch(0, 0, "p/2.diff").unwrap();
        assert_eq!(
            e.text(),
            text.replace("# first\n", "# first\n  \"p/2.diff\",\n")
        );
        // Without a trailing comma, a comment after the last item.
        let mut e = edit(&text.replace("\"p/1.diff\",  # first", "\"p/1.diff\"  # first"));
        e.push_patch(0, 0, "p/2.diff").unwrap();
        assert_eq!(
            e.text(),
            text.replace("# first\n", "# first\n  \"p/2.diff\"\n")
        );
        e.remove_patch(0, 0, "p/1.diff").unwrap();
        e.remove_patch(0, 0, "p/2.diff").unwrap();
        assert!(!e.text().contains("patches"), "{}", e.text());
        e.push_patch(0, 0, "p/3.diff").unwrap();
        assert_eq!(
            e.text(),
            "[[kernel]]\nname = \"k\"\n\n[[kernel.source]]\nasm = \"a.s\"\nsha256 = \"ab\"\npatches = [\"p/3.diff\"]\n"
        );
    }

    #[test]
    fn a_source_goes_to_its_kernel_and_a_kernel_to_the_end() {
        let text = "# header\n\n[defaults]\ntargets = [\"gfx942\"]\n\n[[kernel]]\nname = \"a\"\n\n[[kernel.source]]\nasm = \"a.s\"\n\n# next one\n[[kernel]]\nname = \"b\"\n\n[[kernel.source]]\nasm = \"b.s\"\n";
        let mut e = edit(text);
        let source = NewSource {
            asm: "asm/gfx950/a.s".into(),
            sha256: "ff".into(),
            targets: vec!["gfx950".into()],
            symbols: vec!["a".into()],
            imported_from: "../a.s".into(),
            imported_sha256: None,
            triton: None,
        };
        e.add_source(0, &source).unwrap();
        e.add_kernel(&NewKernel {
            name: "c".into(),
            iree_executables: vec![],
            comment: Some("# c\n".into()),
            source: source.clone(),
        })
        .unwrap();
        let new_source = "\n[[kernel.source]]\nasm = \"asm/gfx950/a.s\"\nsha256 = \"ff\"\ntargets = [\"gfx950\"]\nsymbols = [\"a\"]\nimported-from = \"../a.s\"\n";
        assert_eq!(
            e.text(),
            format!("# header\n\n[defaults]\ntargets = [\"gfx942\"]\n\n[[kernel]]\nname = \"a\"\n\n[[kernel.source]]\nasm = \"a.s\"\n{new_source}\n# next one\n[[kernel]]\nname = \"b\"\n\n[[kernel.source]]\nasm = \"b.s\"\n\n# c\n[[kernel]]\nname = \"c\"\n{new_source}")
        );
    }

    #[test]
    fn a_new_manifest_starts_with_its_header() {
        let mut e = ManifestEdit::new(Path::new("kernels.toml"), "# made\n");
        let source = NewSource {
            asm: "asm/gfx942/x.s".into(),
            sha256: "ff".into(),
            targets: vec!["gfx942".into()],
            symbols: vec!["x".into()],
            imported_from: "x.s".into(),
            imported_sha256: Some("ee".into()),
            triton: None,
        };
        e.add_kernel(&NewKernel {
            name: "x".into(),
            iree_executables: vec!["e".into()],
            comment: None,
            source,
        })
        .unwrap();
        assert_eq!(e.text(), "# made\n\n[[kernel]]\nname = \"x\"\niree-executables = [\"e\"]\n\n[[kernel.source]]\nasm = \"asm/gfx942/x.s\"\nsha256 = \"ff\"\ntargets = [\"gfx942\"]\nsymbols = [\"x\"]\nimported-from = \"x.s\"\nimported-sha256 = \"ee\"\n");
    }

    #[test]
    fn crlf_stays_crlf() {
        let text = "[[kernel]]\r\nname = \"k\"\r\n\r\n[[kernel.source]]\r\nasm = \"a.s\"\r\nsha256 = \"00\" # pin\r\n";
        let mut e = edit(text);
        e.set_pin(0, 0, "ab").unwrap();
        assert_eq!(e.text(), text.replace("\"00\"", "\"ab\""));
    }
}
