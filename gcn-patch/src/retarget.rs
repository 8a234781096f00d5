//! retarget stage (to be written).
