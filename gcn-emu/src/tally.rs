//! Executed instructions per engine (hidden: a measurement aid for issue
//! "decode once", not part of the emulator's interface).
//!
//! With `GCN_EMU_ENGINE_TALLY=DIR` in the environment, every wave-instruction
//! executed is counted by mnemonic and by the engine that ran it: the typed
//! executor ([`crate::typed`]) or the reference one ([`crate::exec`]). After
//! each dispatch the process's totals so far are written to
//! `DIR/<pid>.tsv`: a first line `# <executable>`, then
//! `typed|reference<TAB>mnemonic<TAB>count<TAB>cdna|rdna` lines (the last
//! field: the wave's generation, so that a test executable running both
//! is measured apart). Without the variable
//! nothing is counted: the executor asks [`on`] once per scheduling slice.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Counts by (mnemonic, RDNA): (typed, reference).
type Counts = HashMap<(String, bool), [u64; 2]>;

/// The process's totals.
static TOTALS: Mutex<Option<Counts>> = Mutex::new(None);

fn dir() -> Option<&'static std::path::Path> {
    static DIR: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| std::env::var_os("GCN_EMU_ENGINE_TALLY").map(Into::into))
        .as_deref()
}

/// Whether instructions are counted.
pub(crate) fn on() -> bool {
    dir().is_some()
}

/// One slice's counts (of one wave: `rdna` is its generation), merged into
/// the totals when dropped.
#[derive(Default)]
pub(crate) struct Slice(HashMap<String, [u64; 2]>, bool);

impl Slice {
    /// A slice of a wave of an RDNA target (`rdna`) or a CDNA one.
    pub(crate) fn new(rdna: bool) -> Slice {
        Slice(HashMap::new(), rdna)
    }

    /// Count one executed instruction.
    pub(crate) fn count(&mut self, mnemonic: &str, typed: bool) {
        let k = usize::from(!typed);
        match self.0.get_mut(mnemonic) {
            Some(c) => c[k] += 1,
            None => {
                let mut c = [0; 2];
                c[k] = 1;
                self.0.insert(mnemonic.to_string(), c);
            }
        }
    }
}

impl Drop for Slice {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let mut t = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
        let t = t.get_or_insert_with(HashMap::new);
        for (m, c) in self.0.drain() {
            let e = t.entry((m, self.1)).or_default();
            e[0] += c[0];
            e[1] += c[1];
        }
    }
}

/// Write the totals to `DIR/<pid>.tsv` (when counting; errors ignored: a
/// measurement aid never fails a dispatch).
pub(crate) fn write() {
    let Some(dir) = dir() else { return };
    let t = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(t) = t.as_ref() else { return };
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let mut text = format!("# {exe}\n");
    for ((m, rdna), c) in t {
        let generation = if *rdna { "rdna" } else { "cdna" };
        for (engine, n) in [("typed", c[0]), ("reference", c[1])] {
            if n > 0 {
                text.push_str(&format!("{engine}\t{m}\t{n}\t{generation}\n"));
            }
        }
    }
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(dir.join(format!("{}.tsv", std::process::id())), text);
}
