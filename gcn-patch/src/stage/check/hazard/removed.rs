//! The dump's waits a patch removed or changed, to explain a hazard by the wait
//! that used to be there.

use super::*;

/// The dump's wait instructions that are not in the patched document (by
/// file and line), per file, sorted by line: a patch or rule removed or
/// changed them. They are copied out of the dump (few), so the dump can be
/// dropped before the analysis. Built once per check: per hazard it would
/// make the check quadratic (every hazard scanning both whole documents).
pub(crate) struct RemovedWaits(HashMap<PathBuf, Vec<RemovedWait>>);

/// One wait of the dump that the patched document lacks.
pub(super) struct RemovedWait {
    /// 1-based line in the dump.
    pub(super) line: usize,
    /// The wait as parsed, and its text.
    pub(super) inst: Instruction,
    pub(super) text: String,
}

impl RemovedWaits {
    /// The waits of `original` (the dump) whose file and line no line of
    /// `doc` (the patched asm) comes from.
    pub(crate) fn new(doc: &Document, original: &Document) -> Self {
        // The dump's waits by line number (then file): looking up each
        // patched line's origin costs a hash of a number, not of a path.
        let mut waits: HashMap<usize, Vec<(&Path, usize)>> = HashMap::new();
        for i in 0..original.len() {
            if !original
                .instruction(i)
                .is_some_and(|inst| is_wait(&inst.mnemonic))
            {
                continue;
            }
            if let Some((file, line)) = original.origin(i).and_then(|o| o.file_line()) {
                waits.entry(line).or_default().push((file, i));
            }
        }
        for i in 0..doc.len() {
            if let Some((file, line)) = doc.origin(i).and_then(|o| o.file_line()) {
                if let Some(v) = waits.get_mut(&line) {
                    v.retain(|&(f, _)| f != file);
                }
            }
        }
        let mut by_file: HashMap<PathBuf, Vec<RemovedWait>> = HashMap::new();
        for (line, v) in waits {
            for (file, i) in v {
                let Some(inst) = original.instruction(i) else {
                    continue;
                };
                by_file
                    .entry(file.to_path_buf())
                    .or_default()
                    .push(RemovedWait {
                        line,
                        inst: inst.clone(),
                        text: original.text(i).to_string(),
                    });
            }
        }
        for v in by_file.values_mut() {
            v.sort_unstable_by_key(|w| w.line);
            v.shrink_to_fit();
        }
        RemovedWaits(by_file)
    }
}

/// Notes naming the dump's waits between the producer's and the read's
/// dump lines that the patched document no longer has and that would have
/// covered the hazard (a wait on its counter for at most the needed value).
pub(super) fn removed_waits(
    doc: &Document,
    removed: &RemovedWaits,
    k: &KernelAnalysis,
    h: &Hazard,
) -> Vec<String> {
    let (producer, read) = (h.producer, h.line);
    fn file_line(d: &Document, i: usize) -> Option<(&Path, usize)> {
        d.origin(i).and_then(Origin::file_line)
    }
    let (Some((pf, pl)), Some((rf, rl))) = (file_line(doc, producer), file_line(doc, read)) else {
        return vec![];
    };
    if pf != rf || pl >= rl {
        return vec![];
    }
    let Some(waits) = removed.0.get(pf) else {
        return vec![];
    };
    // The removed waits strictly between the load and the read.
    let from = waits.partition_point(|w| w.line <= pl);
    waits[from..]
        .iter()
        .take_while(|w| w.line < rl)
        .filter(|w| {
            wait_values(&w.inst, &w.text, &k.model.limits, &HashMap::new())
                .iter()
                .any(|(c, v, _)| *c == h.counter && *v <= h.needed)
        })
        .map(|w| {
            format!(
                "the dump's `{}` at {}:{}, between that load and this read, is not in the patched asm as written: a patch or rule removed or changed it",
                w.text.trim(),
                pf.display(),
                w.line
            )
        })
        .collect()
}
