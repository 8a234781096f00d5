//! pipeline stage (to be written).
