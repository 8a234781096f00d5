//! assemble stage (to be written).
