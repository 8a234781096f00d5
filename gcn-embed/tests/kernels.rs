//! `Kernels`, the table gcn-build generates as `KERNELS`: lookup by name (a
//! binary search over the by-name list), manifest order, and `check` on
//! tables that break the rules (duplicates, unsorted, missing, lengths).

use gcn_embed::{Kernel, Kernels, KernelsError};

/// A `'static` kernel named `name` with no code object.
fn kernel(name: &str) -> &'static Kernel {
    Box::leak(Box::new(Kernel {
        name: Box::leak(name.to_string().into_boxed_str()),
        iree_executable: None,
        objects: &[],
    }))
}

/// A table of `names` as gcn-build generates it: in the given order, then
/// sorted by name.
fn table(names: &[&str]) -> Kernels {
    let in_order: Vec<&'static Kernel> = names.iter().map(|n| kernel(n)).collect();
    let mut sorted = in_order.clone();
    sorted.sort_by(|a, b| a.name.cmp(b.name));
    Kernels::new(Box::leak(in_order.into()), Box::leak(sorted.into()))
}

/// Names shaped like a real library's: long shared prefixes (aiter's and
/// Tensile's kernel names differ late), numbers, mixed case, underscores.
fn library_names(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| match i % 4 {
            0 => format!("fmha_fwd_hd128_bf16_causal_gfx942_{i}"),
            1 => format!("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_{i:05}"),
            2 => format!("_ZN5aiter{}fused_moe_{i}E", i % 97),
            _ => format!("k{i}"),
        })
        .collect()
}

#[test]
fn every_name_of_a_large_table_is_found_and_others_are_not() {
    let names = library_names(5000);
    // A manifest order that is not the sorted one.
    let mut order: Vec<&str> = names.iter().map(String::as_str).collect();
    order.reverse();
    order.rotate_left(1234);
    let kernels = table(&order);
    assert_eq!(kernels.check(), Ok(()));
    assert_eq!(kernels.len(), 5000);
    for name in &names {
        let k = kernels
            .by_name(name)
            .unwrap_or_else(|| panic!("`{name}` not found"));
        assert_eq!(k.name, name);
    }
    // Near misses of every name: a prefix, an extension, another case.
    let present: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
    for name in &names {
        for miss in [
            &name[..name.len() - 1],
            &format!("{name}_"),
            &format!("{name}0"),
            &name.to_uppercase(),
        ] {
            if !present.contains(miss) {
                assert!(kernels.by_name(miss).is_none(), "`{miss}` was found");
            }
        }
    }
    for miss in ["", " ", "\u{10ffff}", "zzzz", "A", "k", "k5000"] {
        assert!(kernels.by_name(miss).is_none(), "`{miss}` was found");
    }
    // Manifest order is kept for iteration, indexing and `as_slice`.
    let iterated: Vec<&str> = kernels.iter().map(|k| k.name).collect();
    assert_eq!(iterated, order);
    let by_ref: Vec<&str> = (&kernels).into_iter().map(|k| k.name).collect();
    assert_eq!(by_ref, order);
    let by_value: Vec<&str> = kernels.into_iter().map(|k| k.name).collect();
    assert_eq!(by_value, order);
    assert_eq!(kernels[0].name, order[0]);
    assert_eq!(kernels.as_slice().len(), 5000);
    // `names` and `sorted` are in byte order.
    let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
    sorted.sort();
    assert_eq!(kernels.names().collect::<Vec<_>>(), sorted);
    assert_eq!(
        kernels.sorted().iter().map(|k| k.name).collect::<Vec<_>>(),
        sorted
    );
}

#[test]
fn empty_and_single_tables() {
    let empty = table(&[]);
    assert!(empty.is_empty());
    assert_eq!(empty.check(), Ok(()));
    assert!(empty.by_name("matmul").is_none());
    let one = table(&["matmul"]);
    assert_eq!(one.check(), Ok(()));
    assert_eq!(one.by_name("matmul").map(|k| k.name), Some("matmul"));
    assert!(one.by_name("matmu").is_none());
    assert!(one.by_name("matmulx").is_none());
}

