//! `cargo +nightly fuzz run bundle`: see fuzz/checks.rs for what is checked.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::bundle(data));
