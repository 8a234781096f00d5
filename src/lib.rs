//! Demo package; see README.md.
