//! Raw AMDGPU formats shared by gcn-patch and gcn-emu, apart from their
//! layered APIs (as gimli and object keep theirs): one reader of each.
//!
//! | module | what |
//! |---|---|
//! | [`listing`] | the lines of an `llvm-objdump -d` listing: instruction text, address, encoding; symbol and label headers |
//! | [`kd`] | the 64-byte kernel descriptor's fields |
//! | [`msb`] | gfx1250's VGPR MSBs over a listing: the operand slot table, the control-flow dataflow, the MSBs llvm-objdump lists under |
//! | [`note`] | the metadata note (`NT_AMDGPU_METADATA`) of a code object |
//! | [`process`] | the bounded runner of external tools (time limit, process group killed with the tool, signal handlers) |
//!
//! gcn-patch depends on gcn-emu only behind its `cli` feature, so what
//! gcn-patch needs without it and gcn-emu needs too lives here, below both.

pub mod kd;
pub mod listing;
pub mod msb;
pub mod note;
pub mod process;
