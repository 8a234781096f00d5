//! gfx1250's named barriers: the barrier objects 0..=16 of one workgroup,
//! as LLVM's `llvm/docs/AMDGPUExecutionSynchronization.md` ("GFX12",
//! "Named Barriers Model Extensions" and the code-sequence table) defines
//! them. A pure state machine: the dispatcher feeds it the waves'
//! operations and asks which waiting waves may run on; it runs no
//! instructions itself.
//!
//! * Every object has an *expected count* and an *arrive count* (0 at
//!   first). When an arrive makes the two equal the barrier completes: its
//!   phase advances and the arrive count returns to 0.
//! * `s_barrier_init N` (N an immediate, or the lower half of M0; the
//!   expected count in M0's upper half): sets the expected count, resets
//!   the arrive count. Operating on an object never initialised is
//!   undefined behaviour: refused here.
//! * `s_barrier_join N`: the wave may then wait on N; the *last joined*
//!   object is the one its `s_barrier_wait` waits on, whatever ID that
//!   instruction names. Joining 0 (the NULL barrier) "unjoins".
//! * `s_barrier_leave`: drops the last joined object (its expected count
//!   goes down by one, which can complete the barrier); without a joined
//!   named object (1..=16) it is refused (undefined behaviour).
//! * `s_barrier_signal N` / `_isfirst` (N an immediate or M0 bits 4:0; with M0,
//!   a non-zero M0 bits 22:16 first sets the expected count): arrives; the
//!   `_isfirst` form's SCC is whether the wave is the phase's first
//!   arrival.
//! * `s_barrier_wait`: waits for the completion of the phase the wave
//!   arrived in (its last arrive on the object not yet consumed by a wait),
//!   else of the object's current phase; a no-op on the NULL barrier.
//! * A wave that ends does not drop the objects it joined.
//!
//! Not modelled: `s_get_barrier_state` of a named barrier (no source here
//! gives its bit layout), and anything the document leaves undefined
//! (which is refused with the reason).

/// The highest named barrier ID.
pub const MAX_ID: u32 = 16;

/// One barrier object's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Object {
    /// Set by `s_barrier_init` (the document: operating on an object never
    /// initialised is undefined behaviour).
    pub initialised: bool,
    /// Arrivals that complete a phase.
    pub expected: u32,
    /// Arrivals so far in the current phase.
    pub arrived: u32,
    /// Completed phases.
    pub phase: u64,
}

/// The named barriers of one workgroup and what each wave last did to them.
#[derive(Debug, Clone)]
pub struct NamedBarriers {
    objects: [Object; MAX_ID as usize + 1],
    waves: Vec<WaveState>,
}

#[derive(Debug, Clone, Copy, Default)]
struct WaveState {
    /// The last joined object (0: the NULL barrier; `None`: none).
    joined: Option<u32>,
    /// Per object, the phase of the wave's last arrive a wait has not yet
    /// consumed.
    pending: [Option<u64>; MAX_ID as usize + 1],
    /// The wait the wave blocks in: (object, phase that must complete).
    waiting: Option<(u32, u64)>,
}

/// What an operation the document leaves undefined, or an ID out of
/// range, is refused with.
pub type Refusal = String;

impl NamedBarriers {
    /// The named barriers of a workgroup of `waves` waves, none initialised.
    pub fn new(waves: usize) -> NamedBarriers {
        NamedBarriers {
            objects: [Object::default(); MAX_ID as usize + 1],
            waves: vec![WaveState::default(); waves],
        }
    }

    /// Object `id`'s state (`None` past [`MAX_ID`]).
    pub fn object(&self, id: u32) -> Option<&Object> {
        self.objects.get(id as usize)
    }

    /// The object wave `wave` last joined.
    pub fn joined(&self, wave: usize) -> Option<u32> {
        self.waves.get(wave).and_then(|w| w.joined)
    }

    fn id(id: u32) -> Result<usize, Refusal> {
        if id > MAX_ID {
            return Err(format!(
                "named barrier {id}: gfx1250 has named barriers 0..=16"
            ));
        }
        Ok(id as usize)
    }

    fn wave(&mut self, wave: usize) -> Result<&mut WaveState, Refusal> {
        let n = self.waves.len();
        self.waves
            .get_mut(wave)
            .ok_or_else(|| format!("wave {wave} of a workgroup of {n}"))
    }

