//! Line alignment: which lines of one text are the same lines of another.
//! The one place that runs a diff algorithm over lines (similar's Patience
//! diff); the unified-diff format itself — parsing patches and writing them
//! — is diffy's, in the patch stage.

/// The lines two texts share, found by a Patience diff: equal lines of the
/// longest common subsequence, matched both ways.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Alignment {
    /// For each line of `a`, the line of `b` it is.
    pub(crate) a_to_b: Vec<Option<usize>>,
    /// For each line of `b`, the line of `a` it is.
    pub(crate) b_to_a: Vec<Option<usize>>,
}

/// Align the lines `a` with the lines `b`.
pub(crate) fn align(a: &[&str], b: &[&str]) -> Alignment {
    let mut a_to_b = vec![None; a.len()];
    let mut b_to_a = vec![None; b.len()];
    for op in similar::capture_diff_slices(similar::Algorithm::Patience, a, b) {
        if let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                a_to_b[old_index + k] = Some(new_index + k);
                b_to_a[new_index + k] = Some(old_index + k);
            }
        }
    }
    Alignment { a_to_b, b_to_a }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moved_and_edited_lines() {
        let a = ["x", "a", "b", "c", "d"];
        let b = ["a", "b", "y", "d", "x"];
        let al = align(&a, &b);
        // Patience keeps the longest run of unique common lines (a b … d),
        // so the moved `x` and the edited `c`/`y` are unmatched.
        assert_eq!(al.a_to_b, [None, Some(0), Some(1), None, Some(3)]);
        assert_eq!(al.b_to_a, [Some(1), Some(2), None, Some(4), None]);
    }
}