/// Byte order, as `str`'s `Ord`: upper case before lower case, `_` between.
#[test]
fn the_order_is_byte_order() {
    let kernels = table(&["b", "_a", "B", "a", "A_", "\u{e9}"]);
    assert_eq!(kernels.check(), Ok(()));
    assert_eq!(
        kernels.names().collect::<Vec<_>>(),
        ["A_", "B", "_a", "a", "b", "\u{e9}"]
    );
    for n in ["b", "_a", "B", "a", "A_", "\u{e9}"] {
        assert_eq!(kernels.by_name(n).map(|k| k.name), Some(n));
    }
}

#[test]
fn check_names_what_is_wrong_with_a_hand_written_table() {
    let (a, b, c) = (kernel("a"), kernel("b"), kernel("c"));
    let leak = |v: Vec<&'static Kernel>| -> &'static [&'static Kernel] { Box::leak(v.into()) };

    // The same name twice, in both lists.
    let dup = Kernels::new(leak(vec![a, b, kernel("a")]), leak(vec![a, kernel("a"), b]));
    assert_eq!(dup.check(), Err(KernelsError::Duplicate { name: "a" }));
    // Listed twice in manifest order, once (with another kernel) by name.
    let dup = Kernels::new(leak(vec![a, a]), leak(vec![a, b]));
    assert_eq!(dup.check(), Err(KernelsError::Duplicate { name: "a" }));
    // Not sorted: the lookup misses, without a panic.
    let unsorted = Kernels::new(leak(vec![a, b, c]), leak(vec![c, a, b]));
    let err = unsorted.check().unwrap_err();
    assert_eq!(
        err,
        KernelsError::Unsorted {
            index: 1,
            previous: "c",
            name: "a"
        }
    );
    assert_eq!(
        err.to_string(),
        "the kernel table's by-name list is not sorted: `a` (position 1) comes after `c`; \
         regenerate it with gcn-build, or list the same kernels sorted by name"
    );
    let _ = unsorted.by_name("c");
    // A kernel missing from the by-name list.
    let missing = Kernels::new(leak(vec![a, c]), leak(vec![a, b]));
    assert_eq!(missing.check(), Err(KernelsError::Missing { name: "c" }));
    assert_eq!(
        missing.check().unwrap_err().to_string(),
        "kernel `c` is in the kernel table but not in its by-name list; \
         regenerate it with gcn-build, or list the same kernels sorted by name"
    );
}

/// Lists of different lengths are refused by the constructor: a compile
/// error for a `static`, a panic when built at run time.
#[test]
#[should_panic(expected = "the by-name list must hold the same kernels")]
fn lists_of_different_lengths_are_refused() {
    let a = kernel("a");
    let in_order: &'static [&'static Kernel] = Box::leak(vec![a].into());
    let _ = Kernels::new(in_order, &[]);
}

/// As generated: a `static`, usable in `for` loops like the slice it used to be.
#[test]
fn a_static_table_works_like_the_generated_one() {
    static MATMUL: Kernel = Kernel {
        name: "matmul",
        iree_executable: Some("matmul_dispatch_0"),
        objects: &[],
    };
    static SAXPY: Kernel = Kernel {
        name: "saxpy",
        iree_executable: None,
        objects: &[],
    };
    static KERNELS: Kernels = Kernels::new(&[&SAXPY, &MATMUL], &[&MATMUL, &SAXPY]);
    let mut seen = Vec::new();
    for k in KERNELS {
        seen.push(k.name);
    }
    assert_eq!(seen, ["saxpy", "matmul"]);
    assert_eq!(
        KERNELS.by_name("matmul").and_then(|k| k.iree_executable),
        Some("matmul_dispatch_0")
    );
    assert_eq!(KERNELS.check(), Ok(()));
}