    fn complete(o: &mut Object) {
        o.phase += 1;
        o.arrived = 0;
    }

    /// `s_barrier_init id` with `expected` arrivals a phase.
    pub fn init(&mut self, id: u32, expected: u32) -> Result<(), Refusal> {
        let i = Self::id(id)?;
        if i == 0 {
            return Ok(());
        }
        if expected == 0 {
            return Err(format!(
                "s_barrier_init of named barrier {id} with an expected count of 0 (the count is M0[31:16]; it must be positive)"
            ));
        }
        let o = &mut self.objects[i];
        o.initialised = true;
        o.expected = expected;
        o.arrived = 0;
        Ok(())
    }

    /// `s_barrier_join id` by wave `wave`.
    pub fn join(&mut self, wave: usize, id: u32) -> Result<(), Refusal> {
        Self::id(id)?;
        self.wave(wave)?.joined = Some(id);
        Ok(())
    }

    fn live(&self, id: u32, what: &str) -> Result<usize, Refusal> {
        let i = Self::id(id)?;
        if i != 0 && !self.objects[i].initialised {
            return Err(format!(
                "{what} named barrier {id} before any s_barrier_init of it (undefined behaviour)"
            ));
        }
        Ok(i)
    }

    /// `s_barrier_leave` by wave `wave`: drops its last joined object.
    pub fn leave(&mut self, wave: usize) -> Result<(), Refusal> {
        let joined = self.wave(wave)?.joined;
        let id = match joined {
            Some(id) if id != 0 => id,
            Some(_) => return Ok(()),
            None => {
                return Err(
                    "s_barrier_leave without a joined named barrier (undefined behaviour)".into(),
                )
            }
        };
        let i = self.live(id, "s_barrier_leave of")?;
        self.wave(wave)?.joined = None;
        let o = &mut self.objects[i];
        if o.expected == 0 {
            return Err(format!(
                "s_barrier_leave of named barrier {id} whose expected count is already 0 (undefined behaviour)"
            ));
        }
        o.expected -= 1;
        if o.arrived > 0 && o.arrived >= o.expected {
            Self::complete(o);
        }
        Ok(())
    }

    /// `s_barrier_signal id` (`new_expected`: M0 bits 22:16 when non-zero) by
    /// wave `wave`. Returns whether it is the phase's first arrival (the
    /// `_isfirst` form's SCC).
    pub fn signal(
        &mut self,
        wave: usize,
        id: u32,
        new_expected: Option<u32>,
    ) -> Result<bool, Refusal> {
        let i = self.live(id, "s_barrier_signal of")?;
        if i == 0 {
            return Ok(false);
        }
        self.wave(wave)?;
        let o = &mut self.objects[i];
        if let Some(e) = new_expected.filter(|&e| e != 0) {
            if e <= o.arrived {
                return Err(format!(
                    "s_barrier_signal of named barrier {id} sets the expected count to {e}, not above the {} arrivals so far (undefined behaviour)",
                    o.arrived
                ));
            }
            o.expected = e;
        }
        let first = o.arrived == 0;
        let phase = o.phase;
        o.arrived += 1;
        if o.arrived >= o.expected {
            Self::complete(o);
        }
        self.waves[wave].pending[i] = Some(phase);
        Ok(first)
    }

    /// `s_barrier_wait` by wave `wave` on a named barrier: waits on its
    /// last joined object. Returns whether the wave must block
    /// ([`NamedBarriers::released`] then says when it may run on).
    pub fn wait(&mut self, wave: usize) -> Result<bool, Refusal> {
        let id = match self.wave(wave)?.joined {
            Some(0) => return Ok(false),
            Some(id) => id,
            None => {
                return Err(
                    "s_barrier_wait on a named barrier without a joined one (the wait uses the last joined named barrier)".into(),
                )
            }
        };
        let i = self.live(id, "s_barrier_wait on")?;
        let phase = self.objects[i].phase;
        let w = &mut self.waves[wave];
        let target = w.pending[i].take().unwrap_or(phase);
        if phase > target {
            return Ok(false);
        }
        w.waiting = Some((id, target));
        Ok(true)
    }

