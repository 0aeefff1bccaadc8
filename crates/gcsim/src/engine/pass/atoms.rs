//! The atoms of a window where a pass keeps bin ranges (a trace's repeated
//! times): each window's table of atoms keyed by their bits, and where it
//! is full the two most recent values and a list.

use super::{Counts, Window};

impl Counts {
    /// Counts `count` values `v` in window `w`'s table of atoms where it
    /// holds `v`'s atom or has room for it (a new atom widens the range
    /// inside); false where the table is sealed or full without it.
    #[inline(always)]
    pub(super) fn count_in_table(&mut self, w: usize, v: f64, count: u32, win: &Window) -> bool {
        let Some(table) = self.held.get_mut(w * HELD..(w + 1) * HELD) else {
            return false;
        };
        let mut i = table_slot(v);
        loop {
            let slot = &mut table[i];
            // Equal bits: an atom's range is its value, whatever its sign of zero.
            if slot.value.to_bits() == v.to_bits() {
                slot.count += count;
                return true;
            }
            if slot.count == 0 {
                if self.held_len[w] == HELD_MAX {
                    return false;
                }
                *slot = Atom {
                    value: v,
                    bin: win.bin(v) as u32,
                    count,
                };
                self.held_len[w] += 1;
                let inside = &mut self.inside[w];
                *inside = (inside.0.min(v), inside.1.max(v));
                return true;
            }
            i = (i + 1) % HELD;
        }
    }

    /// Moves the tables' atoms to the lists and frees the tables: a
    /// block's chunks wait for each other with their counts, and the
    /// tables are mostly empty.
    pub(crate) fn seal(&mut self) {
        for (w, table) in self.held.chunks_exact(HELD).enumerate() {
            self.atoms[w].extend(table.iter().filter(|a| a.count > 0));
        }
        self.held = Vec::new();
        self.held_len.fill(0);
    }

    /// Window `w`'s atoms (where the pass tracks bin ranges).
    pub(super) fn atoms_of(&self, w: usize) -> impl Iterator<Item = &Atom> {
        let held = self.held.get(w * HELD..(w + 1) * HELD).unwrap_or_default();
        self.atoms[w]
            .iter()
            .chain(held)
            .chain(&self.recent[w])
            .filter(|a| a.count > 0)
    }
}

/// Atoms in a window's table (a power of two).
pub(super) const HELD: usize = 64;
/// Atoms a table takes at most: three quarters full, its probes stay
/// short (and a probe always meets an empty slot).
const HELD_MAX: usize = 48;
const _: () = assert!(HELD_MAX < HELD && HELD.is_power_of_two());

/// Where a window's table first looks for `v`'s atom: Fibonacci hashing
/// of its bits (then linear probing).
#[inline(always)]
fn table_slot(v: f64) -> usize {
    (v.to_bits().wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - HELD.trailing_zeros())) as usize
}

/// A value inside a window, its bin, and how many times it came.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Atom {
    pub(super) value: f64,
    pub(super) bin: u32,
    pub(super) count: u32,
}

impl Atom {
    /// No value yet (NaN never lies inside a window).
    pub(super) const NONE: Atom = Atom {
        value: f64::NAN,
        bin: 0,
        count: 0,
    };
}
