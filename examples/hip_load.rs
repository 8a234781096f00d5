//! Ask the HIP runtime for the GPU's `gcnArchName`, select the matching
//! embedded code object and load it with `hipModuleLoadData`.
//!
//! When no HIP runtime (`libamdhip64.so`) or no AMD GPU is present, it says so
//! and falls back to `--isa`:
//!
//! ```text
//! cargo run --example hip_load -- [--isa gfx942] [--kernel matmul]
//! ```
//!
//! The runtime is opened with `dlopen`, so the example builds and runs
//! everywhere; nothing here links against ROCm.
use std::ffi::{c_char, c_int, c_void, CStr};
use std::process::ExitCode;

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}
const RTLD_NOW: c_int = 2;

type GetProps = unsafe extern "C" fn(*mut u8, c_int) -> c_int;
type ModuleLoadData = unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int;

/// The HIP runtime, if one can be opened.
struct Hip {
    get_props: GetProps,
    load: ModuleLoadData,
}

impl Hip {
    fn open() -> Result<Hip, String> {
        let names: [&CStr; 2] = [c"libamdhip64.so", c"/opt/rocm/lib/libamdhip64.so"];
        // SAFETY: dlopen/dlsym are called with NUL-terminated strings; symbols are cast to
        // the signatures documented in hip_runtime_api.h.
        unsafe {
            let handle = names
                .iter()
                .map(|n| dlopen(n.as_ptr(), RTLD_NOW))
                .find(|h| !h.is_null());
            let Some(handle) = handle else {
                return Err("no HIP runtime: libamdhip64.so could not be opened".into());
            };
            let props = [c"hipGetDevicePropertiesR0600", c"hipGetDeviceProperties"]
                .iter()
                .map(|s| dlsym(handle, s.as_ptr()))
                .find(|p| !p.is_null())
                .ok_or("libamdhip64.so has no hipGetDeviceProperties")?;
            let load = dlsym(handle, c"hipModuleLoadData".as_ptr());
            if load.is_null() {
                return Err("libamdhip64.so has no hipModuleLoadData".into());
            }
            Ok(Hip {
                get_props: std::mem::transmute::<*mut c_void, GetProps>(props),
                load: std::mem::transmute::<*mut c_void, ModuleLoadData>(load),
            })
        }
    }

    /// Device 0's `gcnArchName`, e.g. `gfx942:sramecc+:xnack-`.
    fn arch_name(&self) -> Result<String, String> {
        // hipDeviceProp_t is large and its layout changed between ROCm releases; give it
        // ample room and find the `gcnArchName` field, the only `gfx…` string in it.
        let mut buf = vec![0u8; 16 * 1024];
        // SAFETY: the buffer is larger than any hipDeviceProp_t version.
        let rc = unsafe { (self.get_props)(buf.as_mut_ptr(), 0) };
        if rc != 0 {
            return Err(format!(
                "hipGetDeviceProperties failed with error {rc} (no AMD GPU?)"
            ));
        }
        find_arch(&buf).ok_or_else(|| "no gcnArchName in the device properties".into())
    }

    fn load(&self, bytes: &[u8]) -> Result<(), String> {
        let mut module = std::ptr::null_mut();
        // SAFETY: `bytes` is a complete code object that outlives the call.
        let rc = unsafe { (self.load)(&mut module, bytes.as_ptr().cast()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(format!("hipModuleLoadData failed with error {rc}"))
        }
    }
}

/// The first NUL-terminated `gfx…` string in `buf`.
fn find_arch(buf: &[u8]) -> Option<String> {
    let start = buf.windows(3).position(|w| w == b"gfx")?;
    let len = buf[start..].iter().position(|&b| b == 0)?;
    String::from_utf8(buf[start..start + len].to_vec()).ok()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut isa = None;
    let mut kernel = "matmul".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match (a.as_str(), it.next()) {
            ("--isa", Some(v)) => isa = Some(v.clone()),
            ("--kernel", Some(v)) => kernel = v.clone(),
            _ => {
                eprintln!("usage: hip_load [--isa ISA] [--kernel NAME]");
                return ExitCode::from(2);
            }
        }
    }
    let hip = Hip::open();
    let arch = match (&hip, &isa) {
        (Ok(hip), None) => match hip.arch_name() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("{e}; pass --isa to choose a target by hand");
                return ExitCode::FAILURE;
            }
        },
        (Err(e), None) => {
            eprintln!(
                "{e}; falling back to --isa, which was not given: using gfx942:sramecc+:xnack-"
            );
            "gfx942:sramecc+:xnack-".into()
        }
        (Err(e), Some(isa)) => {
            println!("{e}; falling back to --isa {isa}");
            isa.clone()
        }
        (Ok(_), Some(isa)) => isa.clone(),
    };
    let Some(k) = gcn_patch_demo::kernel(&kernel) else {
        eprintln!("error: no embedded kernel `{kernel}`");
        return ExitCode::FAILURE;
    };
    let object = match k.select(&arch) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "selected {} for {arch} ({} bytes)",
        object.target,
        object.bytes.len()
    );
    match &hip {
        Ok(hip) => match hip.load(object.bytes) {
            Ok(()) => println!("loaded with hipModuleLoadData"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        Err(_) => println!("not loaded: no HIP runtime on this machine"),
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_arch_name_in_a_property_blob() {
        let mut blob = vec![0u8; 64];
        blob[10..16].copy_from_slice(b"Radeon");
        blob[30..52].copy_from_slice(b"gfx942:sramecc+:xnack-");
        assert_eq!(
            super::find_arch(&blob).as_deref(),
            Some("gfx942:sramecc+:xnack-")
        );
        assert_eq!(super::find_arch(&[0u8; 8]), None);
    }
}
