//! Every environment variable gcn-build reads goes through `Env::get`, which
//! also tells Cargo to rerun the build script when that variable changes.
//!
//! The variables are listed in the crate documentation, with why `PATH` is
//! read but not tracked.

use std::cell::RefCell;
use std::collections::BTreeSet;

/// Variables read but not announced to Cargo (see the module docs).
const UNTRACKED: &[&str] = &["PATH"];

/// Variables Cargo sets for every build script run: reading them needs no
/// `rerun-if-env-changed` line.
const SET_BY_CARGO: &[&str] = &["OUT_DIR", "NUM_JOBS", "CARGO_MANIFEST_DIR"];

/// The one reader of environment variables.
#[derive(Debug, Default)]
pub(crate) struct Env {
    /// Print `cargo:` lines (true inside build scripts).
    cargo_metadata: bool,
    seen: RefCell<BTreeSet<String>>,
}

impl Env {
    /// A reader. `cargo_metadata`: print `cargo:` lines; by default (`None`)
    /// when `OUT_DIR` is set, i.e. inside a build script.
    pub(crate) fn new(cargo_metadata: Option<bool>) -> Self {
        let env = Env {
            cargo_metadata: false,
            seen: RefCell::new(BTreeSet::new()),
        };
        let cargo_metadata = cargo_metadata.unwrap_or_else(|| env.get("OUT_DIR").is_some());
        Env {
            cargo_metadata,
            ..env
        }
    }

    /// Whether `cargo:` lines are printed.
    pub(crate) fn cargo_metadata(&self) -> bool {
        self.cargo_metadata
    }

    /// Read `name`, announcing it to Cargo once (unless Cargo sets it, or it is untracked).
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        let first = self.seen.borrow_mut().insert(name.to_owned());
        if first
            && self.cargo_metadata
            && !UNTRACKED.contains(&name)
            && !SET_BY_CARGO.contains(&name)
        {
            println!("cargo:rerun-if-env-changed={name}");
        }
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }

    /// The names read so far, sorted.
    #[cfg(test)]
    fn read_so_far(&self) -> Vec<String> {
        self.seen.borrow().iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_each_variable_once() {
        let env = Env::new(Some(false));
        let _ = env.get("GCN_BUILD_TEST_UNSET_VARIABLE");
        let _ = env.get("PATH");
        let _ = env.get("PATH");
        assert_eq!(
            env.read_so_far(),
            vec!["GCN_BUILD_TEST_UNSET_VARIABLE", "PATH"]
        );
        assert!(env.get("GCN_BUILD_TEST_UNSET_VARIABLE").is_none());
    }
}
