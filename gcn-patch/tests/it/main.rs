//! gcn-patch's integration tests: one test binary (one link, one clippy
//! check) instead of one per file. Each former `tests/<name>.rs` is the module
//! `<name>` here, so `cargo test -p gcn-patch --test it <name>::` runs one
//! file's tests. Tests that need the process to themselves (process
//! environment, signal dispositions, the counting allocator's totals, peak
//! memory) run in a child process of this binary through [`alone`].

mod alone;
mod common;
#[path = "../../benches/count/mod.rs"]
mod count;
#[path = "../../benches/gen/mod.rs"]
mod gen;
mod patch_common;

/// Counts every allocation of this binary: `line_model`, `scale` and
/// `library_scale` measure live bytes (each alone in its own process).
#[global_allocator]
static GLOBAL: count::Counting = count::Counting;

mod alu_hazard;
mod approx;
mod bad_inputs;
mod check_budget;
mod check_retargeted;
mod check_robust;
mod check_waitcnt;
mod cli;
mod cli_docs;
mod compare;
mod diag_codes;
mod fuzz_corpus;
mod hazard;
mod hazard_aiter;
mod hazard_holes;
mod hazard_inherited;
mod hazard_mutation;
mod hazard_pipeline;
mod identity;
mod import_programs;
mod lds;
mod library_scale;
mod lift;
mod lift_in_process;
mod line_model;
mod manifest_edit;
mod ops_api;
mod patch_diff;
mod patch_manifest;
mod patch_pin;
mod patch_rules;
mod pathological;
mod profile;
mod profile_reports;
mod progress;
mod readable_output;
mod remote_cache;
mod retarget;
mod robust_cli;
mod robust_lib;
mod robust_round2;
mod robust_round3;
mod roundtrip;
mod run;
mod run_by_name;
mod run_targets;
mod sanitize_barrier;
mod scale;
mod tool_bounds;
mod tool_table;
mod toolchain;
mod toolchain_env;
mod triton;
mod tuner;
mod tuner_round2;
mod verdicts;
