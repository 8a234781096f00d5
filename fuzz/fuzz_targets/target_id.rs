//! `cargo +nightly fuzz run target_id`: see fuzz/checks.rs for what is checked.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::target_id(data));