    /// Whether wave `wave`'s wait has completed (clears it if so; true for
    /// a wave that waits for nothing).
    pub fn released(&mut self, wave: usize) -> bool {
        let Some(w) = self.waves.get_mut(wave) else {
            return true;
        };
        match w.waiting {
            Some((id, target)) if self.objects[id as usize].phase <= target => false,
            _ => {
                w.waiting = None;
                true
            }
        }
    }

    /// The object wave `wave` waits on and that object's state, for a
    /// deadlock report.
    pub fn waiting_on(&self, wave: usize) -> Option<(u32, Object)> {
        let (id, _) = self.waves.get(wave)?.waiting?;
        Some((id, self.objects[id as usize]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_subsets_synchronise_on_their_own_barriers() {
        // Waves 0, 1 on barrier 1; waves 2, 3 on barrier 2.
        let mut b = NamedBarriers::new(4);
        b.init(1, 2).unwrap();
        b.init(2, 2).unwrap();
        for w in 0..4 {
            b.join(w, 1 + w as u32 / 2).unwrap();
        }
        assert!(b.signal(0, 1, None).unwrap(), "the first arrival");
        assert!(b.wait(0).unwrap(), "wave 0 blocks until wave 1 arrives");
        assert!(b.signal(2, 2, None).unwrap());
        assert!(b.wait(2).unwrap());
        assert!(!b.released(0) && !b.released(2));
        assert!(!b.signal(1, 1, None).unwrap(), "not the first");
        assert!(b.released(0), "barrier 1 completed");
        assert!(!b.released(2), "barrier 2 has not");
        assert!(!b.wait(1).unwrap(), "wave 1's own phase already completed");
        b.signal(3, 2, None).unwrap();
        assert!(b.released(2));
        assert_eq!(b.object(1).unwrap().phase, 1);
        assert_eq!(b.object(2).unwrap().arrived, 0);
    }

    #[test]
    fn wait_uses_the_last_joined_barrier_and_leave_drops_it() {
        let mut b = NamedBarriers::new(3);
        b.init(3, 3).unwrap();
        for w in 0..3 {
            b.join(w, 3).unwrap();
        }
        b.signal(0, 3, None).unwrap();
        b.signal(1, 3, None).unwrap();
        assert!(b.wait(0).unwrap());
        // Wave 2 leaves instead of arriving: 2 of now 2 expected.
        b.leave(2).unwrap();
        assert!(b.released(0));
        assert_eq!(b.object(3).unwrap().expected, 2);
        assert_eq!(b.joined(2), None);
        assert!(b.leave(2).is_err(), "nothing joined any more");
    }

    #[test]
    fn m0_count_and_null_barrier() {
        let mut b = NamedBarriers::new(2);
        b.init(5, 4).unwrap();
        b.join(0, 5).unwrap();
        // M0 bits 22:16 = 2 lowers the expected count before the arrival.
        b.signal(0, 5, Some(2)).unwrap();
        b.signal(1, 5, None).unwrap();
        assert_eq!(b.object(5).unwrap().phase, 1);
        // The NULL barrier: signal and wait are no-ops.
        b.join(1, 0).unwrap();
        assert!(!b.signal(1, 0, None).unwrap());
        assert!(!b.wait(1).unwrap());
    }

    #[test]
    fn undefined_uses_are_refused() {
        let mut b = NamedBarriers::new(2);
        assert!(b.signal(0, 4, None).unwrap_err().contains("s_barrier_init"));
        assert!(b.init(17, 1).unwrap_err().contains("0..=16"));
        assert!(b.init(4, 0).is_err());
        assert!(b.wait(0).unwrap_err().contains("joined"));
        b.init(4, 2).unwrap();
        b.signal(0, 4, None).unwrap();
        assert!(b.signal(1, 4, Some(1)).is_err(), "count not above arrivals");
    }

    #[test]
    fn a_wait_nobody_completes_stays_blocked() {
        let mut b = NamedBarriers::new(2);
        b.init(7, 2).unwrap();
        b.join(0, 7).unwrap();
        b.signal(0, 7, None).unwrap();
        assert!(b.wait(0).unwrap());
        assert!(!b.released(0));
        let (id, o) = b.waiting_on(0).unwrap();
        assert_eq!((id, o.arrived, o.expected), (7, 1, 2));
    }
}
