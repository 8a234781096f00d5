//! The hazards of the unpatched source (or of a `--baseline` file), and how a
//! hazard of the patched code matches one of them: new, inherited or worse.

use super::*;

/// A hazard's place for matching across two versions of a kernel: the
/// positions of its producer and reader, its register or resource, its
/// counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct HazardKey {
    pub(super) producer: (PathBuf, usize),
    pub(super) line: (PathBuf, usize),
    pub(super) register: String,
    pub(super) counter: Counter,
}

/// An ALU dependency hazard's place for matching across two versions.
pub(super) type AluKey = ((PathBuf, usize), (PathBuf, usize), alu::AluCounter);

/// How bad a hazard is where it is: operations at least as old as its
/// producer that may still be outstanding at the read (a looser wait raises
/// it), whether the counter is out of order there, and the value of the last
/// wait on its counter before the read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Slack {
    pub(super) older: u32,
    pub(super) out_of_order: bool,
    pub(super) wait: Option<u32>,
}

impl Slack {
    fn of(h: &Hazard) -> Slack {
        Slack {
            older: h.outstanding.saturating_sub(h.newer),
            out_of_order: h.out_of_order,
            wait: h.last_wait.map(|(_, v)| v),
        }
    }

    /// A looser wait before the same read: more old operations outstanding,
    /// out of order where it was not, or a larger (or no) last wait.
    fn worse_than(self, base: Slack) -> bool {
        let looser_wait = match (self.wait, base.wait) {
            (Some(a), Some(b)) => a > b,
            (None, Some(_)) => true,
            _ => false,
        };
        self.older > base.older || (self.out_of_order && !base.out_of_order) || looser_wait
    }
}

/// The hazards of the unpatched source (or of a `--baseline` file): a hazard
/// of the patched code found here, with no looser wait, is *inherited*.
pub struct Baseline {
    /// Every hazard is inherited (the code is the unpatched source itself).
    pub(super) everything: bool,
    pub(super) hazards: HashMap<HazardKey, Slack>,
    /// The SCHED_MODE_2 ALU dependency hazards ([`super::alu`]): producer
    /// and consumer positions and the counter.
    pub(super) alu: std::collections::HashSet<AluKey>,
    /// Patched line → baseline line (0-based) by diff alignment; `None`: by
    /// the lines' origins (a patched dump and its dump).
    pub(super) aligned: Option<Vec<Option<usize>>>,
    /// What to lint to list the inherited hazards (the dump's path).
    pub(super) source: String,
}

/// The outcome of matching one hazard against a [`Baseline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Inheritance {
    New,
    Inherited,
    Worse(Slack),
}

impl Baseline {
    /// The code is its own unpatched source: every hazard is inherited.
    pub fn unpatched(source: &str) -> Baseline {
        Baseline {
            everything: true,
            hazards: HashMap::new(),
            alu: Default::default(),
            aligned: None,
            source: source.to_string(),
        }
    }

    /// The hazards of `original` (the unpatched dump, retargeted as the
    /// patched code is), matched by the dump lines the patched code's lines
    /// come from.
    pub fn of_original(original: &Document, target: &TargetId) -> Baseline {
        let source = (0..original.len())
            .find_map(|i| original.origin(i).and_then(Origin::file_line))
            .map(|(f, _)| f.display().to_string())
            .unwrap_or_else(|| "the dump".into());
        let pos = |i: usize| {
            original
                .origin(i)
                .and_then(Origin::file_line)
                .map(|(f, l)| (f.to_path_buf(), l))
        };
        Baseline {
            everything: false,
            hazards: baseline_hazards(original, target, &pos),
            alu: baseline_alu(original, target, &pos),
            aligned: None,
            source,
        }
    }

