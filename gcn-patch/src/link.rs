//! link stage (to be written).
