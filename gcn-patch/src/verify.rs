//! verify stage (to be written).
