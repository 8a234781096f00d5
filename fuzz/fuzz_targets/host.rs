//! `cargo +nightly fuzz run host`: see fuzz/checks.rs for what is checked.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::host(data));
