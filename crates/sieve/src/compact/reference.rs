//! CPU twin of the compaction: the sequential definition every strategy is checked against.

use super::{FlagRule, Rejected};

/// What a compaction of `[rows, len]` rows produces: per row, `len` output slots (values and
/// positions) and the survivor count. Slots the mode leaves unwritten (`Drop`) are `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted<T> {
    /// `[rows, len]` output values.
    pub values: Vec<Option<T>>,
    /// `[rows, len]` output positions (within the input row).
    pub indices: Vec<Option<usize>>,
    /// Survivors per row (`rows` entries).
    pub counts: Vec<usize>,
}

/// Row-wise compaction of `values` by `flags` (both `[rows, len]`): survivors first, in
/// input order, then what `rejected` says.
pub fn compact_rows<T: Copy + Default>(
    values: &[T],
    flags: &[bool],
    rows: usize,
    len: usize,
    rejected: Rejected,
) -> Compacted<T> {
    assert_eq!(values.len(), rows * len, "values are not [rows, len]");
    assert_eq!(flags.len(), rows * len, "flags are not [rows, len]");
    let mut out = Compacted {
        values: vec![None; rows * len],
        indices: vec![None; rows * len],
        counts: Vec::with_capacity(rows),
    };
    for row in 0..rows {
        let base = row * len;
        let survivors: Vec<usize> = (0..len).filter(|&i| flags[base + i]).collect();
        let others: Vec<usize> = (0..len).filter(|&i| !flags[base + i]).collect();
        for (slot, &i) in survivors.iter().enumerate() {
            out.values[base + slot] = Some(values[base + i]);
            out.indices[base + slot] = Some(i);
        }
        let tail = base + survivors.len();
        for (k, &i) in others.iter().enumerate() {
            match rejected {
                Rejected::Drop => {}
                Rejected::Zero => {
                    out.values[tail + k] = Some(T::default());
                    out.indices[tail + k] = Some(0);
                }
                Rejected::Keep => {
                    out.values[tail + k] = Some(values[base + i]);
                    out.indices[tail + k] = Some(i);
                }
            }
        }
        out.counts.push(survivors.len());
    }
    out
}

/// Element types the compaction's flags are defined for (every sieve dtype): how a value
/// compares with a threshold (`Flags::Compare`) and its bits (`Flags::BitClear`).
pub trait FlagElement: Copy + Default {
    /// `self <rule> threshold`, as the device decides it: floats compare (IEEE: NaN satisfies
    /// only `NotEqual`) with the threshold rounded to their dtype (through f32 for f16 and
    /// bf16, as the launch converts it); integers compare exactly with the f64 threshold.
    /// `rule` is a comparison (not `Mask` or `BitClear`).
    fn compare(self, rule: FlagRule, threshold: f64) -> bool;
    /// The two's-complement bits, sign-extended to 64 (integers; floats: their bit pattern).
    fn bits(self) -> u64;
}

/// `x <rule> t` by IEEE comparison of values of one type.
fn ieee<T: PartialOrd>(x: T, rule: FlagRule, t: T) -> bool {
    match rule {
        FlagRule::Greater => x > t,
        FlagRule::GreaterEqual => x >= t,
        FlagRule::Less => x < t,
        FlagRule::LessEqual => x <= t,
        FlagRule::Equal => x == t,
        FlagRule::NotEqual => x != t,
        FlagRule::Mask | FlagRule::BitClear | FlagRule::RunStart => {
            panic!("{rule:?} is not a comparison")
        }
    }
}

/// `x <rule> t` for an integer `x` and any f64 `t`, exactly (`as` saturates, so thresholds
/// beyond every 64-bit integer compare as infinities do).
fn exact(x: i128, rule: FlagRule, t: f64) -> bool {
    if t.is_nan() {
        return rule == FlagRule::NotEqual;
    }
    let equal = t.fract() == 0.0 && x == t as i128;
    match rule {
        FlagRule::Greater => x > t.floor() as i128,
        FlagRule::GreaterEqual => x >= t.ceil() as i128,
        FlagRule::Less => x < t.ceil() as i128,
        FlagRule::LessEqual => x <= t.floor() as i128,
        FlagRule::Equal => equal,
        FlagRule::NotEqual => !equal,
        FlagRule::Mask | FlagRule::BitClear | FlagRule::RunStart => {
            panic!("{rule:?} is not a comparison")
        }
    }
}

macro_rules! int_flags {
    ($($t:ty),*) => {$(
        impl FlagElement for $t {
            fn compare(self, rule: FlagRule, threshold: f64) -> bool {
                exact(self as i128, rule, threshold)
            }
            fn bits(self) -> u64 {
                self as i64 as u64
            }
        }
    )*};
}
int_flags!(i8, i16, i32, i64, u8, u16, u32);

impl FlagElement for u64 {
    fn compare(self, rule: FlagRule, threshold: f64) -> bool {
        exact(self as i128, rule, threshold)
    }
    fn bits(self) -> u64 {
        self
    }
}

impl FlagElement for f32 {
    fn compare(self, rule: FlagRule, threshold: f64) -> bool {
        ieee(self, rule, threshold as f32)
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

impl FlagElement for f64 {
    fn compare(self, rule: FlagRule, threshold: f64) -> bool {
        ieee(self, rule, threshold)
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

impl FlagElement for half::f16 {
    fn compare(self, rule: FlagRule, threshold: f64) -> bool {
        ieee(self, rule, half::f16::from_f32(threshold as f32))
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

impl FlagElement for half::bf16 {
    fn compare(self, rule: FlagRule, threshold: f64) -> bool {
        ieee(self, rule, half::bf16::from_f32(threshold as f32))
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

/// The flags of `Flags::Compare { rule, threshold }` over `values`.
pub fn compare_flags<T: FlagElement>(values: &[T], rule: FlagRule, threshold: f64) -> Vec<bool> {
    values.iter().map(|&v| v.compare(rule, threshold)).collect()
}

/// The flags of `Flags::BitClear { bit }` over integer `values`: bit `bit` is 0.
pub fn bit_clear_flags<T: FlagElement>(values: &[T], bit: u32) -> Vec<bool> {
    values.iter().map(|&v| (v.bits() >> bit) & 1 == 0).collect()
}

/// The flags of `Flags::RunStarts` over `[rows, len]` rows: each row's first element and
/// every element unequal to the one before it in sieve's order (NaNs equal, -0.0 == +0.0).
pub fn run_start_flags<T: crate::sort::reference::SortKey>(values: &[T], len: usize) -> Vec<bool> {
    (0..values.len())
        .map(|i| i % len == 0 || T::order(&values[i - 1], &values[i]).is_ne())
        .collect()
}
