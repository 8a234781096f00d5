//! toolchain stage (to be written).
