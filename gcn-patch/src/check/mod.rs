//! check stage (to be written).
