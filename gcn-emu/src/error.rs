//! The error type of every stage.

use std::path::PathBuf;

/// What went wrong, with where (file, kernel, address, lane) and, where it
/// helps, how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The code object is not one the emulator can load.
    #[error("{what}")]
    Load {
        /// The whole message: what is wrong and where.
        what: String,
    },
    /// The disassembler failed or printed text the decoder cannot read.
    #[error("{what}")]
    Decode {
        /// The whole message.
        what: String,
    },
    /// An instruction (or a form of it) the emulator does not implement.
    #[error("unsupported instruction `{mnemonic}` at {addr:#x} in kernel `{kernel}`: {text}{}{}",
        line.as_ref().map(|l| format!(" ({l})")).unwrap_or_default(),
        if detail.is_empty() { String::new() } else { format!(": {detail}") })]
    Unsupported {
        /// The kernel.
        kernel: String,
        /// The mnemonic as LLVM prints it.
        mnemonic: String,
        /// Its address in the code object.
        addr: u64,
        /// The instruction's text.
        text: String,
        /// The asm line it came from, when the caller gave a map.
        line: Option<String>,
        /// What part of it is unsupported, when not the whole instruction.
        detail: String,
    },
    /// A memory access outside every allocation, or another run-time fault.
    #[error("fault in kernel `{kernel}` at {addr:#x} `{text}`, workgroup ({}, {}, {}), wave {wave}{}: {what}",
        workgroup[0], workgroup[1], workgroup[2],
        lane.map(|l| format!(", lane {l}")).unwrap_or_default())]
    Fault {
        /// The kernel.
        kernel: String,
        /// The faulting instruction's address.
        addr: u64,
        /// Its text.
        text: String,
        /// The workgroup ID.
        workgroup: [u32; 3],
        /// The wave within the workgroup.
        wave: u32,
        /// The lane, when one lane faulted.
        lane: Option<u32>,
        /// What happened.
        what: String,
    },
    /// A wave ran past the instruction budget: probably an endless loop.
    #[error("kernel `{kernel}`: wave {wave} of workgroup ({}, {}, {}) executed {budget} instructions without ending (instruction budget; raise it with --max-instructions if the kernel is just long); {where_}",
        workgroup[0], workgroup[1], workgroup[2])]
    Budget {
        /// The kernel.
        kernel: String,
        /// The workgroup ID.
        workgroup: [u32; 3],
        /// The wave within the workgroup.
        wave: u32,
        /// The budget.
        budget: u64,
        /// Where it was looping.
        where_: String,
    },
    /// The launch or its arguments do not fit the kernel.
    #[error("{what}")]
    Launch {
        /// The whole message.
        what: String,
    },
    /// An input is over one of the emulator's limits (the memory cap, the
    /// total work budget, a field's range): refused before anything of that
    /// size is allocated or run, or the run stopped at the limit.
    #[error("{context}: {field} is {value}, over the limit of {limit}{}",
        if hint.is_empty() { String::new() } else { format!("; {hint}") })]
    Limit {
        /// Where: the file, kernel or launch.
        context: String,
        /// The field or quantity, as the user wrote or can find it (e.g.
        /// `.amdhsa_private_segment_fixed_size × 64 lanes × 4 waves`).
        field: String,
        /// Its value (exact: products are computed in 128 bits).
        value: u128,
        /// The limit.
        limit: u128,
        /// How to fix it (the option that raises the limit, when one does).
        hint: String,
    },
    /// A `.npy` file the reader cannot read.
    #[error("{path}: {what}")]
    Npy {
        /// The file (or a description of the data).
        path: String,
        /// What is wrong.
        what: String,
    },
}

impl Error {
    pub(crate) fn load(what: impl Into<String>) -> Self {
        Error::Load { what: what.into() }
    }
    pub(crate) fn launch(what: impl Into<String>) -> Self {
        Error::Launch { what: what.into() }
    }
}
