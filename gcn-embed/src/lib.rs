//! gcn-embed
