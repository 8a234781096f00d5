//! `cargo +nightly fuzz run emu`: see fuzz/checks.rs for what is checked.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::emu(data));
