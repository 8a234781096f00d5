//! `gcn-patch profile --html FILE`: the report as one self-contained HTML
//! page (inline CSS and script, no network access, every asm text
//! escaped): the prediction, the stall reasons, and the annotated asm,
//! each executed line coloured by its stall cycles. For a manifest kernel
//! the page compares the unpatched and patched sides of each launch: both
//! predictions, the delta, the stall reasons side by side, the lines that
//! account for the difference ([`super::line_deltas`]) and both listings.
//!
//! The colours do not need the script: it only adds a summary line and
//! the "only stalled lines" filter (and marks `<html data-js="ran">`).

use std::fmt::Write;

use super::{line_deltas, Line, ProfileReport, Profiled};

/// Background colours of the heat classes `h1`..`h5` (ColorBrewer OrRd):
/// a line's class is its share of the report's largest stall cycles, in
/// fifths; a line without stall cycles has none (white).
pub const HEAT: [&str; 5] = ["#fef0d9", "#fdcc8a", "#fc8d59", "#e34a33", "#b30000"];

/// Background colours of the classes `g1`..`g5` (ColorBrewer Greens) of
/// the lines whose stall cycles the patch reduced, in fifths of the
/// largest |delta| (those it raised take the [`HEAT`] classes).
pub const GAIN: [&str; 5] = ["#edf8e9", "#bae4b3", "#74c476", "#31a354", "#006d2c"];

/// The colour of each stall reason's bar, in [`gcn_emu::profile::model::Stall::ALL`] order.
const REASON: [&str; 9] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
    "#7f7f7f",
];

