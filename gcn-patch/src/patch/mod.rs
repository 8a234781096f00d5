//! patch stage (to be written).
