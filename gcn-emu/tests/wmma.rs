//! RDNA WMMA/SWMMAC (issue 35): the lane layouts of `gcn_emu::wmma` against
//! AMD's Matrix Instruction Calculator, and the arithmetic on instructions
//! assembled by llvm-mc-22 against a NumPy-free reference computed here from
//! the matrices themselves.

use gcn_emu::wmma::{Gen, Layout, Matrix, Op};

/// Every register slot of every lane of one instruction per layout class
/// (both generations, both wave sizes, A, B, C/D and the sparse index) is
/// the element AMD's calculator says (tests/rdna/wmma_layouts.txt, made by
/// tests/rdna/wmma_layouts.py from the calculator), and no other slot holds
/// one.
#[test]
fn layouts_are_amds_calculators() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rdna/wmma_layouts.txt");
    let text = std::fs::read_to_string(path).expect("tests/rdna/wmma_layouts.txt");
    let mut blocks = 0;
    let mut cells = 0;
    let mut lines = text.lines().filter(|l| !l.starts_with('#')).peekable();
    while let Some(head) = lines.next() {
        let f: Vec<&str> = head.split_whitespace().collect();
        assert_eq!(f[0], "layout", "{head}");
        let gen = match f[1] {
            "rdna3" => Gen::Gfx11,
            _ => Gen::Gfx12,
        };
        let op = Op::parse(f[2]).unwrap_or_else(|| panic!("{head}: not parsed"));
        let wave: usize = f[3].parse().unwrap();
        let m = match f[4] {
            "A" => Matrix::A,
            "B" => Matrix::B,
            "C" | "D" => Matrix::C,
            _ => Matrix::Index,
        };
        let l = Layout::new(gen, wave, op).unwrap_or_else(|| panic!("{head}: no layout"));
        let cols: Vec<(usize, usize, usize)> = lines
            .next()
            .unwrap()
            .strip_prefix("cols ")
            .unwrap()
            .split(' ')
            .map(|c| {
                let v: Vec<usize> = c.split('.').map(|x| x.parse().unwrap()).collect();
                (v[0], v[1], v[2])
            })
            .collect();
        let sb = l.slot_bits(m);
        let mut expected = std::collections::HashMap::new();
        while let Some(row) = lines.next_if(|l| !l.starts_with("layout")) {
            let (lane, hex) = row.split_once(' ').unwrap();
            let lane: usize = lane.parse().unwrap();
            for (c, &(reg, lo, hi)) in cols.iter().enumerate() {
                let cell = &hex[3 * c..3 * c + 3];
                assert_eq!(hi - lo, sb, "{head}: slot width of column {c}");
                if cell != "---" {
                    let i = usize::from_str_radix(&cell[..1], 16).unwrap();
                    let k = usize::from_str_radix(&cell[1..], 16).unwrap();
                    // B's cells are (j, k) of B[k][j].
                    let e = if m == Matrix::B { (k, i) } else { (i, k) };
                    expected.insert((reg, lane, lo / sb), e);
                }
            }
        }
        let mut ours = 0;
        for reg in 0..l.regs(m) {
            for lane in 0..wave {
                for slot in 0..32 / sb {
                    let got = l.element(m, reg, lane, slot);
                    let want = expected.get(&(reg, lane, slot)).copied();
                    assert_eq!(got, want, "{head}: v{reg} lane {lane} slot {slot}");
                    ours += got.is_some() as usize;
                }
            }
        }
        assert_eq!(ours, expected.len(), "{head}: slots outside our registers");
        blocks += 1;
        cells += ours;
    }
    assert_eq!(blocks, 108, "layouts in the file");
    assert!(cells > 20_000, "{cells}");
}
