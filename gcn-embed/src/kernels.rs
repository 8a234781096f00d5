//! [`Kernels`]: the table of every embedded kernel that gcn-build generates
//! as `KERNELS`, in manifest order and indexed by name.
//!
//! Looking a kernel up by name is a binary search over a copy of the table
//! that gcn-build sorts by name when it generates it: `O(log n)` string
//! comparisons, no hashing, no allocation, nothing built at run time (the
//! index is part of the `static`). A library of two thousand kernels is
//! found in about eleven comparisons.
//!
//! ```
//! use gcn_embed::{Kernel, Kernels};
//!
//! static SAXPY: Kernel = Kernel { name: "saxpy", iree_executable: None, objects: &[] };
//! static MATMUL: Kernel = Kernel { name: "matmul", iree_executable: None, objects: &[] };
//! // What gcn-build generates: manifest order, then the same kernels sorted by name.
//! static KERNELS: Kernels = Kernels::new(&[&SAXPY, &MATMUL], &[&MATMUL, &SAXPY]);
//!
//! assert_eq!(KERNELS.by_name("matmul").map(|k| k.name), Some("matmul"));
//! assert!(KERNELS.by_name("gemm").is_none());
//! let in_order: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
//! assert_eq!(in_order, ["saxpy", "matmul"]);
//! assert_eq!(KERNELS.check(), Ok(()));
//! ```

use std::cmp::Ordering;
use std::fmt;

use crate::select::Kernel;

/// Every kernel of a generated table: in manifest order ([`Kernels::iter`],
/// [`Kernels::as_slice`]) and sorted by name for [`Kernels::by_name`].
///
/// gcn-build generates one, `KERNELS`, in `$OUT_DIR/gcn_kernels.rs`. A
/// hand-written table must list the same kernels twice, the second time
/// sorted by name (byte order, as `str`'s `Ord`) without duplicates;
/// [`Kernels::check`] verifies that. On a table that breaks the rule,
/// `by_name` may miss a kernel, but never panics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernels {
    in_order: &'static [&'static Kernel],
    sorted: &'static [&'static Kernel],
}

/// Why a [`Kernels`] table is not well formed (see [`Kernels::check`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KernelsError {
    /// The two lists differ in length.
    Length {
        /// Kernels in manifest order.
        in_order: usize,
        /// Kernels in the by-name list.
        sorted: usize,
    },
    /// Two kernels have the same name.
    Duplicate {
        /// The name.
        name: &'static str,
    },
    /// The by-name list is not sorted at this position.
    Unsorted {
        /// Index in the by-name list of the first kernel out of order.
        index: usize,
        /// The name before it.
        previous: &'static str,
        /// Its name.
        name: &'static str,
    },
    /// A kernel of the manifest-order list is not in the by-name list.
    Missing {
        /// The kernel's name.
        name: &'static str,
    },
}

impl fmt::Display for KernelsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelsError::Length { in_order, sorted } => write!(
                f,
                "the kernel table lists {in_order} kernel(s) in manifest order but {sorted} by name"
            ),
            KernelsError::Duplicate { name } => {
                write!(f, "kernel `{name}` is listed twice in the kernel table")
            }
            KernelsError::Unsorted {
                index,
                previous,
                name,
            } => write!(
                f,
                "the kernel table's by-name list is not sorted: `{name}` (position {index}) \
                 comes after `{previous}`"
            ),
            KernelsError::Missing { name } => write!(
                f,
                "kernel `{name}` is in the kernel table but not in its by-name list"
            ),
        }?;
        write!(
            f,
            "; regenerate it with gcn-build, or list the same kernels sorted by name"
        )
    }
}

impl std::error::Error for KernelsError {}

impl Kernels {
    /// A table of `in_order` (manifest order) whose by-name index is
    /// `sorted`: the same kernels sorted by name without duplicates. Usable
    /// in a `static`; the order is not checked here (a compile-time check
    /// of thousands of long names costs seconds of const evaluation), but by
    /// [`Kernels::check`].
    ///
    /// # Panics
    ///
    /// When the two lists differ in length (at compile time in a `static`).
    pub const fn new(
        in_order: &'static [&'static Kernel],
        sorted: &'static [&'static Kernel],
    ) -> Self {
        assert!(
            in_order.len() == sorted.len(),
            "gcn_embed::Kernels::new: the by-name list must hold the same kernels as the manifest-order list"
        );
        Kernels { in_order, sorted }
    }

    /// The kernel named `name` (its manifest name, e.g. `"matmul"`), by
    /// binary search.
    pub fn by_name(&self, name: &str) -> Option<&'static Kernel> {
        let i = self.sorted.binary_search_by(|k| k.name.cmp(name)).ok()?;
        self.sorted.get(i).copied()
    }

    /// Every kernel, in manifest order.
    pub fn as_slice(&self) -> &'static [&'static Kernel] {
        self.in_order
    }

    /// Every kernel, sorted by name.
    pub fn sorted(&self) -> &'static [&'static Kernel] {
        self.sorted
    }

    /// Every kernel, in manifest order.
    pub fn iter(&self) -> std::iter::Copied<std::slice::Iter<'static, &'static Kernel>> {
        self.in_order.iter().copied()
    }

    /// Every kernel name, sorted (e.g. to list what is embedded when a
    /// lookup fails).
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        self.sorted.iter().map(|k| k.name)
    }

    /// Number of kernels.
    pub fn len(&self) -> usize {
        self.in_order.len()
    }

    /// True when the table holds no kernel.
    pub fn is_empty(&self) -> bool {
        self.in_order.is_empty()
    }

    /// Verifies the table: both lists hold the same kernels, the by-name
    /// list is strictly sorted (so no name is listed twice), and every
    /// kernel is found by [`Kernels::by_name`]. gcn-build's tables always
    /// pass; call it in a test of a hand-written one.
    pub fn check(&self) -> Result<(), KernelsError> {
        if self.in_order.len() != self.sorted.len() {
            return Err(KernelsError::Length {
                in_order: self.in_order.len(),
                sorted: self.sorted.len(),
            });
        }
        for (index, pair) in self.sorted.windows(2).enumerate() {
            let (previous, name) = (pair[0].name, pair[1].name);
            match previous.cmp(name) {
                Ordering::Less => {}
                Ordering::Equal => return Err(KernelsError::Duplicate { name }),
                Ordering::Greater => {
                    return Err(KernelsError::Unsorted {
                        index: index + 1,
                        previous,
                        name,
                    })
                }
            }
        }
        // Each kernel in manifest order maps to its own by-name entry: with
        // equal lengths, the two lists hold the same names.
        let mut seen = vec![false; self.sorted.len()];
        for k in self.in_order {
            let Ok(i) = self.sorted.binary_search_by(|s| s.name.cmp(k.name)) else {
                return Err(KernelsError::Missing { name: k.name });
            };
            if std::mem::replace(&mut seen[i], true) {
                return Err(KernelsError::Duplicate { name: k.name });
            }
        }
        Ok(())
    }
}

impl IntoIterator for Kernels {
    type Item = &'static Kernel;
    type IntoIter = std::iter::Copied<std::slice::Iter<'static, &'static Kernel>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for &Kernels {
    type Item = &'static Kernel;
    type IntoIter = std::iter::Copied<std::slice::Iter<'static, &'static Kernel>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::ops::Index<usize> for Kernels {
    type Output = Kernel;

    /// The `index`th kernel in manifest order.
    fn index(&self, index: usize) -> &Kernel {
        self.in_order[index]
    }
}
