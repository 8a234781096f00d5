//! gcn-build
