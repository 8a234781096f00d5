//! `gcn-patch profile --trace FILE`: the timing model's schedule of one CU
//! round as Chrome trace-event JSON (the "JSON Object Format" of the
//! Trace Event Format), which Perfetto (<https://ui.perfetto.dev>) and
//! `chrome://tracing` open.
//!
//! A process per workgroup of the round (`pid`), a thread per wave
//! (`tid`), named by metadata events; each wave's time is a sequence of
//! complete (`"ph": "X"`) slices that do not overlap: an `issue` slice per
//! instruction (named by its mnemonic) and a `stall` slice per reason it
//! waited before it (named by the reason, as in the report). Times are µs
//! at the device's peak clock, in whole ns; each slice's `args` give the
//! exact cycles. No `displayTimeUnit`: Perfetto would read it as the unit
//! of `ts`.
//! The book's reference page `profile-trace.md` is the schema.

use serde::Serialize;

use gcn_emu::profile::model::Activity;

use super::{ProfileReport, Timeline};

/// The version of the `--trace` layout (in `otherData`).
pub const TRACE_VERSION: u32 = 1;

#[derive(Serialize)]
struct Trace<'a> {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<Event<'a>>,
    #[serde(rename = "otherData")]
    other_data: Other<'a>,
}

#[derive(Serialize)]
struct Other<'a> {
    version: u32,
    kernel: &'a str,
    device: &'a str,
    clock_mhz: f64,
    note: &'static str,
    sides: Vec<SideData<'a>>,
}

#[derive(Serialize)]
struct SideData<'a> {
    label: &'a str,
    cycles_per_round: u64,
    round_workgroups: u32,
    predicted_us: f64,
}

#[derive(Serialize)]
struct Event<'a> {
    name: &'a str,
    ph: &'static str,
    pid: u32,
    tid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    args: Args<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Args<'a> {
    Name { name: String },
    Sort { sort_index: u32 },
    Slice(SliceArgs<'a>),
}

#[derive(Serialize)]
struct SliceArgs<'a> {
    start_cycle: u64,
    end_cycle: u64,
    address: String,
    instruction: &'a str,
}

const NOTE: &str = "the timing model's schedule of one CU round (a model, not a measurement); times in µs at the device's peak clock (whole ns), exact cycles in each slice's args";

/// The trace of one or more reports, each a side labelled as given
/// (`unpatched`, `patched`, or empty for a single report), their
/// workgroups numbered on from one side to the next. `None` when a report
/// kept no timeline ([`super::ProfileOptions::timeline`]).
pub fn chrome_trace(sides: &[(String, &ProfileReport)]) -> Option<String> {
    let first = sides.first()?.1;
    let clock = sides.first()?.1.timeline.as_ref()?.clock_mhz;
    let mut events = Vec::new();
    let mut pid_base = 0u32;
    let mut other = Vec::new();
    for (label, r) in sides {
        let tl: &Timeline = r.timeline.as_ref()?;
        other.push(SideData {
            label,
            cycles_per_round: r.cycles_per_round,
            round_workgroups: r.round_workgroups,
            predicted_us: r.predicted_us,
        });
        let mut slots: Vec<(u32, [u32; 3])> = tl.waves.iter().map(|w| (w.slot, w.wg)).collect();
        slots.sort_unstable();
        slots.dedup();
        for &(slot, wg) in &slots {
            let pid = pid_base + slot + 1;
            let side = if label.is_empty() {
                String::new()
            } else {
                format!("{label}: ")
            };
            events.push(Event {
                name: "process_name",
                ph: "M",
                pid,
                tid: 0,
                cat: None,
                ts: None,
                dur: None,
                args: Args::Name {
                    name: format!("{side}workgroup {} ({},{},{})", slot, wg[0], wg[1], wg[2]),
                },
            });
            events.push(Event {
                name: "process_sort_index",
                ph: "M",
                pid,
                tid: 0,
                cat: None,
                ts: None,
                dur: None,
                args: Args::Sort { sort_index: pid },
            });
        }
        for w in &tl.waves {
            let (pid, tid) = (pid_base + w.slot + 1, w.wave + 1);
            events.push(Event {
                name: "thread_name",
                ph: "M",
                pid,
                tid,
                cat: None,
                ts: None,
                dur: None,
                args: Args::Name {
                    name: format!("wave {} (SIMD {})", w.wave, w.simd),
                },
            });
            events.push(Event {
                name: "thread_sort_index",
                ph: "M",
                pid,
                tid,
                cat: None,
                ts: None,
                dur: None,
                args: Args::Sort { sort_index: tid },
            });
            for s in &w.spans {
                let (addr, text) = tl
                    .instructions
                    .get(s.index as usize)
                    .map(|(a, t)| (*a, t.as_str()))
                    .unwrap_or((0, ""));
                let (name, cat) = match s.what {
                    Activity::Issue => (text.split_whitespace().next().unwrap_or(text), "issue"),
                    Activity::Stall(why) => (why.name(), "stall"),
                };
                let (start, end) = (ns(s.start, clock), ns(s.end, clock));
                events.push(Event {
                    name,
                    ph: "X",
                    pid,
                    tid,
                    cat: Some(cat),
                    ts: Some(start as f64 / 1000.0),
                    dur: Some((end - start) as f64 / 1000.0),
                    args: Args::Slice(SliceArgs {
                        start_cycle: s.start,
                        end_cycle: s.end,
                        address: format!("{addr:#x}"),
                        instruction: text,
                    }),
                });
            }
        }
        pid_base += slots.iter().map(|s| s.0 + 1).max().unwrap_or(0);
    }
    let trace = Trace {
        trace_events: events,
        other_data: Other {
            version: TRACE_VERSION,
            kernel: &first.kernel,
            device: &first.device,
            clock_mhz: clock,
            note: NOTE,
            sides: other,
        },
    };
    serde_json::to_string(&trace).ok()
}

/// Cycle `c` at `clock` MHz in whole ns: a slice's start and end are
/// rounded alike, so that a wave's slices that abut in cycles abut in the
/// trace (a viewer reads `ts` and `dur` in µs and rounds them to ns, as
/// Perfetto does).
fn ns(c: u64, clock: f64) -> u64 {
    (c as f64 * 1000.0 / clock).round() as u64
}

/// Write the `--trace` file of `sides` ([`chrome_trace`]) atomically.
pub fn write(path: &std::path::Path, sides: &[(String, &ProfileReport)]) -> std::io::Result<()> {
    let text = chrome_trace(sides).ok_or_else(|| {
        std::io::Error::other("the report kept no timeline (profile without a timeline)")
    })?;
    crate::base::output::write_atomic(path, text.as_bytes())
}
