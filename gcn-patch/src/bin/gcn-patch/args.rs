//! The command line: every command, its arguments and their help (clap).
//! The generated options page of the book comes from here too.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use gcn_emu::sanitize::Checks;
use gcn_patch::ops::Tools;

/// Patch, retarget, check and assemble hand-tuned AMDGPU assembly.
#[derive(Parser)]
#[command(name = "gcn-patch", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// Say more on standard error: a line per file or job (`import`'s
    /// "imported …", `check`'s "ok: …", the notes of lifted binaries).
    #[arg(long, short, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Errors only on standard error: no progress bar, notes, warnings or
    /// summary line (standard output, such as `build`'s table, is unchanged).
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Print FILE retargeted for --target, with toolchain skew normalized.
    Retarget {
        /// Dumped asm (.s, .rocmasm).
        file: PathBuf,
        /// Target ID, e.g. gfx942, gfx942:sramecc+:xnack-, gfx9-4-generic.
        #[arg(long, short)]
        target: String,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Lift a code object back to editable asm that rebuilds it: built as
    /// builds do, its .text, .rodata, .note and e_flags are checked
    /// byte-identical before anything is written.
    Lift {
        /// The code object (.co, .hsaco), offload bundle, HIP host object or
        /// executable (.hip_fatbin), or IREE .vmfb.
        file: PathBuf,
        /// Write the asm here (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// The target to take from a container (needed when it holds
        /// several); for a bare code object, the target it must be built for.
        #[arg(long, short)]
        target: Option<String>,
        /// Do not rebuild and compare (saves one assemble + link per code
        /// object); the report then says "not verified".
        #[arg(long)]
        no_verify: bool,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Retarget, assemble, link and verify FILE into a code object.
    Assemble {
        /// Dumped asm (.s, .rocmasm).
        file: PathBuf,
        /// Target ID.
        #[arg(long, short)]
        target: String,
        /// Output .hsaco.
        #[arg(long, short)]
        output: PathBuf,
        /// Rewrite register counts to what the code uses instead of failing
        /// (this changes the code object's counts).
        #[arg(long)]
        update_registers: bool,
        /// The unpatched original (its asm, or the code object FILE was lifted
        /// from): findings it has too are inherited, warnings, as `check`
        /// treats a manifest's dump. Default: the code object named by FILE's
        /// `; Lifted by gcn-patch from …` header, if it exists.
        #[arg(long, value_name = "ORIGINAL")]
        baseline: Option<PathBuf>,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Print a kernel's patched, retargeted asm.
    Apply {
        /// Kernel name from kernels.toml.
        kernel: String,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Target (default: the first target of the kernel's first source).
        #[arg(long, short)]
        target: Option<String>,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Apply every patch for every target, run every check, and assemble,
    /// link and verify every job with the real toolchain (in parallel,
    /// through the object cache): "ok" means it builds.
    Check {
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Skip assembling: only apply and check (no toolchain needed; an
        /// "ok" then does not mean the assembler accepts every instruction).
        #[arg(long, conflicts_with = "assemble")]
        no_assemble: bool,
        /// Assemble, link and verify (the default; kept for scripts).
        #[arg(long, hide = true)]
        assemble: bool,
        /// Parallel jobs, with or without `--no-assemble` (default: the number of CPUs).
        #[arg(long, short)]
        jobs: Option<usize>,
        /// Then run every launch the manifest declares ([[kernel.launch]])
        /// in the emulator with the sanitizer, as `gcn-patch test` does.
        #[arg(long, conflicts_with = "no_assemble")]
        run: bool,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Run a kernel's declared launches ([[kernel.launch]] in kernels.toml)
    /// in the emulator on its unpatched and its patched object, on the same
    /// inputs, and report the first differing elements of every buffer.
    /// Exit 0: every buffer agrees; 1: a difference, or a side failed to
    /// run; 2: bad input.
    Compare {
        /// Kernel name from the manifest.
        kernel: String,
        /// Only this target (default: every target of the kernel the
        /// emulator runs: gfx90a, gfx942, gfx950).
        #[arg(long, short)]
        target: Option<String>,
        /// How closely float elements must agree, overriding each launch's
        /// `tolerance`: exact (bit for bit, the default), abs:X, rel:X,
        /// abs:X,rel:Y (|a-b| <= abs + rel*max(|a|,|b|)) or ulp:N. Integer
        /// elements are always compared bit for bit.
        #[arg(long, value_name = "TOL")]
        tolerance: Option<String>,
        /// Instructions one wave may execute before it is stopped as
        /// looping (default 100000000).
        #[arg(long, value_name = "N")]
        max_instructions: Option<u64>,
        /// Run generic targets (gfx9-4-generic) as this processor of their
        /// family (default: the first the emulator runs, gfx942 for
        /// gfx9-4-generic; the report says which).
        #[arg(long = "as", value_name = "PROCESSOR")]
        run_as: Option<String>,
        /// Interleave each workgroup's waves N instructions at a time, in
        /// wave order (with schedule seed 0): 1 issues one instruction of
        /// each wave in turn, so that a kernel relying on issue timing
        /// between barriers computes as on hardware. Default 0: each wave
        /// runs until it ends or reaches s_barrier.
        #[arg(long, value_name = "N", default_value_t = 0)]
        slice: u64,
        /// Move the results of approximate instructions (v_rcp_f32,
        /// v_sqrt_f32, v_exp_f32, …) within the hardware's documented error,
        /// as a function of the input chosen by SEED, on both sides alike:
        /// a result that depends on the exact values of an approximation the
        /// patch adds shows up as a difference. Default: correctly rounded.
        #[arg(long, value_name = "SEED")]
        perturb_approx: Option<u64>,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Run every declared launch ([[kernel.launch]] in kernels.toml) of
    /// every kernel for every target the emulator runs, on the patched
    /// object, with the sanitizer. Exit 0: all ran clean; 1: a finding, a
    /// fault or an unsupported instruction; 2: bad input.
    Test {
        /// Only this kernel.
        kernel: Option<String>,
        /// Only this target.
        #[arg(long, short)]
        target: Option<String>,
        /// Schedule seeds: each launch runs once per seed (0: waves in turn;
        /// others: a seeded interleaving). Default 0.
        #[arg(long = "seed", value_name = "N")]
        seeds: Vec<u64>,
        /// Instructions one wave may execute before it is stopped as
        /// looping (default 100000000).
        #[arg(long, value_name = "N")]
        max_instructions: Option<u64>,
        /// The sanitizer's checks, as `run --sanitize=CHECK,…` takes them
        /// (default: all but barrier-pairs).
        #[arg(long, value_name = "CHECK,…", value_parser = parse_checks)]
        sanitize: Option<Checks>,
        /// Run generic targets (gfx9-4-generic) as this processor of their
        /// family (default: the first the emulator runs, gfx942 for
        /// gfx9-4-generic; the report says which).
        #[arg(long = "as", value_name = "PROCESSOR")]
        run_as: Option<String>,
        /// Under schedule seed 0, interleave each workgroup's waves N
        /// instructions at a time, in wave order: 1 issues one instruction
        /// of each wave in turn, so that a kernel relying on issue timing
        /// between barriers computes as on hardware (other seeds slice on
        /// their own). Default 0: each wave runs until it ends or reaches
        /// s_barrier.
        #[arg(long, value_name = "N", default_value_t = 0)]
        slice: u64,
        /// Move the results of approximate instructions (v_rcp_f32,
        /// v_sqrt_f32, v_exp_f32, …) within the hardware's documented error,
        /// as a function of the input chosen by SEED. Default: correctly
        /// rounded.
        #[arg(long, value_name = "SEED")]
        perturb_approx: Option<u64>,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Re-pin a kernel's dumps (sha256 in kernels.toml) after re-checking its patches.
    Pin {
        /// Kernel name from kernels.toml.
        kernel: String,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
    },
    /// List every known processor, generic target and family name.
    Targets,
    /// Import dumped AMDGPU asm (files or dump directories: IREE linked and
    /// unlinked dumps, hipcc --save-temps .s, Triton .amdgcn, any AMDGPU .s):
    /// copy each under asm/<processor>/, pin its sha256 and add a [[kernel]]
    /// recording its target, kernel symbols and IREE executables to the
    /// manifest (created if absent). Re-importing the same bytes is a no-op.
    /// Triton dump directories (TRITON_DUMP_DIR) and cache entries are
    /// recognized: the dump hash and launch metadata go to `triton = {…}`.
    Import {
        /// Dumped files or directories holding them; or binaries to lift: code
        /// objects (.co, .hsaco), offload bundles, HIP host objects or
        /// executables, IREE .vmfb.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The manifest (created if absent).
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Triton cache directory searched for a Triton dump's launch metadata
        /// (repeatable; default: $TRITON_CACHE_DIR, else ~/.triton/cache).
        #[arg(long)]
        triton_cache: Vec<PathBuf>,
        /// Binaries lifted at once (default: the number of CPUs).
        #[arg(long, short)]
        jobs: Option<usize>,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Build every Triton kernel of the manifest for its dump's target (the
    /// engine of `build`) and write DIR/<hash>/<kernel>.hsaco, so that
    /// `TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=DIR` runs the patched code.
    TritonOverride {
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Override directory to write.
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Build every kernel × target of the manifest outside Cargo (in parallel,
    /// cached, the engine gcn-build uses) into DIR/<target>/<exec>.hsaco per
    /// IREE executable (DIR/<target>/<kernel>.hsaco for other kernels), so
    /// `--iree-hal-substitute-executable-objects-from=DIR/<target>` works;
    /// writes kernels.lock next to the manifest (with --locked: checks it).
    Build {
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Build only these targets (IDs or families; repeatable). A target
        /// of the same generation as a source's dump is added to it.
        #[arg(long, short)]
        target: Vec<String>,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Write KERNEL's dump with its diffs applied (rules run after them) to a
    /// work file under .gcn-patch/edit/ and print its path; edit it, then `save`.
    /// A work file holding edits not saved yet is refused (exit 1), not overwritten.
    Edit {
        /// Kernel name from the manifest.
        kernel: String,
        /// Overwrite the work file even if it holds unsaved edits (they are lost).
        #[arg(long)]
        force: bool,
        /// The source building this target (default: the first source).
        #[arg(long, short)]
        target: Option<String>,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
    },
    /// Turn the edits in KERNEL's work file into the next numbered unified
    /// diff patches/<kernel>/NNNN-NAME.diff, appended to the source's
    /// `patches` (quilt style). NAME of the source's last patch: that patch is
    /// refreshed in place instead. No change: says so and writes nothing.
    Save {
        /// Kernel name from the manifest.
        kernel: String,
        /// Short name of the patch, e.g. coarser-waits.
        name: String,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Acknowledge KERNEL's current findings (warnings and notes of every
    /// target, e.g. those inherited from vendor code): record them in
    /// accepted/<kernel>.txt and point the kernel's `accepted` key at it.
    /// check, build, triton-override and gcn-build then leave them out (and
    /// count them) until a new finding appears. Errors cannot be accepted.
    Accept {
        /// Kernel name from the manifest.
        kernel: String,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// List KERNEL's patches in the order they apply, source by source.
    Patches {
        /// Kernel name from the manifest.
        kernel: String,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
    },
    /// Remove KERNEL's patch NAME from the manifest and delete its file (the
    /// patches after it must still apply). The kernel's work file goes too;
    /// one holding unsaved edits is refused unless --force.
    Drop {
        /// Kernel name from the manifest.
        kernel: String,
        /// The patch: its name (`coarser-waits`) or file name (`0002-coarser-waits.diff`).
        name: String,
        /// Drop even if the work file holds unsaved edits (they are lost).
        #[arg(long)]
        force: bool,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
    },
    /// Build KERNEL for --target from the unpatched and the patched dump,
    /// disassemble both with llvm-objdump and print a unified diff of the
    /// instructions (addresses stripped) and the register/LDS/occupancy
    /// fields that changed.
    Objdiff {
        /// Kernel name from the manifest.
        kernel: String,
        /// Target ID.
        #[arg(long, short)]
        target: String,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Print the iree-compile flags substituting every IREE executable of the
    /// manifest built for --target by `gcn-patch build --out DIR`,
    /// whitespace-separated, ready for `$(...)`.
    IreeFlags {
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// The `gcn-patch build` output directory.
        #[arg(long)]
        out: PathBuf,
        /// Target ID the IREE program is compiled for.
        #[arg(long, short)]
        target: String,
    },
    /// Check FILE for wait-counter hazards: reads or overwrites of registers
    /// a pending memory operation will write; and, in GFX12 kernels that
    /// select SCHED_MODE_2, VGPR windows no `s_wait_alu` covers. Exit 0: no
    /// hazard (notes and warnings allowed); 1: at least one hazard; 2: usage
    /// or input error.
    Lint {
        /// Any AMDGPU asm file (.s, .rocmasm); no manifest needed.
        file: PathBuf,
        /// Target ID the file is for, e.g. gfx942, gfx1100, gfx1201
        /// (default: the file's `.amdgcn_target` directive).
        #[arg(long, short)]
        target: Option<String>,
        /// Also list waits that could be loosened, and waits that cover nothing (notes).
        #[arg(long)]
        suggest: bool,
        /// Report only hazards FILE has that BASE does not (or has with a
        /// stricter wait): lines are matched by a diff alignment of the two
        /// files. Exit 1 if there is any. BASE: asm, or a code object (lifted).
        /// Without it, every hazard of FILE is listed.
        #[arg(long, value_name = "BASE")]
        baseline: Option<PathBuf>,
    },
    /// Run one dispatch of a kernel of a code object in the emulator (no GPU
    /// needed; gfx90a, gfx942, gfx950 wave64; gfx11, gfx12 wave32/64; gfx1250 wave32). Exit 0: ran clean; 1: a
    /// fault, an unsupported instruction or the instruction budget; 2: bad
    /// input.
    Run {
        /// The code object (.hsaco, .co).
        object: PathBuf,
        /// The kernel's name (with --list-unsupported: only this kernel).
        #[arg(long, short, required_unless_present = "list_unsupported")]
        kernel: Option<String>,
        /// Workgroups in X[,Y[,Z]] (HIP's grid).
        #[arg(
            long,
            value_name = "X[,Y[,Z]]",
            required_unless_present = "list_unsupported"
        )]
        grid: Option<String>,
        /// Work-items per workgroup in X[,Y[,Z]] (HIP's block).
        #[arg(
            long,
            value_name = "X[,Y[,Z]]",
            required_unless_present = "list_unsupported"
        )]
        block: Option<String>,
        /// gfx1250: workgroups per cluster in X[,Y[,Z]] (HIP's
        /// hipLaunchAttributeClusterDimension, at most 16 in all; the grid
        /// must be whole clusters). Default: the kernel's .cluster_dims
        /// (clang's cluster_dims attribute); 1 runs without clusters. The
        /// workgroups of a cluster run together and meet at the cluster
        /// barrier (s_barrier_signal -3).
        #[arg(long, value_name = "X[,Y[,Z]]")]
        cluster: Option<String>,
        /// Run nothing: list the mnemonics of OBJECT's kernels (or of
        /// --kernel) that the emulator does not implement, with counts and
        /// the first of each. Exit 0 only when nothing is missing.
        #[arg(long, conflicts_with_all = ["grid", "block", "args", "out", "sanitize"])]
        list_unsupported: bool,
        /// An explicit kernel argument: NAME=SPEC fills the argument whose
        /// metadata name is NAME (a repeated name takes the next argument
        /// of that name); a plain SPEC fills the next argument not given by
        /// name, in metadata order. SPEC: PATH.npy (a buffer holding the
        /// array), out:DTYPE:COUNT (a buffer of COUNT elements, every byte
        /// 0xff: NaN for floats, -1 for integers), or DTYPE:VALUE (a value;
        /// u64:0 is a null pointer). DTYPE: i8, u8, i16, u16, i32, u32,
        /// i64, u64, f16, bf16, f32, f64.
        #[arg(long = "arg", value_name = "[NAME=]SPEC", allow_hyphen_values = true)]
        args: Vec<String>,
        /// Fill every by-value argument no --arg gives with zeros (aiter's
        /// `pad`s). Pointers are never filled: give each one, u64:0 for
        /// a null pointer.
        #[arg(long)]
        zero_rest: bool,
        /// Write every buffer argument I to DIR/arg<I>.npy after a clean run
        /// (bf16 as its raw bits, <u2). Without it nothing is written.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Run the sanitizer with these checks (plain `--sanitize`: all but
        /// barrier-pairs): waits (premature reads of registers a load in
        /// flight still writes), races (LDS races between waves, LDS stores
        /// in flight at s_barrier), uninit (values from LDS bytes or
        /// registers nothing wrote, reported where used: an address, a
        /// branch, the exec mask, a store to global memory), bounds (global accesses outside every buffer, LDS accesses outside the allocation), barriers
        /// (a wave never reaching the barrier others wait at), barrier-pairs
        /// (opt-in: waves released from different s_barrier instructions, or
        /// ended while others wait; legal on hardware). Any finding: its
        /// report on stderr, exit 1 (the buffers are still written).
        #[arg(long, value_name = "CHECK,…", num_args = 0..=1, require_equals = true, default_missing_value = "default", value_parser = parse_checks)]
        sanitize: Option<Checks>,
        /// Schedule seed: 0 runs the waves of a workgroup in turn, each
        /// until it ends or reaches s_barrier; any other value interleaves
        /// them in a seeded order and slices. The same seed gives the same
        /// results and report.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// The asm source OBJECT was assembled from: sanitizer findings and
        /// unsupported-instruction errors name its file:line for each
        /// instruction.
        #[arg(long, value_name = "FILE")]
        asm: Option<PathBuf>,
        /// Instructions one wave may execute before it is stopped as
        /// looping (default 100000000).
        #[arg(long, value_name = "N")]
        max_instructions: Option<u64>,
        /// The memory cap in bytes: buffers, kernarg, and each workgroup in
        /// flight's LDS, registers and scratch (private segment × 64 lanes
        /// per wave). A dispatch over it is refused before it runs (exit 2).
        /// Default 4294967296 (4 GiB).
        #[arg(long, value_name = "BYTES")]
        max_memory: Option<u64>,
        /// The total work budget in wave-instructions over the dispatch: a
        /// grid with more waves is refused before it runs, a run that
        /// reaches it is stopped (exit 2). Default 1000000000.
        #[arg(long, value_name = "N")]
        max_work: Option<u64>,
        /// Dynamic LDS bytes per workgroup, beyond the static LDS of the
        /// kernel descriptor (HIP's sharedMemBytes, for `extern __shared__`;
        /// a Triton kernel's `shared`, in its metadata .json and in
        /// kernels.toml). LDS accesses outside static + dynamic read 0 and
        /// their writes are dropped: the summary counts them.
        #[arg(long, value_name = "BYTES", default_value_t = 0)]
        dynamic_lds: u32,
        /// Run a generic-target object (gfx9-4-generic) as this processor
        /// of its family (default: the first the emulator runs, gfx942 for
        /// gfx9-4-generic; the output says which).
        #[arg(long = "as", value_name = "PROCESSOR")]
        run_as: Option<String>,
        /// Interleave each workgroup's waves N instructions at a time, in
        /// wave order: 1 issues one instruction of each wave in turn, so
        /// that a kernel relying on issue timing between barriers computes
        /// as on hardware. Default 0: each wave runs until it ends or
        /// reaches s_barrier. Not with --seed (a seeded schedule slices on
        /// its own).
        #[arg(long, value_name = "N", default_value_t = 0, conflicts_with = "seed")]
        slice: u64,
        /// Move the results of approximate instructions (v_rcp_f32,
        /// v_sqrt_f32, v_exp_f32, …) within the hardware's documented error,
        /// as a function of the input chosen by SEED, to see whether the
        /// outputs depend on their exact values. Default: correctly rounded.
        #[arg(long, value_name = "SEED")]
        perturb_approx: Option<u64>,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Profile one dispatch of a kernel in the emulator: exact counters of
    /// the workgroups run (executions, active lanes, LDS bank conflicts,
    /// global lines, MFMA FLOPs, waits, barriers) and a predicted time on
    /// a device from a trace-driven timing model (a model, not a
    /// measurement: the report says what it samples, assumes and leaves
    /// out). Takes the same launch arguments as `run`; or, given a
    /// manifest kernel's name and no --grid, profiles its declared launches
    /// unpatched and patched side by side. Exit 0: profiled; 1: the
    /// emulated kernel failed; 2: bad input.
    Profile {
        /// The code object (.hsaco, .co); or, without --grid, the name of a
        /// kernel of the manifest with declared launches.
        object: PathBuf,
        /// The kernel's name in OBJECT.
        #[arg(long, short, requires = "grid")]
        kernel: Option<String>,
        /// Workgroups in X[,Y[,Z]] (HIP's grid).
        #[arg(long, value_name = "X[,Y[,Z]]", requires_all = ["kernel", "block"])]
        grid: Option<String>,
        /// Work-items per workgroup in X[,Y[,Z]] (HIP's block).
        #[arg(long, value_name = "X[,Y[,Z]]", requires = "grid")]
        block: Option<String>,
        /// With a manifest kernel: only this target.
        #[arg(long, short, conflicts_with = "grid")]
        target: Option<String>,
        /// With a manifest kernel: the manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// An explicit kernel argument, as `run --arg`: NAME=SPEC or SPEC;
        /// SPEC: PATH.npy, out:DTYPE:COUNT or DTYPE:VALUE.
        #[arg(long = "arg", value_name = "[NAME=]SPEC", allow_hyphen_values = true)]
        args: Vec<String>,
        /// Fill every by-value argument no --arg gives with zeros.
        #[arg(long)]
        zero_rest: bool,
        /// The device to time on: mi300x, mi308x (gfx942), mi355x (gfx950),
        /// rx7900xtx (gfx1100), rx9070xt (gfx1201).
        #[arg(long, value_name = "DEVICE")]
        device: String,
        /// Also write the report as JSON to FILE (schema: the book's
        /// reference page "profile --json").
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Also write the timing model's schedule of one CU round as Chrome
        /// trace-event JSON to FILE, for Perfetto or chrome://tracing: a
        /// process per workgroup, a thread per wave, slices for issue and
        /// for stalls by reason (schema: the book's reference page "profile
        /// --trace").
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Also write the report as one self-contained HTML page to FILE:
        /// the prediction, the stall reasons and the asm coloured by stall
        /// cycles; with a manifest kernel, unpatched against patched.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Also write the annotated asm listing to FILE: every instruction,
        /// executed or not, after its stall cycles, main stall reason,
        /// executions, bank conflicts and lines per access.
        #[arg(long, value_name = "FILE")]
        annotate: Option<PathBuf>,
        /// Hottest lines to show (default 10).
        #[arg(long, value_name = "N", default_value_t = 10)]
        top: usize,
        /// The asm source OBJECT was assembled from: lines are named by its
        /// file:line.
        #[arg(long, value_name = "FILE")]
        asm: Option<PathBuf>,
        /// Instructions one wave may execute before it is stopped as
        /// looping (default 100000000).
        #[arg(long, value_name = "N")]
        max_instructions: Option<u64>,
        /// Dynamic LDS bytes per workgroup, as `run --dynamic-lds`.
        #[arg(long, value_name = "BYTES", default_value_t = 0)]
        dynamic_lds: u32,
        /// Run a generic-target object as this processor (default: the
        /// device's).
        #[arg(long = "as", value_name = "PROCESSOR")]
        run_as: Option<String>,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Print this command-line reference as Markdown (the book's
    /// docs/src/reference/cli-options.md is generated with it).
    #[command(hide = true)]
    MarkdownHelp,
}

/// How `build` and `triton-override` run the build engine.
#[derive(clap::Args)]
pub(crate) struct EngineArgs {
    /// Fail, with a per-entry diff, if the build does not reproduce
    /// kernels.lock (the lock is not written).
    #[arg(long)]
    pub(crate) locked: bool,
    /// Parallel jobs (default: the number of CPUs).
    #[arg(long, short)]
    pub(crate) jobs: Option<usize>,
    #[command(flatten)]
    pub(crate) llvm: LlvmArgs,
}

#[derive(clap::Args)]
pub(crate) struct LlvmArgs {
    /// Directory holding clang and ld.lld (default: search; see docs/src/reference/toolchain.md).
    #[arg(long, global = true)]
    pub(crate) llvm_bin: Option<PathBuf>,
    /// Time limit of every clang/ld.lld run, in seconds (default 300, or
    /// GCN_PATCH_TOOL_TIMEOUT); a tool past it is killed with its children.
    #[arg(long, global = true, value_name = "SECONDS", value_parser = parse_tool_timeout)]
    pub(crate) tool_timeout: Option<std::time::Duration>,
}

fn parse_tool_timeout(text: &str) -> Result<std::time::Duration, String> {
    gcn_patch::ops::parse_timeout(text)
}

impl LlvmArgs {
    /// The library's view of these options.
    pub(crate) fn tools(&self) -> Tools {
        Tools {
            llvm_bin: self.llvm_bin.clone(),
            tool_timeout: self.tool_timeout,
        }
    }
}

/// The command-line reference in Markdown, from the argument parser itself.
pub(crate) fn markdown_help() -> String {
    let options = clap_markdown::MarkdownOptions::new()
        .title("Command-line options".to_string())
        .show_footer(false);
    let body = escape_angle_brackets(&clap_markdown::help_markdown_custom::<Cli>(&options));
    format!(
        "<!-- Generated by `gcn-patch markdown-help`; do not edit. Regenerate with\n     \
         cargo run -p gcn-patch -- markdown-help > docs/src/reference/cli-options.md -->\n\n{body}"
    )
}

/// `<kernel>` in help text is a placeholder, not an HTML tag: escape `<` and
/// `>` outside code spans and fenced blocks, so Markdown renderers show it.
fn escape_angle_brackets(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut fenced = false;
    for line in markdown.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            out.push_str(line);
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            match c {
                '`' => {
                    in_code = !in_code;
                    out.push(c);
                }
                '<' if !in_code => out.push_str("&lt;"),
                '>' if !in_code => out.push_str("&gt;"),
                _ => out.push(c),
            }
        }
    }
    out
}

/// `--sanitize=CHECK,…`: the sanitizer's checks by name.
fn parse_checks(s: &str) -> Result<Checks, String> {
    Checks::parse(s)
}