    /// The hazards of `base` (any file), with the lines of `doc` matched to
    /// those of `base` by a diff alignment (equal lines in the longest
    /// common subsequence, a Patience diff: `base::align`).
    pub fn aligned(doc: &Document, base: &Document, target: &TargetId) -> Baseline {
        let a: Vec<&str> = doc.texts().collect();
        let b: Vec<&str> = base.texts().collect();
        let map = crate::base::align::align(&a, &b).a_to_b;
        let here = PathBuf::from("<baseline>");
        let pos = |i: usize| Some((here.clone(), i));
        let source = (0..base.len())
            .find_map(|i| base.origin(i).and_then(Origin::file_line))
            .map(|(f, _)| f.display().to_string())
            .unwrap_or_else(|| "the baseline".into());
        Baseline {
            everything: false,
            hazards: baseline_hazards(base, target, &pos),
            alu: baseline_alu(base, target, &pos),
            aligned: Some(map),
            source,
        }
    }

    fn position(&self, doc: &Document, i: usize) -> Option<(PathBuf, usize)> {
        match &self.aligned {
            Some(map) => map
                .get(i)
                .copied()
                .flatten()
                .map(|j| (PathBuf::from("<baseline>"), j)),
            None => doc
                .origin(i)
                .and_then(Origin::file_line)
                .map(|(f, l)| (f.to_path_buf(), l)),
        }
    }

    /// Is this SCHED_MODE_2 ALU hazard in the baseline (the same producer,
    /// consumer and counter)?
    pub(super) fn inherits_alu(&self, doc: &Document, h: &alu::AluHazard) -> bool {
        if self.everything {
            return true;
        }
        match (self.position(doc, h.producer), self.position(doc, h.line)) {
            (Some(p), Some(l)) => self.alu.contains(&(p, l, h.access.counter())),
            _ => false,
        }
    }

    pub(super) fn classify(&self, doc: &Document, h: &Hazard) -> Inheritance {
        if self.everything {
            return Inheritance::Inherited;
        }
        let (Some(producer), Some(line)) =
            (self.position(doc, h.producer), self.position(doc, h.line))
        else {
            return Inheritance::New;
        };
        let key = HazardKey {
            producer,
            line,
            register: h.register.clone(),
            counter: h.counter,
        };
        match self.hazards.get(&key) {
            None => Inheritance::New,
            Some(&base) if Slack::of(h).worse_than(base) => Inheritance::Worse(base),
            Some(_) => Inheritance::Inherited,
        }
    }
}

/// Every hazard of `doc` (LDS DMA ones not proven disjoint included), by
/// [`HazardKey`] with positions from `pos`.
pub(super) fn baseline_hazards(
    doc: &Document,
    target: &TargetId,
    pos: &dyn Fn(usize) -> Option<(PathBuf, usize)>,
) -> HashMap<HazardKey, Slack> {
    let asm = doc.asm();
    let mut out = HashMap::new();
    for k in kernels_of(asm, doc.kernels(), target) {
        for h in k.hazards(&analysis::Overrides::default()) {
            if h.pending == [model::LDS_DMA]
                && lds::dma_alias(asm, &k.cfg, &k.model, &h, &k.dmas()) == lds::DmaAlias::Disjoint
            {
                continue;
            }
            if let (Some(producer), Some(line)) = (pos(h.producer), pos(h.line)) {
                let key = HazardKey {
                    producer,
                    line,
                    register: h.register.clone(),
                    counter: h.counter,
                };
                let slack = Slack::of(&h);
                out.entry(key)
                    .and_modify(|s: &mut Slack| {
                        if slack.worse_than(*s) {
                            *s = slack;
                        }
                    })
                    .or_insert(slack);
            }
        }
    }
    out
}

/// Every SCHED_MODE_2 ALU dependency hazard of `doc`, by [`AluKey`] with
/// positions from `pos`.
pub(super) fn baseline_alu(
    doc: &Document,
    target: &TargetId,
    pos: &dyn Fn(usize) -> Option<(PathBuf, usize)>,
) -> std::collections::HashSet<AluKey> {
    let asm = doc.asm();
    let mut out = std::collections::HashSet::new();
    if target.processor.generation < gcn_embed::Generation::Gfx12 {
        return out;
    }
    for k in kernels_of(asm, doc.kernels(), target) {
        let Some(ak) = alu::prepare(asm, &k.cfg, &k.model) else {
            continue;
        };
        for h in ak.hazards() {
            if let (Some(p), Some(l)) = (pos(h.producer), pos(h.line)) {
                out.insert((p, l, h.access.counter()));
            }
        }
    }
    out
}
