//! Selection against real code objects built by clang-22 / ld.lld-22
//! (tests/data/regen.sh; flags.tsv records their e_flags and SHA-256).

use gcn_embed::elf::{read_header, EFlags, FeatureState, ELFABIVERSION_AMDGPU_HSA_V6};
use gcn_embed::select::{select, CodeObject, Kernel, Reason};
use gcn_embed::TargetId;

macro_rules! obj {
    ($target:literal, $file:literal, $sha:literal) => {
        CodeObject {
            target: $target,
            bytes: include_bytes!(concat!("data/", $file)),
            sha256: $sha,
            kernels: &["k"],
        }
    };
}

static GFX942: CodeObject = obj!(
    "gfx942",
    "gfx942.hsaco",
    "d8a2a00d506c01a9d94328b748eb8cf6c51694e6b35731279007a5a9db43bd4c"
);
static GFX942_SRAMECC_ON_XNACK_OFF: CodeObject = obj!(
    "gfx942:sramecc+:xnack-",
    "gfx942_srameccon_xnackoff.hsaco",
    "a4e00eb53ca8815b65ba92136022f7c771ed21c668fe0de68b3f552cd4b4679c"
);
static GFX942_XNACK_ON: CodeObject = obj!(
    "gfx942:xnack+",
    "gfx942_xnackon.hsaco",
    "5e1b97dc3756e13b426756adc072eeb9cdbee418650b112a5796957e6ce6f910"
);
static GFX90A: CodeObject = obj!(
    "gfx90a",
    "gfx90a.hsaco",
    "1ab73cfbeee212cfd4c0f69c27566dfb8f1cf67d8bbb567eab3c2f18e67f3eb8"
);
static GFX1100: CodeObject = obj!(
    "gfx1100",
    "gfx1100.hsaco",
    "93471eb6fc52449be3708d15712632c8e726d31f3899b14ba17bd0d8db9f93f7"
);
static GFX1201: CodeObject = obj!(
    "gfx1201",
    "gfx1201.hsaco",
    "d0c7fbeeb9578505f46577ce99d08252c4a3dfac55c246ae0730d09077b72b36"
);
static GFX9_4_GENERIC: CodeObject = obj!(
    "gfx9-4-generic",
    "gfx9-4-generic.hsaco",
    "f9e5fe686b4b39d2657810bad629eb049339f1f91459fe390c774a0a86a5d233"
);
static GFX11_GENERIC: CodeObject = obj!(
    "gfx11-generic",
    "gfx11-generic.hsaco",
    "9222b1315494fbe46e4975a7f22528ec6fb1d0221751acb104755e8fd77c91df"
);
static GFX12_GENERIC: CodeObject = obj!(
    "gfx12-generic",
    "gfx12-generic.hsaco",
    "768f450f2aa5b67f80002a9da13103dc882e9570ee44971eaa2b0fe2fc288dbe"
);

static ALL: [CodeObject; 9] = [
    GFX942,
    GFX942_SRAMECC_ON_XNACK_OFF,
    GFX942_XNACK_ON,
    GFX90A,
    GFX1100,
    GFX1201,
    GFX9_4_GENERIC,
    GFX11_GENERIC,
    GFX12_GENERIC,
];

static K: Kernel = Kernel {
    name: "k",
    iree_executable: None,
    objects: &ALL,
};