/// `s` with `&`, `<`, `>`, `"` and `'` escaped, for HTML text and
/// attribute values.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const STYLE: &str = r#"
body { font-family: system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; } h3 { font-size: 15px; }
table { border-collapse: collapse; font-size: 13px; }
td, th { padding: 2px 8px; text-align: right; white-space: nowrap; }
th { background: #eee; position: sticky; top: 0; }
td.asm { text-align: left; font-family: ui-monospace, monospace; }
.summary td:first-child { text-align: left; font-weight: 600; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
.sides > div { overflow-x: auto; }
.bar { display: inline-block; height: 12px; vertical-align: middle; }
.note { color: #555; font-size: 13px; }
.h1 { background: #fef0d9; } .h2 { background: #fdcc8a; } .h3 { background: #fc8d59; }
.h4 { background: #e34a33; color: #fff; } .h5 { background: #b30000; color: #fff; }
.g1 { background: #edf8e9; } .g2 { background: #bae4b3; } .g3 { background: #74c476; }
.g4 { background: #31a354; color: #fff; } .g5 { background: #006d2c; color: #fff; }
.up { color: #b30000; } .down { color: #2a7a2a; }
tr.h4 .up, tr.h5 .up, tr.g4 .down, tr.g5 .down { color: #fff; }
"#;

const SCRIPT: &str = r#"
(function () {
  var rows = document.querySelectorAll('tr[data-stall]');
  var stalled = 0;
  rows.forEach(function (r) { if (Number(r.dataset.stall) > 0) stalled++; });
  var s = document.getElementById('summary');
  if (s) s.textContent = rows.length + ' asm lines executed, ' + stalled + ' with stall cycles';
  var only = document.getElementById('only-stalled');
  if (only) only.addEventListener('change', function () {
    rows.forEach(function (r) {
      r.style.display = (only.checked && Number(r.dataset.stall) === 0) ? 'none' : '';
    });
  });
  document.documentElement.dataset.js = 'ran';
})();
"#;

fn stall(l: &Line) -> u64 {
    l.stall_cycles.values().sum()
}

fn heat(cycles: u64, max: u64) -> &'static str {
    if cycles == 0 || max == 0 {
        return "";
    }
    const CLASSES: [&str; 5] = ["h1", "h2", "h3", "h4", "h5"];
    let k = ((cycles as f64 / max as f64) * 5.0).ceil() as usize;
    CLASSES[k.clamp(1, 5) - 1]
}

/// The file and line of an asm line named `file:line: text`.
fn place(source: Option<&str>) -> Option<(&str, &str)> {
    source?.split_once(": ")?.0.rsplit_once(':')
}

/// The annotated listing of one report: every executed line, coloured by
/// its stall cycles.
fn listing(o: &mut String, r: &ProfileReport) {
    let max = r.instructions.iter().map(stall).max().unwrap_or(0);
    if let Some((file, _)) = r
        .instructions
        .iter()
        .find_map(|l| place(l.source.as_deref()))
    {
        let _ = writeln!(o, "<p class=\"note\">lines of {}</p>", escape(file));
    }
    o.push_str("<table class=\"asm\"><tr><th>line</th><th style=\"text-align:left\">asm</th><th>stall</th><th>mostly</th><th>executed</th><th>conflicts</th><th>lines/acc</th><th>address</th></tr>\n");
    for l in &r.instructions {
        let s = stall(l);
        let mostly = l
            .stall_cycles
            .iter()
            .max_by_key(|(n, v)| (**v, std::cmp::Reverse(**n)))
            .map(|(n, _)| *n)
            .unwrap_or("");
        let line = place(l.source.as_deref()).map_or("-", |(_, n)| n);
        let _ = writeln!(
            o,
            "<tr class=\"{}\" data-stall=\"{s}\"><td>{}</td><td class=\"asm\">{}</td><td>{s}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:x}</td></tr>",
            heat(s, max),
            escape(line),
            escape(&l.text),
            escape(mostly),
            l.executed,
            l.lds_bank_conflicts,
            if l.cache_lines.lines64 > 0 {
                format!("{:.2}", l.cache_lines.per_access)
            } else {
                "-".into()
            },
            l.address,
        );
    }
    o.push_str("</table>\n");
}

/// The stall reasons of one report, with bars.
fn reasons(o: &mut String, r: &ProfileReport) {
    let total: u64 = r.stalls.iter().map(|t| t.cycles).sum();
    o.push_str(
        "<table class=\"stalls\"><tr><th>reason</th><th>cycles</th><th>share</th><th></th></tr>\n",
    );
    for t in &r.stalls {
        let share = 100.0 * t.cycles as f64 / total.max(1) as f64;
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{share:.1}%</td><td style=\"text-align:left\"><span class=\"bar\" style=\"width:{:.0}px;background:{}\"></span></td></tr>",
            escape(&t.reason),
            t.cycles,
            3.0 * share,
            reason_colour(&t.reason)
        );
    }
    o.push_str("</table>\n");
}

fn reason_colour(name: &str) -> &'static str {
    gcn_emu::profile::model::Stall::ALL
        .iter()
        .position(|s| s.name() == name)
        .map_or("#999", |i| REASON[i])
}

fn head(o: &mut String, title: &str) {
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n<p class=\"note\">A model, not a measurement: predicted by gcn-patch's timing model from the emulated instruction streams (the notes below say what it samples, assumes and leaves out). <span id=\"summary\"></span></p>\n<p><label><input type=\"checkbox\" id=\"only-stalled\"> only lines with stall cycles</label></p>\n",
        escape(title),
        escape(title)
    );
}

fn tail(o: &mut String, notes: &[String]) {
    o.push_str("<h2>Notes</h2><ul class=\"note\">\n");
    for n in notes {
        let _ = writeln!(o, "<li>{}</li>", escape(n));
    }
    let _ = write!(o, "</ul>\n<script>{SCRIPT}</script>\n</body></html>\n");
}

fn summary_rows(o: &mut String, sides: &[&ProfileReport]) {
    let row = |o: &mut String, name: &str, f: &dyn Fn(&ProfileReport) -> String| {
        let _ = write!(o, "<tr><td>{}</td>", escape(name));
        for r in sides {
            let _ = write!(o, "<td>{}</td>", escape(&f(r)));
        }
        o.push_str("</tr>\n");
    };
    row(o, "predicted µs", &|r| format!("{:.2}", r.predicted_us));
    row(o, "bound", &|r| r.bound.clone());
    row(o, "cycles per CU round", &|r| {
        r.cycles_per_round.to_string()
    });
    row(o, "workgroups per round", &|r| {
        r.round_workgroups.to_string()
    });
    row(o, "occupancy", &|r| r.occupancy_limited_by.clone());
    row(o, "TFLOP/s (of peak)", &|r| match r.peak_tflops {
        Some(p) => format!("{:.2} ({p})", r.tflops),
        None => "no MFMA".into(),
    });
    row(o, "global GB/s (of HBM peak)", &|r| {
        format!("{:.1} ({})", r.gbps, r.peak_gbps)
    });
    row(o, "wave-instructions (sampled)", &|r| {
        r.totals.executed.to_string()
    });
    row(o, "LDS bank-conflict cycles", &|r| {
        r.totals.lds_bank_conflicts.to_string()
    });
}

/// The page of one report (`gcn-patch profile OBJECT … --html FILE`).
pub fn single(r: &ProfileReport) -> String {
    let mut o = String::new();
    head(
        &mut o,
        &format!(
            "gcn-patch profile: kernel {} ({}) on {}: predicted {:.2} µs",
            r.kernel, r.processor, r.device, r.predicted_us
        ),
    );
    o.push_str("<table class=\"summary\"><tr><th></th><th>value</th></tr>\n");
    summary_rows(&mut o, &[r]);
    o.push_str("</table>\n<h2>Stall reasons (one CU round, cycles summed over waves)</h2>\n");
    reasons(&mut o, r);
    o.push_str("<h2>Annotated asm (coloured by stall cycles)</h2>\n");
    listing(&mut o, r);
    tail(&mut o, &r.notes);
    o
}

/// The page of a manifest kernel's launches, unpatched against patched
/// (`gcn-patch profile KERNEL --html FILE`).
pub fn declared(kernel: &str, rows: &[Profiled], top: usize) -> String {
    let mut o = String::new();
    let device = rows.first().map_or("", |r| r.patched.device.as_str());
    head(
        &mut o,
        &format!("gcn-patch profile: kernel {kernel} on {device}, unpatched against patched"),
    );
    for r in rows {
        let (a, b) = (&r.unpatched, &r.patched);
        let delta = 100.0 * (b.predicted_us / a.predicted_us - 1.0);
        let _ = writeln!(
            o,
            "<h2>{} {}: unpatched {:.2} µs, patched {:.2} µs (<span class=\"{}\">{delta:+.1}%</span>)</h2>",
            escape(&r.target),
            escape(&r.launch),
            a.predicted_us,
            b.predicted_us,
            if delta > 0.0 { "up" } else { "down" }
        );
        o.push_str(
            "<table class=\"summary\"><tr><th></th><th>unpatched</th><th>patched</th></tr>\n",
        );
        summary_rows(&mut o, &[a, b]);
        o.push_str("</table>\n<h3>Stall cycles by reason (one CU round)</h3>\n<table class=\"stalls\"><tr><th>reason</th><th>unpatched</th><th>patched</th><th>delta</th></tr>\n");
        let mut names: Vec<&str> = a
            .stalls
            .iter()
            .chain(&b.stalls)
            .map(|t| t.reason.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        let of = |r: &ProfileReport, n: &str| {
            r.stalls
                .iter()
                .find(|t| t.reason == n)
                .map_or(0, |t| t.cycles)
        };
        for n in names {
            let (x, y) = (of(a, n), of(b, n));
            let _ = writeln!(
                o,
                "<tr><td><span class=\"bar\" style=\"width:10px;background:{}\"></span> {}</td><td>{x}</td><td>{y}</td><td class=\"{}\">{:+}</td></tr>",
                reason_colour(n),
                escape(n),
                if y > x { "up" } else { "down" },
                y as i64 - x as i64
            );
        }
        o.push_str("</table>\n<h3>Lines that account for the difference (stall cycles, unpatched → patched)</h3>\n<table class=\"delta\"><tr><th>delta</th><th>unpatched</th><th>patched</th><th>unpatched line</th><th>patched line</th><th style=\"text-align:left\">asm</th></tr>\n");
        let deltas = line_deltas(a, b);
        let max = deltas.first().map_or(0, |d| d.delta.unsigned_abs());
        for d in deltas.iter().take(top) {
            let at = |x: &Option<String>, gone: &str| -> String {
                match x {
                    None => gone.to_string(),
                    Some(x) => place(Some(x)).map_or("-".to_string(), |(_, n)| n.to_string()),
                }
            };
            let text = d
                .patched
                .as_deref()
                .or(d.unpatched.as_deref())
                .map(|t| t.split_once(": ").map_or(t, |(_, t)| t))
                .unwrap_or("");
            let _ = writeln!(
                o,
                "<tr class=\"{}\" data-delta=\"{}\"><td class=\"{}\">{:+}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"asm\">{}</td></tr>",
                match heat(d.delta.unsigned_abs(), max) {
                    h if d.delta < 0 => h.replace('h', "g"),
                    h => h.to_string(),
                },
                d.delta,
                if d.delta > 0 { "up" } else { "down" },
                d.delta,
                d.unpatched_stall,
                d.patched_stall,
                escape(&at(&d.unpatched, "(added)")),
                escape(&at(&d.patched, "(removed)")),
                escape(text)
            );
        }
        o.push_str("</table>\n<h3>Annotated asm (coloured by stall cycles)</h3>\n<div class=\"sides\"><div><h3>unpatched</h3>\n");
        listing(&mut o, a);
        o.push_str("</div><div><h3>patched</h3>\n");
        listing(&mut o, b);
        o.push_str("</div></div>\n");
    }
    let notes = rows
        .first()
        .map(|r| r.patched.notes.clone())
        .unwrap_or_default();
    tail(&mut o, &notes);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>a & "b" 'c'</script>"#),
            "&lt;script&gt;a &amp; &quot;b&quot; &#39;c&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn heat_classes_are_fifths_of_the_largest() {
        assert_eq!(heat(0, 100), "");
        assert_eq!(heat(1, 100), "h1");
        assert_eq!(heat(20, 100), "h1");
        assert_eq!(heat(21, 100), "h2");
        assert_eq!(heat(100, 100), "h5");
    }
}
