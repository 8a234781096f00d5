//! manifest stage (to be written).