fn pick(objects: &[CodeObject], agent: &str) -> &'static str {
    match select(objects, agent) {
        Ok(o) => o.target,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn e_flags_of_real_objects() {
    // Values from `llvm-readelf-22 -h` (tests/data/flags.tsv).
    for (o, flags) in [
        (&GFX942, 0x54c),
        (&GFX942_SRAMECC_ON_XNACK_OFF, 0xe4c),
        (&GFX942_XNACK_ON, 0x74c),
        (&GFX90A, 0x53f),
        (&GFX1100, 0x41),
        (&GFX1201, 0x4e),
        (&GFX9_4_GENERIC, 0x100055f),
        (&GFX11_GENERIC, 0x1000054),
        (&GFX12_GENERIC, 0x1000059),
    ] {
        let h = read_header(o.bytes).unwrap();
        assert_eq!(h.e_flags, flags, "{}", o.target);
        assert_eq!(h.abi_version, ELFABIVERSION_AMDGPU_HSA_V6, "{}", o.target);
        assert_eq!(h.code_object_version(), Some(6));
        assert_eq!(h.e_type, 3, "linked hsaco is ET_DYN");
        let t = TargetId::parse(o.target).unwrap();
        assert_eq!(EFlags::for_target(&t).encode(), flags, "{}", o.target);
        assert_eq!(EFlags::decode(flags).target_id(), Some(t));
        o.verify().unwrap();
    }
    let d = read_header(GFX942_XNACK_ON.bytes).unwrap().flags();
    assert_eq!((d.xnack, d.sramecc), (FeatureState::On, FeatureState::Any));
}

#[test]
fn exact_processor_match() {
    assert_eq!(
        pick(&ALL, "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
        "gfx90a"
    );
    assert_eq!(pick(&ALL, "amdgcn-amd-amdhsa--gfx1100"), "gfx1100");
    assert_eq!(pick(&ALL, "gfx1201"), "gfx1201");
    // Exact beats generic even when the generic object comes first.
    assert_eq!(pick(&[GFX11_GENERIC, GFX1100], "gfx1100"), "gfx1100");
    assert_eq!(
        pick(&[GFX9_4_GENERIC, GFX942], "gfx942:sramecc+:xnack-"),
        "gfx942"
    );
}

#[test]
fn generic_fallback() {
    // No gfx1101 object: the gfx11-generic one runs (ROCR Isa::IsCompatible,
    // generic branch).
    assert_eq!(pick(&ALL, "amdgcn-amd-amdhsa--gfx1101"), "gfx11-generic");
    assert_eq!(pick(&ALL, "gfx1151"), "gfx11-generic");
    assert_eq!(pick(&ALL, "gfx1200"), "gfx12-generic");
    assert_eq!(
        pick(&ALL, "amdgcn-amd-amdhsa--gfx950:sramecc+:xnack-"),
        "gfx9-4-generic"
    );
    // gfx90a has no generic target: gfx9-4-generic is not for it.
    let e = select(&[GFX9_4_GENERIC], "gfx90a:sramecc+:xnack-").unwrap_err();
    assert_eq!(
        e.rejected()[0].1,
        Reason::OtherProcessor {
            object: "gfx9-4-generic"
        }
    );
}

#[test]
fn generic_version_zero_is_rejected() {
    // Same object with EF_AMDGPU_GENERIC_VERSION cleared: the loader no
    // longer treats it as generic (CLR getGenericVersion returns 0).
    let mut bytes = GFX11_GENERIC.bytes.to_vec();
    bytes[51] = 0; // high byte of e_flags (offset 48, little-endian)
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    let patched = [CodeObject {
        bytes,
        sha256: "",
        ..GFX11_GENERIC
    }];
    let e = select(&patched, "gfx1101").unwrap_err();
    assert_eq!(e.rejected()[0].1, Reason::GenericVersion { found: 0 });
    // Same with the generic version intact but code object v5 (ABI version
    // 3): the version byte is ignored outside v6.
    let mut v5 = GFX11_GENERIC.bytes.to_vec();
    v5[8] = 3;
    let v5: &'static [u8] = Box::leak(v5.into_boxed_slice());
    let e = select(
        &[CodeObject {
            bytes: v5,
            sha256: "",
            ..GFX11_GENERIC
        }],
        "gfx1101",
    )
    .unwrap_err();
    assert_eq!(e.rejected()[0].1, Reason::GenericVersion { found: 0 });
    assert!(
        e.to_string().contains("generic version 0 in e_flags"),
        "{e}"
    );
}

#[test]
fn pinned_features() {
    let objs = [GFX942, GFX942_SRAMECC_ON_XNACK_OFF, GFX942_XNACK_ON];
    // Agent sramecc+ xnack-: the pinned match beats "any".
    assert_eq!(
        pick(&objs, "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"),
        "gfx942:sramecc+:xnack-"
    );
    // Agent xnack+: only the any object and the xnack+ object match; the
    // pinned one wins.
    assert_eq!(pick(&objs, "gfx942:sramecc+:xnack+"), "gfx942:xnack+");
    // Agent sramecc-: the sramecc+ object is out, xnack- leaves the any one.
    assert_eq!(pick(&objs, "gfx942:sramecc-:xnack-"), "gfx942");
    // Only pinned objects, agent with the other setting: no match.
    let e = select(&[GFX942_XNACK_ON], "gfx942:sramecc+:xnack-").unwrap_err();
    assert_eq!(
        e.rejected()[0].1.to_string(),
        "needs xnack+ but the agent runs with xnack-"
    );
    // Agent name without features (user input): unknown settings accept
    // anything; the first object wins at equal rank.
    assert_eq!(pick(&[GFX942_XNACK_ON, GFX942], "gfx942"), "gfx942:xnack+");
}

#[test]
fn kernel_api() {
    assert_eq!(K.select("gfx1101").unwrap().target, "gfx11-generic");
    assert_eq!(K.get("gfx942").unwrap().target, "gfx942");
    assert_eq!(
        K.get("amdgcn-amd-amdhsa--gfx942:xnack-:sramecc+")
            .unwrap()
            .target,
        "gfx942:sramecc+:xnack-"
    );
    assert!(K.get("gfx1101").is_none());
    assert_eq!(K.objects().count(), 9);
    assert!(K.objects().all(|o| o.has_kernel("k")));
}

#[test]
fn no_match_error_text() {
    let k = Kernel {
        name: "matmul",
        iree_executable: Some("matmul_dispatch_0"),
        objects: &ALL,
    };
    let e = k.select("amdgcn-amd-amdhsa--gfx1030").unwrap_err();
    assert_eq!(e.kernel(), Some("matmul"));
    assert_eq!(
        e.to_string(),
        "no embedded code object for kernel `matmul` runs on agent `amdgcn-amd-amdhsa--gfx1030`
  agent target ID: gfx1030
  the agent accepts: `gfx1030` or `gfx10-3-generic` (generic version >= 1)
  embedded:
    gfx942: built for another processor (gfx942)
    gfx942:sramecc+:xnack-: built for another processor (gfx942)
    gfx942:xnack+: built for another processor (gfx942)
    gfx90a: built for another processor (gfx90a)
    gfx1100: built for another processor (gfx1100)
    gfx1201: built for another processor (gfx1201)
    gfx9-4-generic: built for another processor (gfx9-4-generic)
    gfx11-generic: built for another processor (gfx11-generic)
    gfx12-generic: built for another processor (gfx12-generic)
  help: if the kernel should run on this agent, add `gfx1030` or `gfx10-3-generic` to its targets (kernels.toml) and rebuild; compiler output retargets safely, but hand-written code may rely on its own processor's timing and features, which no check sees: test it on `gfx1030` first"
    );
    let e = select(
        &[GFX942_XNACK_ON],
        "amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "no embedded code object runs on agent `amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+`
  agent target ID: gfx90a:sramecc-:xnack+
  the agent accepts: `gfx90a`, sramecc- or sramecc unspecified, xnack+ or xnack unspecified
  embedded:
    gfx942:xnack+: built for another processor (gfx942)
  help: if the kernel should run on this agent, add `gfx90a` to its targets (kernels.toml) and rebuild; compiler output retargets safely, but hand-written code may rely on its own processor's timing and features, which no check sees: test it on `gfx90a` first"
    );
    let e = select(&[], "gfx942").unwrap_err();
    assert!(e.to_string().contains("embedded: nothing"), "{e}");
}

#[test]
fn unparseable_agent_and_objects() {
    let e = K.select("amdgcn-amd-amdhsa--gfx9999").unwrap_err();
    assert!(e.agent().is_err());
    assert_eq!(
        e.to_string(),
        "cannot pick a code object for kernel `k`: the agent ISA name \
         `amdgcn-amd-amdhsa--gfx9999` is invalid
  cause: invalid target ID `amdgcn-amd-amdhsa--gfx9999`: unknown processor `gfx9999`; did you \
         mean gfx909, gfx900, gfx902? (run `gcn-patch targets` for the list of processors and \
         families)"
    );
    // Declared target disagrees with the ELF header.
    let lying = CodeObject {
        target: "gfx1100",
        ..GFX1201
    };
    let e = select(&[lying], "gfx1100").unwrap_err();
    assert_eq!(
        e.rejected()[0].1.to_string(),
        "ELF header says 0x4e, gfx1201 but the object is declared as gfx1100; rebuild it"
    );
    // Not an ELF at all.
    let junk = CodeObject {
        bytes: b"not an elf",
        ..GFX1100
    };
    let e = select(&[junk], "gfx1100").unwrap_err();
    assert!(
        e.rejected()[0]
            .1
            .to_string()
            .starts_with("bytes are not an AMDGPU code object"),
        "{e}"
    );
    assert!(junk.verify().is_err());
    // Corrupt bytes with the right header: caught by verify(), by SHA-256.
    let mut bad = GFX1100.bytes.to_vec();
    let last = bad.len() - 1;
    bad[last] ^= 0xff;
    let bad = CodeObject {
        bytes: Box::leak(bad.into_boxed_slice()),
        ..GFX1100
    };
    let msg = bad.verify().unwrap_err();
    assert!(
        msg.starts_with("code object for gfx1100 is corrupt: SHA-256 is "),
        "{msg}"
    );
}
